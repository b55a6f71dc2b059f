"""The reports of the commands that print one run's result: ``discover``, ``plan validate``, ``learn``, ``bench``,
``canary simulate``.

Each builder takes the document the command prints with ``--format json`` (discover's
with its figures unrounded: the table has always formatted them from the engine's
floats) and says what its table shows, so Markdown and HTML come for free. Their
terminal layout predates the report blocks and is kept byte for byte: no title line
(``terminal_title=False``), rich tables whose cells end in "…" rather than fold, and
``learn``'s and ``canary simulate``'s plain, unwrapped lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Block, Lines, Paragraph, Report, Table, table
from tooldisc.reports.escape import visible

# --------------------------------------------------------------------------- discover


def context_line(context: Mapping[str, Any]) -> str:
    """The effective context (``Context.to_dict()``) in one line, saying plainly what is absent.

    A partial context (``--role warehouse`` alone) has no permissions and no tenant,
    which silently narrows the offer; this line makes that visible. Tenant, roles and
    permissions come from a context file or flags, so each is escaped here, whatever
    prints the line.
    """
    tenant = visible(repr(context["tenant"]))
    if context["default"]:
        return (f"context: default — every role ({len(context['roles'])}) and permission "
                f"({len(context['permissions'])}) the catalog names, tenant {tenant}, mode {visible(context['mode'])}")

    def listed(values: list[str], none: str) -> str:
        return ", ".join(visible(v) for v in sorted(values)) if values else none

    return (f"context: tenant {tenant}" if context["tenant"] else "context: no tenant") + (
        f"; roles {listed(context['roles'], 'none')}; permissions {listed(context['permissions'], 'none')}; "
        f"mode {visible(context['mode'])}"
        + (f"; forced {listed(context['forced'], 'none')}" if context["forced"] else ""))


def discover_report(doc: Mapping[str, Any]) -> Report:
    """The context, the ranked tools with each feature's contribution, why K, the hashes, and ``--explain``."""
    candidates = doc["candidates"]
    features = sorted({f for c in candidates for f in c["features"]})
    confidence = doc["confidence"]
    p = confidence.get("probability")
    shown = confidence["level"] + (f" {p:.2f}" if p is not None else "")
    ranked = table(["#", "tool", "score", *features],
                   [[str(i), c["name"], f"{c['score']:.4f}", *[f"{c['features'].get(f, 0.0):.4f}" for f in features]]
                    for i, c in enumerate(candidates, 1)],
                   f"{len(candidates)} of {doc['authorized_count']} authorized tools "
                   f"(K={doc['k']}, mutation {doc['mutation']}, confidence {shown})",
                   align=("right", "left", "right", *("right",) * len(features)), overflow="ellipsis",
                   boxed_empty=True, empty="No tool offered.")
    blocks: list[Block] = [Paragraph(context_line(doc["context"])), ranked, Paragraph(f"K: {doc['k_reason']}"),
                           Paragraph(f"catalog {doc['catalog_hash'][:16]}  offer {doc['offer_hash'][:16]}")]
    if "timings_ms" in doc:
        blocks.append(Paragraph("timings (ms): " + ", ".join(f"{k} {v:.3f}" for k, v in doc["timings_ms"].items())))
    if (ex := doc.get("explain")) is not None:
        lines = [f"explain {ex['tool']}: {ex['status']}" + (f" at {ex['step']}" if ex.get("step") else "")
                 + f" — {ex['reason']}"]
        if ex.get("features"):
            lines.append("  features: " + ", ".join(f"{k} {v:.4f}" for k, v in ex["features"].items()))
        if "matched_terms" in ex:
            lines.append("  matched terms: " + (", ".join(ex["matched_terms"]) or "none"))
        blocks += [Paragraph(""), Lines(tuple(lines))]
    return Report(f"discover: {doc['query']}", tuple(blocks), terminal_title=False)


# --------------------------------------------------------------------------- plan validate


def plan_report(doc: Mapping[str, Any]) -> Report:
    """Every finding of a plan, in check order, each with its stable code."""
    findings = doc["findings"]
    if doc["valid"]:
        return Report("plan validate", (Paragraph("plan valid: no findings"),), terminal_title=False)
    rows = [[str(i), f["code"], f["action"] or "-", f["where"], f["message"]] for i, f in enumerate(findings, 1)]
    return Report("plan validate", (
        table(["#", "code", "action", "where", "message"], rows, f"plan invalid: {len(findings)} finding(s)",
              overflow="ellipsis", flagged=frozenset((i, 1) for i in range(len(rows)))),), terminal_title=False)


# --------------------------------------------------------------------------- learn

_LEARNED_PARTS = ("expansions", "affinity", "ranker", "clauses", "abstention", "mutation")


