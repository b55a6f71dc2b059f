"""The eval and sweep reports: what each shows, built from the JSON document alone.

Every format reads only the document the evaluation library built (the one
``--format json`` prints), through one :class:`~tooldisc.reports.blocks.Report`, so
the formats cannot disagree. Output is a pure function of that document — no clock,
no temp paths, no timings unless the document holds them — so reports are
byte-identical across runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Chart, Lines, Report, Table, numeric, table

# Measures the per-slice tables show (the slice documents hold all of them).
_SLICE_SHOWN = ("hit", "MRR", "nDCG", "forbidden", "no_match_success", "false_abstention", "avg_k")
_COUNTS = ("avg_k", "schema_tokens", "latency_p50", "latency_p95")
MISS_HEADERS = ("id", "kind", "query", "expected", "got", "forbidden offered")


def fmt(value: float | None, name: str = "") -> str:
    """A measure value for people: 4 decimals for rates, 2 for counts, n/a when unmeasured."""
    if value is None:
        return "n/a"
    base = name.split("@", 1)[0]
    if base in _COUNTS:
        return f"{value:.2f}"
    return f"{value:.4f}"


def delta_text(delta: float | None, low: float | None, high: float | None, measure: str, *,
               ci: bool = False) -> str:
    """``-0.0900 [-0.1300, -0.0500]`` (``ci``: ``-0.0900, 95 % CI [...]``); 3 decimals for counts."""
    if delta is None:
        return "n/a"
    digits = 3 if measure.split("@", 1)[0] in _COUNTS else 4
    text = f"{delta:+.{digits}f}"
    if low is None or high is None:
        return text
    return f"{text}{', 95 % CI' if ci else ''} [{low:+.{digits}f}, {high:+.{digits}f}]"


def describe_context(ctx: Mapping[str, Any]) -> str:
    """One line naming the context an eval used (DESIGN §5: output says which)."""
    if ctx.get("default"):
        return (f"default — every role ({len(ctx['roles'])}) and permission ({len(ctx['permissions'])}) "
                f"the catalog names, tenant {ctx.get('tenant')!r}, mode {ctx.get('mode')}")
    roles = ", ".join(ctx.get("roles") or []) or "none"
    forced = f", forced {', '.join(ctx['forced'])}" if ctx.get("forced") else ""
    return (f"tenant {ctx.get('tenant')!r}, roles {roles}, {len(ctx.get('permissions') or [])} permission(s), "
            f"mode {ctx.get('mode')}{forced}")


def k_text(doc: Mapping[str, Any]) -> str:
    if doc.get("k") == "auto":
        return f"K=auto (measures @ the adaptive cap {doc['cutoff']}; avg_k is the K used)"
    return f"K={doc.get('k')}"


def _header_lines(doc: Mapping[str, Any]) -> list[str]:
    cat, gold, cfg = doc["catalog"], doc["gold"], doc["config"]
    lines = [
        f"{doc['queries']} queries ({doc['matched']} matched, {doc.get('no_match', 0)} no-match), {k_text(doc)}",
        f"context: {describe_context(doc['context'])}",
        f"catalog: {cat['source']} ({cat['tools']} tools, version {cat.get('version')}, hash {cat['hash'][:16]})",
        f"gold: {gold['source']} (dataset {gold.get('dataset_version')})",
        f"config: {cfg['source']} (hash {cfg['hash']})",
    ]
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    return lines


def _slice_columns(slice_doc: Mapping[str, Any]) -> list[str]:
    first = next(iter(slice_doc.values()))
    return [m for m in first["metrics"] if m.split("@", 1)[0] in _SLICE_SHOWN]


def miss_rows(misses: list[Mapping[str, Any]]) -> list[list[str]]:
    """One row per miss; the last column names the forbidden tools that query was offered."""
    return [[m["id"], m["kind"], m["query"], ", ".join(m["expected"]) or "(none)",
             ", ".join(m["got"]) or "(empty)", ", ".join(m.get("forbidden_offered") or []) or "–"]
            for m in misses]


def _miss_title(doc: Mapping[str, Any]) -> str:
    counts = doc["miss_counts"]
    total = sum(counts.values())
    parts = ", ".join(f"{k} {v}" for k, v in counts.items())
    return f"Worst misses ({len(doc['misses'])} of {total}: {parts})"


def _tokens(summary: Mapping[str, Any]) -> str:
    return f"{summary['mean']:.1f} / {summary['p50']:.0f} / {summary['p95']:.0f}"


def _percent(value: float | None) -> str:
    """A saving for people: ``28.3% fewer`` or, when the strategy costs more, ``22.4% more``."""
    if value is None:
        return "n/a"
    return f"{value * 100:.1f}% fewer" if value >= 0 else f"{-value * 100:.1f}% more"


def _schema_blocks(schemas: Mapping[str, Any]) -> list[Any]:
    """The ``schemas`` section (``eval --schemas``), one column per strategy so it fits a terminal."""
    cols = list(schemas["strategies"].values())
    base = schemas["baseline"]
    rows = [
        ["requests", *[str(s["requests"]) for s in cols]],
        ["with a search call", *[str(s["requests_with_search"]) for s in cols]],
        *[[f"{part} tokens (mean / p50 / p95)", *[_tokens(s[part]) for s in cols]]
          for part in ("initial", "incremental", "wire")],
        [f"wire tokens vs {base}", *["baseline" if name == base else _percent(s["wire_saving"])
                                     for name, s in schemas["strategies"].items()]],
    ]
    title = f"Schema tokens per request (full K={schemas['k_full']} vs progressive K={schemas['k_initial']})"
    return [table(["per request", *schemas["strategies"]], rows, title, align=numeric(1, len(cols))),
            Lines((schemas["method"], f"tokens: {schemas['token_model']}"))]


def eval_report(doc: Mapping[str, Any]) -> Report:
    """Header, every measure, a per-slice chart (HTML), one table per slice, the worst misses."""
    blocks: list[Any] = [Lines(tuple(_header_lines(doc))),
                         table(["measure", "value"], [[m, fmt(v, m)] for m, v in doc["metrics"].items()],
                               "Measures", align=numeric(1, 1))]
    cutoff = doc["cutoff"]
    for i, (name, slice_doc) in enumerate(doc["by"].items()):
        if i == 0:
            points = tuple({"slice": value, "measure": m, "value": s["metrics"][m]}
                           for value, s in slice_doc.items() for m in (f"hit@{cutoff}", f"nDCG@{cutoff}")
                           if s["metrics"].get(m) is not None)
            if points:
                blocks.append(Chart("bar", points, x="slice", y="value", color="measure", y_title="value",
                                    title=f"hit@{cutoff} and nDCG@{cutoff} by {name}"))
        cols = _slice_columns(slice_doc)
        rows = [[value, s["queries"], *[fmt(s["metrics"][c], c) for c in cols]] for value, s in slice_doc.items()]
        blocks.append(table([name, "queries", *cols], rows, f"By {name}", align=numeric(1, 1 + len(cols))))
    blocks.append(table(MISS_HEADERS, miss_rows(doc["misses"]), _miss_title(doc)))
    if "schemas" in doc:
        blocks += _schema_blocks(doc["schemas"])
    return Report("tooldisc eval", tuple(blocks))


# --- sweep -----------------------------------------------------------------------

_SWEEP_COLUMNS = ("hit", "complete", "recall", "MRR", "P", "nDCG", "forbidden", "avg_k", "schema_tokens")
_SWEEP_HEADERS = ("K", "hit@K", "complete@K", "recall@K", "MRR@K", "P@K", "nDCG@K", "forbidden@K", "avg_k",
                  "schema_tokens")


def _sweep_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for r in doc["rows"]:
        k, m = r["k"], r["metrics"]
        values = [m.get(f"{c}@{k}", m.get(c)) for c in _SWEEP_COLUMNS]
        rows.append([str(k), *[fmt(v, c) for v, c in zip(values, _SWEEP_COLUMNS, strict=True)]])
    return rows


def sweep_report(doc: Mapping[str, Any]) -> Report:
    """Every K read off one ranking: quality and schema tokens against K, and the table."""
    quality, tokens = [], []
    for r in doc["rows"]:
        k, m = r["k"], r["metrics"]
        quality += [{"K": k, "measure": f"{name}@K", "value": m[f"{name}@{k}"]}
                    for name in ("hit", "nDCG") if m.get(f"{name}@{k}") is not None]
        if m.get("schema_tokens") is not None:
            tokens.append({"K": k, "tokens": m["schema_tokens"]})
    blocks: list[Any] = [Lines((
        f"{doc['queries']} queries ({doc['matched']} matched); one ranking {doc['depth']} deep, every K cut from it",
        f"context: {describe_context(doc['context'])}",
        f"schema tokens: {doc['schema_tokens_method']}",
        *[f"note: {n}" for n in doc.get("notes", [])]))]
    if quality:
        blocks.append(Chart("line", tuple(quality), x="K", y="value", color="measure", y_title="value",
                            title="hit and nDCG vs K"))
    if tokens:
        blocks.append(Chart("line", tuple(tokens), x="K", y="tokens", y_title="tokens",
                            title="schema tokens per offer vs K (estimated)"))
    blocks.append(Table(_SWEEP_HEADERS, tuple(map(tuple, _sweep_rows(doc))), "K sweep",
                        align=numeric(0, len(_SWEEP_HEADERS))))
    return Report("tooldisc sweep", tuple(blocks))
