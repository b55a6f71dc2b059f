"""Rendering eval, sweep, compare and gate documents: terminal tables, Markdown, HTML.

Every renderer reads only the JSON document the evaluation library built (the same
one ``--format json`` prints), so the formats cannot disagree. Output is a pure
function of that document — no clock, no paths of temp files, no timings unless the
document holds them — so reports are byte-identical across runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldisc.reports import html
from tooldisc.reports.charts import bar_chart, esc, line_chart

# Measures the per-slice tables show (the slice documents hold all of them).
_SLICE_SHOWN = ("hit", "MRR", "nDCG", "forbidden", "no_match_success", "false_abstention", "avg_k")
_COUNTS = ("avg_k", "schema_tokens", "latency_p50", "latency_p95")


def fmt(value: float | None, name: str = "") -> str:
    """A measure value for people: 4 decimals for rates, 2 for counts, n/a when unmeasured."""
    if value is None:
        return "n/a"
    base = name.split("@", 1)[0]
    if base in _COUNTS:
        return f"{value:.2f}"
    return f"{value:.4f}"


def describe_context(ctx: Mapping[str, Any]) -> str:
    """One line naming the context an eval used (DESIGN §5: output says which)."""
    if ctx.get("default"):
        return (f"default — every role ({len(ctx['roles'])}) and permission ({len(ctx['permissions'])}) "
                f"the catalog names, tenant {ctx.get('tenant')!r}, mode {ctx.get('mode')}")
    roles = ", ".join(ctx.get("roles") or []) or "none"
    forced = f", forced {', '.join(ctx['forced'])}" if ctx.get("forced") else ""
    return (f"tenant {ctx.get('tenant')!r}, roles {roles}, {len(ctx.get('permissions') or [])} permission(s), "
            f"mode {ctx.get('mode')}{forced}")


def _k_text(doc: Mapping[str, Any]) -> str:
    if doc.get("k") == "auto":
        return f"K=auto (measures @ the adaptive cap {doc['cutoff']}; avg_k is the K used)"
    return f"K={doc.get('k')}"


def _header_lines(doc: Mapping[str, Any]) -> list[str]:
    cat, gold, cfg = doc["catalog"], doc["gold"], doc["config"]
    lines = [
        f"{doc['queries']} queries ({doc['matched']} matched, {doc.get('no_match', 0)} no-match), {_k_text(doc)}",
        f"context: {describe_context(doc['context'])}",
        f"catalog: {cat['source']} ({cat['tools']} tools, version {cat.get('version')}, hash {cat['hash'][:16]})",
        f"gold: {gold['source']} (dataset {gold.get('dataset_version')})",
        f"config: {cfg['source']} (hash {cfg['hash']})",
    ]
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    return lines


def _slice_columns(doc: Mapping[str, Any], slice_doc: Mapping[str, Any]) -> list[str]:
    first = next(iter(slice_doc.values()))
    return [m for m in first["metrics"] if m.split("@", 1)[0] in _SLICE_SHOWN]


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _miss_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    return [[m["id"], m["kind"], m["query"], ", ".join(m["expected"]) or "(none)",
             ", ".join(m["got"]) or "(empty)"] for m in doc["misses"]]


def _miss_title(doc: Mapping[str, Any]) -> str:
    counts = doc["miss_counts"]
    total = sum(counts.values())
    parts = ", ".join(f"{k} {v}" for k, v in counts.items())
    return f"Worst misses ({len(doc['misses'])} of {total}: {parts})"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An HTML table whose cells go through :func:`esc` (no literal URL survives)."""
    return html.table(headers, [[esc(c) for c in row] for row in rows], raw=True)


def page(title: str, sections: Sequence[str]) -> str:
    """The standalone page: shared CSS from :mod:`tooldisc.reports.html`, a heading, the sections."""
    return html.page(title, f"<h1>{esc(title)}</h1>\n" + "\n".join(sections))


# --- eval ------------------------------------------------------------------------

def _tokens(summary: Mapping[str, Any]) -> str:
    return f"{summary['mean']:.1f} / {summary['p50']:.0f} / {summary['p95']:.0f}"


def _schema_headers(schemas: Mapping[str, Any]) -> list[str]:
    return ["per request", *schemas["strategies"]]


def _percent(value: float | None) -> str:
    """A saving for people: ``28.3% fewer`` or, when the strategy costs more, ``22.4% more``."""
    if value is None:
        return "n/a"
    return f"{value * 100:.1f}% fewer" if value >= 0 else f"{-value * 100:.1f}% more"