def learn_report(doc: Mapping[str, Any]) -> Report:
    """What each learned part gained on held-out folds, and whether it was kept (``doc["report"]``)."""
    report = doc["report"]
    lines = [f"{report['requests']} requests: {report['matched']} with a tool, {report['no_tool']} needing none; "
             f"{report['folds']} folds, parts kept at p < {report['alpha']}"]
    for part in _LEARNED_PARTS:
        info = report.get(part)
        if info is None:
            lines.append(f"  {part:<11} off")
            continue
        state = "kept" if info.get("kept") else "not kept"
        if "p" in info:
            detail = (f"{info['measure']} held out {info['without']:.4f} → {info['with']:.4f} "
                      f"({info['wins']} better, {info['losses']} worse, p={info['p']:.4g})")
        elif "after" in info:
            detail = (f"wider {info['before']['wider']} → {info['after']['wider']}, "
                      f"narrower {info['before']['narrower']} → {info['after']['narrower']}")
        else:
            detail = info.get("reason", "")
        lines.append(f"  {part:<11} {state:<9} {detail}")
        if part == "abstention" and "held_out" in info:
            h, d = info["held_out"], info["baseline"]
            lines.append(f"  {'':<11} {'':<9} no-match success {h['no_match_success']:.3f} at false abstention "
                         f"{h['false_abstention']:.4f} (without: {d['no_match_success']:.3f} at "
                         f"{d['false_abstention']:.4f})")
    return Report(f"tooldisc learn: {doc['out']}", (Lines(tuple(lines), wrap=False),), terminal_title=False)


# --------------------------------------------------------------------------- bench


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _s_x(seconds: float | None, ratio: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.3f}" + ("" if ratio is None else f" ({ratio:.1f}×)")


def bench_report(result: Mapping[str, Any]) -> Report:
    """tooldisc per size, then the baselines on the same queries, then what the hit column counts."""
    k = result["config"]["k"]
    hit = f"hit@{k}"
    main_rows, cmp_rows, refused = [], [], []
    for size in result["sizes"]:
        own = size["engines"]["tooldisc"]
        rss = own.get("rss_mb") or {}
        lat = own["latency_ms"]
        main_rows.append([f"{size['n_tools']:,}", f"{size.get('vocab_terms', 0):,}", f"{own['build_s']['median']:.3f}",
                          _mb(rss.get("process_peak")), _mb(rss.get("peak_growth")), _ms(lat["p50"]),
                          _ms(lat["p95"]), _ms(lat["p99"]), _rate(own.get("hit_at_k"))])
        cmp_rows.append([f"{size['n_tools']:,}", "tooldisc", f"{own['build_s']['median']:.3f}",
                         _mb(rss.get("peak_growth")), _ms(lat["p50"]), _ms(lat["p95"]), "1.00×",
                         _rate(own.get("hit_at_k"))])
        for name in ("rank_bm25", "bm25s"):
            eng = size["engines"].get(name) or {}
            if not eng.get("available"):
                cmp_rows.append(["", name, "—", "—", "—", "—", "—", eng.get("skipped", "skipped")])
                continue
            ratio = size["ratios"].get(name, {})
            cmp_rows.append(["", name, f"{eng['build_s']['median']:.3f}",
                             _mb((eng.get("rss_mb") or {}).get("peak_growth")), _ms(eng["latency_ms"]["p50"]),
                             _ms(eng["latency_ms"]["p95"]), _x(ratio.get("p95")), _rate(eng.get("hit_at_k"))])
        if size.get("refused_by_security") is not None:
            refused.append(f"{size['refused_by_security']:.0%} at {size['n_tools']:,} tools")
    blocks: list[Block] = [
        table(["tools", "index terms", "build (s)", "peak memory (MB)", "memory for the build (MB)", "p50 (ms)",
               "p95 (ms)", "p99 (ms)", hit], main_rows,
              "tooldisc discover: index build and time per query (warm; medians over repeats)",
              align=("right",) * 9, overflow="ellipsis", boxed_empty=True),
        table(["tools", "engine", "build (s)", "memory for the build (MB)", "p50 (ms)", "p95 (ms)", "p95 vs tooldisc",
               hit], cmp_rows, "the same queries through BM25 baselines",
              align=("right", "left", *("right",) * 6), overflow="ellipsis", boxed_empty=True),
    ]
    if any("from_file" in size for size in result["sizes"]):
        blocks.append(from_file_table(result["sizes"]))
    judged = ", ".join(f"{s['judged_queries']} of {s['n_queries']}" for s in result["sizes"]
                       if "judged_queries" in s and "n_queries" in s) or "none counted"
    notes = [f"{hit}: share of the judged queries ({judged}: those written for a tool) whose tool is among "
             f"the first {k} offered. Every engine ranks only the tools the query is authorized to see "
             "(tooldisc's security filter, default context); rank-bm25 and bm25s are masked to that set."]
    if refused:
        notes.append("Judged queries whose tool that filter refuses (so no engine can offer it): "
                     + ", ".join(refused) + ".")
    notes.append("p95 vs tooldisc: the baseline's p95 divided by tooldisc's (above 1: tooldisc is faster). "
                 "Peak memory: the whole process's peak from the first build to the last timed query (the "
                 "first query loads numba and the JIT's loops when they run); memory for the build: the "
                 "first build's peak minus the memory in use just before it.")
    notes.append(kernels_line(result["sizes"]))
    env = result["environment"]
    git = env.get("git") or {}
    notes.append(f"{env['cpu_count']} cores, load after {', '.join(f'{x:.2f}' for x in env.get('loadavg_after') or [])}; "
                 f"python {env['python']}, numpy {env['versions'].get('numpy')}; "
                 f"commit {str(git.get('commit', '?'))[:12]}{' (dirty)' if git.get('dirty') else ''}; "
                 f"{result['config']['queries']} queries × {result['config']['repeats']} repeats, K={k}")
    blocks += [Paragraph(n) for n in notes]
    return Report("tooldisc bench", tuple(blocks), terminal_title=False)


