"""Canary verdict reports: JSON for machines, Markdown and standalone HTML for people.

Every format comes from one dict (:func:`tooldisc.canary.document.verdict_dict`, which ``--format json``
prints) through one :func:`verdict_report`, with sorted keys, rounded numbers and no
clock, so a report is byte-identical across runs. Reports carry only aggregates: no
ids, no query text, no file paths. The shadow profile's verdict has the same shape.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tooldisc.canary.document import RATES, SEGMENT_RATES
from tooldisc.reports.blocks import Details, Fields, Paragraph, Report, Table, numeric, table
from tooldisc.reports.canary_charts import forest, sequential
from tooldisc.reports.canary_decision import canary_decision
from tooldisc.reports.canary_words import compact, pct, reason_rows

METRIC_HEADERS = ("metric", "outcome", "experiment", "control", "interval", "margin", "still needed")
SEGMENT_HEADERS = ("segment", "requests (exp / ctrl)", "task success", "tool execution success",
                   "discovery miss", "fallback", "mean latency ms", "shown worse")
_SEGMENT_COLUMN = {"task_success": 2, "tool_execution_success": 3, "discovery_miss": 4, "fallback": 5,
                   "latency": 6}


def _metric_value(side: Any) -> str:
    if not isinstance(side, dict):
        return "–"
    if "rate" in side:
        return f"{side['rate']:.4f} ({side['successes']}/{side['n']})"
    vals = [f"{k} {v}" for k, v in sorted(side.items()) if k.startswith("p") and v is not None]
    return ", ".join(vals) or "–"


def _needed_text(m: dict[str, Any]) -> str:
    need = m.get("needed")
    if m["outcome"] != "inconclusive" or not need:
        return ""
    r = need.get("requests_per_arm")
    if not r:
        return "not reachable if the observed difference holds"
    text = f"+{r['experiment']:,} experiment, +{r['control']:,} control"
    if need.get("hours") is not None:
        text += f" (~{need['hours']:g} h"
        nxt = need.get("next_step") or {}
        if nxt.get("hours") is not None:
            text += f"; ~{nxt['hours']:g} h at {pct(nxt['percent'])}"
        text += ")"
    return text


def _interval_text(iv: dict[str, Any] | None) -> str:
    if not iv or iv.get("low") is None or iv.get("high") is None:
        return "–"
    if iv["kind"] == "ratio":
        return f"{iv['low']:.3f} to {iv['high']:.3f}"
    if iv["kind"] == "difference_ms":
        return f"{iv['low']:+.1f} to {iv['high']:+.1f} ms"
    return f"{iv['low'] * 100:+.2f} to {iv['high'] * 100:+.2f} points"


def metric_rows(d: dict[str, Any]) -> list[list[str]]:
    """Guarded metrics: outcome, both arms, the interval, margin and what an inconclusive one still needs."""
    rows = []
    for m in d.get("metrics", []):
        kind, value = next(iter(m["margin"].items()))
        margin = f"{value:g} absolute" if kind == "absolute" else f"{value:.0%} {kind}"
        rows.append([m["name"], m["outcome"], _metric_value(m.get("experiment")),
                     _metric_value(m.get("control")), _interval_text(m.get("interval")), margin,
                     _needed_text(m)])
    return rows


def _pair(rates: dict[str, Any], name: str) -> str:
    e, c = ((rates.get(a) or {}).get(name) or {} for a in ("experiment", "control"))
    return f"{e['rate']:.4f} vs {c['rate']:.4f}" if e and c else "–"


def segment_rows(d: dict[str, Any], only_worse: bool = False) -> tuple[list[list[str]], frozenset[tuple[int, int]]]:
    """One row per segment value (experiment vs control per guarded rate), and the cells
    of what was shown worse there (each metric's cell and the "shown worse" cell)."""
    rows, flagged = [], set()
    for s in d.get("segments", []):
        if only_worse and not s["shown_worse"]:
            continue
        req, lat = s["requests"], s["mean_latency_ms"]
        le, lc = lat.get("experiment"), lat.get("control")
        for metric in s["shown_worse"]:
            flagged |= {(len(rows), _SEGMENT_COLUMN.get(metric, 7)), (len(rows), 7)}
        rows.append([f"{s['segment']}={s['value']}",
                     f"{req.get('experiment', 0):,} / {req.get('control', 0):,}",
                     *[_pair(s["rates"], r) for r in SEGMENT_RATES],
                     f"{le:.1f} vs {lc:.1f}" if le is not None and lc is not None else "–",
                     ", ".join(s["shown_worse"]) or "none"])
    return rows, frozenset(flagged)


def _segments_table(d: dict[str, Any], only_worse: bool = False, title: str | None = None) -> Table:
    rows, flagged = segment_rows(d, only_worse)
    return table(list(SEGMENT_HEADERS), rows, title, flagged=flagged,
                 empty="No segment is shown worse." if only_worse else "None.")


def _gates_table(d: dict[str, Any], title: str | None = "Gates") -> Table:
    return table(["gate", "status", "reason"], [[g["name"], g["status"], g["reason"]] for g in d["gates"]],
                 title, status=(1,))


def summary_report(d: dict[str, Any]) -> Report:
    """Compact, for CI step summaries: an H2 heading, the decision line, the gates, the
    guarded metrics and any segment shown worse; no JSON."""
    if d.get("profile") == "interleaving":
        from tooldisc.reports.interleave_report import interleave_summary

        return interleave_summary(d)
    blocks: list[Any] = [Paragraph(_context(d)), _gates_table(d, None)]
    if d.get("metrics"):
        blocks.append(table(list(METRIC_HEADERS), metric_rows(d)))
    if any(s["shown_worse"] for s in d.get("segments", [])):
        blocks.append(_segments_table(d, only_worse=True))
    return Report(f"Canary {d['verdict']}: {d['experiment']}", tuple(blocks), level=2,
                  decision=canary_decision(d))


def summary_markdown(d: dict[str, Any]) -> str:
    """The compact Markdown summary of a verdict document, as a CI step summary appends it."""
    from tooldisc.reports.markdown import write_markdown

    return write_markdown(summary_report(d)) + "\n"


def append_summary(path: str, d: dict[str, Any]) -> None:
    """Append the compact Markdown summary to ``path`` in one write (CI summaries append)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(summary_markdown(d))


def _fmt_rate(r: dict[str, Any] | None) -> str:
    if not r:
        return "–"
    return f"{r['rate']:.4f} [{r['low']:.4f}, {r['high']:.4f}] ({r['successes']}/{r['n']})"


def _title(d: dict[str, Any]) -> str:
    return f"Canary verdict ({d['profile']}): {d['experiment']}"


def _context(d: dict[str, Any]) -> str:
    """One line: where the rollout stands and what was judged."""
    parts = [f"{d['experiment']} at {pct(d['current_percent'])}" if d["current_percent"] is not None
             else f"{d['experiment']} ({d['profile']} profile)"]
    w = d["window"]
    if w["since"] or w["until"]:
        parts.append(f"window {w['since'] or '…'} to {w['until'] or '…'}")
    if w.get("hours") is not None:
        parts.append(f"{w['hours']:.1f} h of requests")
    if d["arms"]:
        req = {a: d["arms"][a]["requests"] for a in d["arms"]}
        parts.append(f"{sum(req.values()):,} requests ("
                     + ", ".join(f"{a} {n:,}" for a, n in sorted(req.items())) + ")")
    parts.append(f"{d['quarantined']:,} quarantined rows")
    return "; ".join(parts) + "."


def _arm_rows(d: dict[str, Any]) -> list[list[str]]:
    arms = d["arms"]
    names = sorted(arms)
    rows = [["requests", *[str(arms[a]["requests"]) for a in names]]]
    for rate in RATES:
        rows.append([rate, *[_fmt_rate(arms[a]["rates"].get(rate)) for a in names]])
    for q in sorted({k for a in names for k in arms[a]["latency_ms"]}):
        rows.append([f"latency {q} (ms)", *[str(arms[a]["latency_ms"].get(q, "–")) for a in names]])
    for f in ("unauthorized_candidate", "tenant_leak", "permission_violation"):
        rows.append([f, *[str(arms[a]["security_events"][f]) for a in names]])
    rows.append(["kill_switch requests", *[str(arms[a]["kill_switch_requests"]) for a in names]])
    for m in ("schema_tokens", "final_tool_count", "k"):
        rows.append([f"mean {m}", *[str(arms[a]["means"][m]) for a in names]])
    return rows


def _raw(d: dict[str, Any]) -> Details:
    """Every number behind the page, folded away: per-arm rates and each gate's numbers."""
    blocks: list[Any] = []
    if d["arms"]:
        blocks.append(table(["metric", *sorted(d["arms"])], _arm_rows(d), "Arms (rate [Wilson 95%] (k/n))"))
    blocks.append(Fields(tuple((g["name"], compact(g["numbers"])) for g in d["gates"]), "Gate numbers", code=True))
    return Details("Raw numbers: arms and every gate's numbers (all of it: --format json)",
                   tuple(blocks))


def verdict_report(d: dict[str, Any]) -> Report:
    """Decision first (the banner), then the guarded metrics as a forest plot and hour by
    hour, the gates, the segments, and the raw numbers folded away."""
    if d.get("profile") == "interleaving":
        from tooldisc.reports.interleave_report import interleave_report

        return interleave_report(d)
    blocks: list[Any] = [Paragraph(_context(d))]
    if d.get("metrics"):
        charts, missing = forest(d)
        note = ("Each bar is an always-valid interval (alpha 0.05 on each side, valid at every look); the "
                "shaded band runs from no difference (solid line) to the margin; right is worse. A metric is "
                "non-inferior when its bar ends inside the band's far edge; \"worse\" is decided at alpha "
                "0.01, Holm-corrected across every metric and segment.")
        if missing:
            note += f" No interval yet: {', '.join(missing)}."
        for i, c in enumerate(charts):
            blocks.append(replace(c, heading="Guarded metrics" if i == 0 else None,
                                  note=note if i == len(charts) - 1 else None))
        blocks.append(table(list(METRIC_HEADERS), metric_rows(d), None if charts else "Guarded metrics",
                            status=(1,)))
        if (grid := sequential(d)) is not None:
            blocks.append(grid)
    blocks.append(_gates_table(d))
    if d.get("summary"):  # the shadow profile's counts
        blocks.append(Fields(tuple((k, str(v)) for k, v in sorted(d["summary"].items())), "Summary"))
    if d.get("segments"):
        blocks.append(_segments_table(d, title="Segments (experiment vs control)"))
    if reasons := reason_rows(d):
        blocks.append(table(["reason", "rows"], reasons, "Quarantined rows by reason", align=numeric(1, 1)))
    blocks.append(_raw(d))
    return Report(_title(d), tuple(blocks), decision=canary_decision(d))