def _schema_title(schemas: Mapping[str, Any]) -> str:
    return f"Schema tokens per request (full K={schemas['k_full']} vs progressive K={schemas['k_initial']})"


def _schema_rows(schemas: Mapping[str, Any]) -> list[list[str]]:
    """The ``schemas`` section (``eval --schemas``) with one column per strategy, so it fits a terminal."""
    cols = list(schemas["strategies"].values())
    base = schemas["baseline"]
    return [
        ["requests", *[str(s["requests"]) for s in cols]],
        ["with a search call", *[str(s["requests_with_search"]) for s in cols]],
        *[[f"{part} tokens (mean / p50 / p95)", *[_tokens(s[part]) for s in cols]]
          for part in ("initial", "incremental", "wire")],
        [f"wire tokens vs {base}", *["baseline" if name == base else _percent(s["wire_saving"])
                                     for name, s in schemas["strategies"].items()]],
    ]


def _schema_notes(schemas: Mapping[str, Any]) -> list[str]:
    return [schemas["method"], f"tokens: {schemas['token_model']}"]


def eval_markdown(doc: Mapping[str, Any]) -> str:
    """The eval document as Markdown (a CI step summary or a PR comment)."""
    parts = ["# tooldisc eval", "", *[f"- {line}" for line in _header_lines(doc)], "", "## Measures", ""]
    parts.append(_md_table(["measure", "value"], [[m, fmt(v, m)] for m, v in doc["metrics"].items()]))
    for name, slice_doc in doc["by"].items():
        cols = _slice_columns(doc, slice_doc)
        rows = [[value, s["queries"], *[fmt(s["metrics"][c], c) for c in cols]] for value, s in slice_doc.items()]
        parts += ["", f"## By {name}", "", _md_table([name, "queries", *cols], rows)]
    parts += ["", f"## {_miss_title(doc)}", ""]
    parts.append(_md_table(["id", "kind", "query", "expected", "got"], _miss_rows(doc)) if doc["misses"] else "None.")
    if "schemas" in doc:
        parts += ["", f"## {_schema_title(doc['schemas'])}", "", _md_table(_schema_headers(doc["schemas"]), _schema_rows(doc["schemas"])),
                  "", *[f"- {line}" for line in _schema_notes(doc["schemas"])]]
    return "\n".join(parts) + "\n"


def eval_html(doc: Mapping[str, Any]) -> str:
    """One standalone HTML file: header, measures, a per-slice chart, slice tables, misses."""
    sections = ["<ul class=\"note\">" + "".join(f"<li>{esc(line)}</li>" for line in _header_lines(doc)) + "</ul>"]
    sections.append("<h2>Measures</h2>")
    sections.append(table(["measure", "value"], [[m, fmt(v, m)] for m, v in doc["metrics"].items()]))
    cutoff = doc["cutoff"]
    for name, slice_doc in doc["by"].items():
        cols = _slice_columns(doc, slice_doc)
        if name == next(iter(doc["by"])):
            rows = [{"slice": value, "measure": m, "value": s["metrics"][m]}
                    for value, s in slice_doc.items() for m in (f"hit@{cutoff}", f"nDCG@{cutoff}")
                    if s["metrics"].get(m) is not None]
            if rows:
                sections.append('<div class="chart">' + bar_chart(
                    rows, x="slice", y="value", color="measure", title=f"hit@{cutoff} and nDCG@{cutoff} by {name}",
                    y_title="value") + "</div>")
        rows_t = [[value, s["queries"], *[fmt(s["metrics"][c], c) for c in cols]] for value, s in slice_doc.items()]
        sections.append(f"<h2>By {esc(name)}</h2>")
        sections.append(table([name, "queries", *cols], rows_t))
    sections.append(f"<h2>{esc(_miss_title(doc))}</h2>")
    sections.append(table(["id", "kind", "query", "expected", "got"], _miss_rows(doc)) if doc["misses"]
                    else "<p>None.</p>")
    if "schemas" in doc:
        sections.append(f"<h2>{esc(_schema_title(doc['schemas']))}</h2>")
        sections.append(table(_schema_headers(doc["schemas"]), _schema_rows(doc["schemas"])))
        sections.append("<ul class=\"note\">" + "".join(f"<li>{esc(line)}</li>" for line in _schema_notes(doc["schemas"]))
                        + "</ul>")
    return page("tooldisc eval", sections)