def from_file_table(sizes: list[dict[str, Any]]) -> Table:
    """The catalog as users meet it: from a file, in-process and as whole one-shot processes."""
    rows = []
    for size in sizes:
        f = size.get("from_file")
        if not f:
            continue
        forms = [("json", f.get("in_process_json"))]
        if f.get("in_process_yaml"):
            forms.append(("yaml", f["in_process_yaml"]))
        for fmt, own in forms:
            first = fmt == "json"
            rows.append([
                f"{size['n_tools']:,}" + ("" if first else " (YAML)"), f"{f['file_mb'][fmt]:,.1f}",
                _s_x(own["total_s"], own["ratio_to_in_memory_build"]), _mb(own["peak_mb"]),
                _s_x(f["discover_cold"]["wall_s"], f["discover_cold"]["ratio_to_in_memory_build"]) if first else "",
                _s_x(f["discover_warm"]["wall_s"], f["discover_warm"]["ratio_to_in_memory_build"]) if first else "",
                f"{_mb(f['discover_cold']['peak_mb'])} / {_mb(f['discover_warm']['peak_mb'])}" if first else "",
                _s_x(f["validate"]["wall_s"], f["validate"]["ratio_to_in_memory_build"]) if first else ""])
    return table(["tools", "file (MB)", "load+validate+build (s)", "peak (MB)", "discover cold (s)",
                  "discover warm (s)", "one-shot peak (MB)", "catalog validate (s)"], rows,
                 "from a file (medians; × = ratio to the in-memory build of the same size)",
                 align=("right",) * 8, overflow="ellipsis", boxed_empty=True)


def kernels_line(sizes: list[dict[str, Any]]) -> str:
    """Which form of the query loops each size ran (never a silent difference between runs)."""
    ran: dict[str, list[str]] = {}
    for size in sizes:
        engine = size["engines"]["tooldisc"]
        name = engine.get("kernels", "numpy")
        form = engine.get("kernels_form")
        name = f"{name} ({'ahead of time' if form == 'aot' else 'JIT'})" if name == "numba" and form else name
        ran.setdefault(name, []).append(f"{size['n_tools']:,}")
    parts = [f"{name} at {', '.join(n)} tools" for name, n in ran.items()]
    line = "Query loops (kernels): " + "; ".join(parts) + "."
    first = [(size["n_tools"], size["engines"]["tooldisc"].get("first_query")) for size in sizes]
    cold = [f"{f['ms']:,.0f} ms, +{f['rss_growth_mb'] or 0:,.0f} MB (process peak {_mb(f['process_peak_mb'])} MB) "
            f"at {n:,}" for n, f in first if f]
    if cold:
        line += (" First query of the process (not in the build; with numba's JIT it loads numba and the loops): "
                 + "; ".join(cold) + ".")
    if not any(name.startswith("numba") for name in ran):
        line += (" The compiled loops need the fast extra (pip install 'tooldisc[fast]') and a catalog of at least "
                 "retrieval.min_tools tools, or --backend numba; 'tooldisc kernels build' compiles them ahead of "
                 "time (no numba at run time).")
    return line


# --------------------------------------------------------------------------- canary simulate


def canary_simulate_report(doc: Mapping[str, Any]) -> Report:
    """Each salt's arm counts and shares with Wilson intervals, its sample-ratio test, and two salts' independence."""
    lines = [f"{doc['ids']} ids ({doc['source']})"]
    for s in doc["salts"]:
        lines.append(f"salt {s['salt']!r} at {s['percent']:g}%: expected experiment share "
                     f"{s['expected_experiment_share']:.4f}")
        for arm in ("control", "experiment"):
            sh = s["shares"][arm]
            lines.append(f"  {arm:<10} {s['counts'][arm]:>12,}  {sh['share']:.6f} [{sh['low']:.6f}, {sh['high']:.6f}]")
        lines.append(f"  sample ratio chi2 {s['chi_square']:.4f}, p = {s['p_value']:.4g}")
    ind = doc["independence"]
    if ind is not None and ind.get("p_value") is not None:
        lines.append(f"independence of the two assignments: chi2 {ind['chi_square']:.4f}, "
                     f"p = {ind['p_value']:.4g}; both-experiment {ind['table']['experiment/experiment']:,} "
                     f"(expected {ind['both_experiment_expected']:,})")
    return Report("canary simulate", (Lines(tuple(lines), wrap=False),), terminal_title=False)