def print_eval(doc: Mapping[str, Any], console: Any) -> None:
    """Terminal tables: every measure, one table per slice field, the worst misses."""
    from rich.table import Table

    for line in _header_lines(doc):
        console.print(line)
    t = Table(title="Measures")
    t.add_column("measure")
    t.add_column("value", justify="right")
    for m, v in doc["metrics"].items():
        t.add_row(m, fmt(v, m))
    console.print(t)
    for name, slice_doc in doc["by"].items():
        cols = _slice_columns(doc, slice_doc)
        st = Table(title=f"By {name}")
        st.add_column(name)
        st.add_column("queries", justify="right")
        for c in cols:
            st.add_column(c, justify="right")
        for value, s in slice_doc.items():
            st.add_row(value, str(s["queries"]), *[fmt(s["metrics"][c], c) for c in cols])
        console.print(st)
    mt = Table(title=_miss_title(doc))
    for col in ("id", "kind", "query", "expected", "got"):
        mt.add_column(col, overflow="fold")
    for row in _miss_rows(doc):
        mt.add_row(*row)
    console.print(mt)
    if "schemas" in doc:
        tt = Table(title=_schema_title(doc["schemas"]))
        for i, col in enumerate(_schema_headers(doc["schemas"])):
            tt.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
        for row in _schema_rows(doc["schemas"]):
            tt.add_row(*row)
        console.print(tt)
        for line in _schema_notes(doc["schemas"]):
            console.print(f"note: {line}")


# --- sweep -----------------------------------------------------------------------

_SWEEP_COLUMNS = ("hit", "complete", "recall", "MRR", "P", "nDCG", "forbidden", "avg_k", "schema_tokens")


def _sweep_rows(doc: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    headers = ["K", "hit@K", "complete@K", "recall@K", "MRR@K", "P@K", "nDCG@K", "forbidden@K", "avg_k",
               "schema_tokens"]
    rows = []
    for r in doc["rows"]:
        k, m = r["k"], r["metrics"]
        values = [m.get(f"{c}@{k}", m.get(c)) for c in _SWEEP_COLUMNS]
        rows.append([str(k), *[fmt(v, c) for v, c in zip(values, _SWEEP_COLUMNS, strict=True)]])
    return headers, rows


def sweep_markdown(doc: Mapping[str, Any]) -> str:
    headers, rows = _sweep_rows(doc)
    lines = ["# tooldisc sweep", "", f"- {doc['queries']} queries ({doc['matched']} matched); one ranking "
             f"{doc['depth']} deep, every K cut from it",
             f"- context: {describe_context(doc['context'])}",
             f"- schema tokens: {doc['schema_tokens_method']}",
             *[f"- note: {n}" for n in doc.get("notes", [])], "", _md_table(headers, rows)]
    return "\n".join(lines) + "\n"


def _sweep_series(doc: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    quality, tokens = [], []
    for r in doc["rows"]:
        k, m = r["k"], r["metrics"]
        for name in ("hit", "nDCG"):
            if m.get(f"{name}@{k}") is not None:
                quality.append({"K": k, "measure": f"{name}@K", "value": m[f"{name}@{k}"]})
        if m.get("schema_tokens") is not None:
            tokens.append({"K": k, "tokens": m["schema_tokens"]})
    return quality, tokens


def sweep_html(doc: Mapping[str, Any]) -> str:
    headers, rows = _sweep_rows(doc)
    quality, tokens = _sweep_series(doc)
    sections = [f"<p class=\"note\">{doc['queries']} queries; one ranking {doc['depth']} deep; "
                f"context: {esc(describe_context(doc['context']))}</p>"]
    sections += [f'<p class="note">note: {esc(n)}</p>' for n in doc.get("notes", [])]
    if quality:
        sections.append('<div class="chart">' + line_chart(quality, x="K", y="value", color="measure",
                                                           title="hit and nDCG vs K", y_title="value") + "</div>")
    if tokens:
        sections.append('<div class="chart">' + line_chart(tokens, x="K", y="tokens",
                                                           title="schema tokens per offer vs K (estimated)",
                                                           y_title="tokens") + "</div>")
        sections.append(f'<p class="note">schema tokens: {esc(doc["schema_tokens_method"])}</p>')
    sections.append(table(headers, rows))
    return page("tooldisc sweep", sections)


def print_sweep(doc: Mapping[str, Any], console: Any) -> None:
    from rich.table import Table

    headers, rows = _sweep_rows(doc)
    console.print(f"{doc['queries']} queries; one ranking {doc['depth']} deep, every K cut from it")
    console.print(f"context: {describe_context(doc['context'])}")
    for n in doc.get("notes", []):
        console.print(f"note: {n}")
    t = Table(title="K sweep")
    for h in headers:
        t.add_column(h, justify="right")
    for row in rows:
        t.add_row(*row)
    console.print(t)
    console.print(f"schema tokens: {doc['schema_tokens_method']}")


# --- compare ---------------------------------------------------------------------

_CMP_HEADERS = ["measure", "n", "A", "B", "delta", "win/tie/loss", "p (rand, Holm)", "p (t, Holm)", "verdict"]


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _compare_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for r in doc["measures"]:
        delta = "n/a" if r["delta"] is None else f"{r['delta']:+.4f}"
        rows.append([r["measure"], str(r["n"]), fmt(r["a"], r["measure"]), fmt(r["b"], r["measure"]), delta,
                     f"{r['wins']}/{r['ties']}/{r['losses']}", _p(r["p_randomization_holm"]),
                     _p(r["p_ttest_holm"]), r["verdict"]])
    return rows


def _compare_lines(doc: Mapping[str, Any]) -> list[str]:
    lines = [f"A: {doc['a']['source']} (hash {doc['a']['hash']})", f"B: {doc['b']['source']} (hash {doc['b']['hash']})",
             f"{doc['queries']} queries ({doc['matched']} matched), {_k_text(doc)}; "
             f"paired randomization test ({doc['permutations']} sign flips, seed {doc['seed']}) and paired t-test, "
             f"Holm-corrected across measures, alpha {doc['alpha']}; wins count queries where B is better",
             f"context: {describe_context(doc['context'])}"]
    if doc["too_small"]:
        lines.append("too small to tell (fewer than 30 queries, or fewer than 20 that moved): "
                     + ", ".join(doc["too_small"]))
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    return lines


def _changed_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    return [[c["id"], c["query"], ", ".join(c["expected"]) or "(none)", ", ".join(c["a"]) or "(empty)",
             ", ".join(c["b"]) or "(empty)", fmt(c["ndcg_a"]), fmt(c["ndcg_b"])] for c in doc["changed"]]


_CHANGED_HEADERS = ["id", "query", "expected", "A got", "B got", "nDCG A", "nDCG B"]


def compare_markdown(doc: Mapping[str, Any]) -> str:
    parts = ["# tooldisc compare", "", *[f"- {line}" for line in _compare_lines(doc)], "",
             _md_table(_CMP_HEADERS, _compare_rows(doc)), "",
             f"## Queries that changed ({len(doc['changed'])} of {doc['changed_count']})", ""]
    parts.append(_md_table(_CHANGED_HEADERS, _changed_rows(doc)) if doc["changed"] else "None.")
    return "\n".join(parts) + "\n"


def print_compare(doc: Mapping[str, Any], console: Any) -> None:
    from rich.table import Table

    for line in _compare_lines(doc):
        console.print(line)
    t = Table(title="B vs A")
    for h in _CMP_HEADERS:
        t.add_column(h, justify="left" if h in ("measure", "verdict") else "right")
    for row in _compare_rows(doc):
        t.add_row(*row)
    console.print(t)
    ct = Table(title=f"Queries that changed ({len(doc['changed'])} of {doc['changed_count']})")
    for h in _CHANGED_HEADERS:
        ct.add_column(h, overflow="fold")
    for row in _changed_rows(doc):
        ct.add_row(*row)
    console.print(ct)


# --- gate ------------------------------------------------------------------------


def gate_markdown(doc: Mapping[str, Any]) -> str:
    """A CI step summary: the verdict first, then one row per threshold."""
    verdict = "passed" if doc["passed"] else "FAILED"
    failed = sum(1 for c in doc["checks"] if not c["passed"])
    rows = [["pass" if c["passed"] else "FAIL", c["measure"], (">= " if c["bound"] == "min" else "<= ")
             + f"{c['threshold']:g}", fmt(c["actual"], c["measure"])] for c in doc["checks"]]
    head = f"## tooldisc gate: {verdict}"
    summary = f"{len(doc['checks']) - failed} of {len(doc['checks'])} thresholds hold"
    source = f" (eval results: {doc['source']})" if doc.get("source") else ""
    return "\n".join([head, "", summary + source, "", _md_table(["result", "measure", "threshold", "actual"], rows)]) + "\n"


def print_gate(doc: Mapping[str, Any], console: Any) -> None:
    from rich.table import Table

    t = Table(title="gate: " + ("passed" if doc["passed"] else "FAILED"))
    for h in ("result", "measure", "threshold", "actual"):
        t.add_column(h)
    for c in doc["checks"]:
        t.add_row("pass" if c["passed"] else "FAIL", c["measure"],
                  (">= " if c["bound"] == "min" else "<= ") + f"{c['threshold']:g}", fmt(c["actual"], c["measure"]))
    console.print(t)
