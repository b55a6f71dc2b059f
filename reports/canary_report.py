"""Canary verdict reports: JSON for machines, Markdown and standalone HTML for people.

Every format comes from one dict (:func:`verdict_dict`, which ``--format json``
prints) through one :func:`verdict_report`, with sorted keys, rounded numbers and no
clock, so a report is byte-identical across runs. Reports carry only aggregates: no
ids, no query text, no file paths. The shadow profile's verdict has the same shape.
"""

from __future__ import annotations

import json
from typing import Any

from tooldisc.canary.aggregate import ArmStats
from tooldisc.canary.gates import Verdict, interval_dict
from tooldisc.reports.blocks import Chart, Fields, Paragraph, Report, numeric, table

REPORT_SCHEMA_VERSION = 1
RATES = ("task_success", "tool_execution_success", "fallback", "index_hit", "retrieval_miss",
         "discovery_miss", "schema_miss", "authorization_failure")


def arm_dict(arm: ArmStats, confidence: float) -> dict[str, Any]:
    rates: dict[str, Any] = {}
    for name in RATES:
        if name == "task_success":
            rates[name] = interval_dict(arm.task_successes, arm.task_known, confidence)
        elif name == "tool_execution_success":
            rates[name] = interval_dict(arm.execution_successes, arm.execution_known, confidence)
        elif arm.flags.get(name) is not None:
            rates[name] = interval_dict(arm.flags[name], arm.requests, confidence)
    return {
        "requests": arm.requests,
        "rates": rates,
        "security_events": {f: arm.flags.get(f) for f in
                            ("unauthorized_candidate", "tenant_leak", "permission_violation")},
        "kill_switch_requests": arm.flags.get("kill_switch"),
        "fallback_reasons": dict(sorted(arm.fallback_reasons.items())),
        "latency_ms": dict(sorted(arm.latency.items())),
        "means": {"schema_tokens": arm.schema_tokens_mean,
                  "final_tool_count": arm.final_tool_count_mean, "k": arm.k_mean},
    }


def verdict_dict(v: Verdict, confidence: float = 0.95) -> dict[str, Any]:
    """The one machine form every renderer starts from."""
    ev = v.evidence
    arms = {}
    if ev is not None:
        arms = {name: arm_dict(arm, confidence) for name, arm in sorted(ev.arms.items())}
    quarantine = _quarantine(v)
    out: dict[str, Any] = {
        "report_schema_version": REPORT_SCHEMA_VERSION,
        "profile": v.profile,
        "experiment": v.experiment,
        "verdict": v.verdict,
        "next_percent": v.next_percent,
        "current_percent": v.current_percent,
        "gates": [{"name": g.name, "status": g.status, "outcome_if_failed": g.outcome,
                   "reason": g.reason, "numbers": g.numbers} for g in v.gates],
        "arms": arms,
        "quarantined": quarantine["count"],  # kept for consumers that read the count only
        "quarantine": quarantine,
        "window": {"since": ev.since if ev else None, "until": ev.until if ev else None},
    }
    if v.summary:
        out["summary"] = v.summary
    if v.profile == "canary":
        out["metrics"] = [{"name": m.name, "gate": m.gate, "outcome": m.outcome, "reason": m.reason,
                           **m.numbers} for m in v.comparisons]
        out["segments"] = _segments(v, confidence)
        dup = ev.duplicates if ev is not None else None
        out["duplicates"] = ({"rows_removed": dup.rows_removed, "v1_rows_removed": dup.v1_rows_removed,
                              "v2_ids_repeated": dup.v2_ids_repeated,
                              "v2_ids_conflicting": dup.v2_ids_conflicting} if dup else None)
        out["window"]["hours"] = round(ev.span_hours, 3) if ev and ev.span_hours is not None else None
        out["sequential"] = v.sequential or None
    out["next_step"] = v.next_step or None
    return json.loads(json.dumps(out, sort_keys=True))


SEGMENT_RATES = ("task_success", "tool_execution_success", "discovery_miss", "fallback")
METRIC_HEADERS = ("metric", "outcome", "experiment", "control", "margin", "still needed")
SEGMENT_HEADERS = ("segment", "experiment requests", "control requests", "task success (exp)",
                   "task success (ctrl)", "shown worse")


def _segments(v: Verdict, confidence: float) -> list[dict[str, Any]]:
    """One row per segment value: per-arm requests and rates, and what was shown worse there."""
    ev = v.evidence
    if ev is None:
        return []
    worse = {(w["segment"], w["value"], m.name) for m in v.comparisons
             for w in m.numbers.get("shown_worse", []) if w["segment"] is not None}
    rows = []
    for seg, values in sorted(ev.segments.items()):
        for value, arms in sorted(values.items()):
            row: dict[str, Any] = {"segment": seg, "value": value,
                                   "requests": {a: s.requests for a, s in sorted(arms.items())},
                                   "rates": {}, "mean_latency_ms": {},
                                   "shown_worse": sorted(m for s2, v2, m in worse
                                                         if s2 == seg and v2 == value)}
            for a, s in sorted(arms.items()):
                d = arm_dict(s, confidence)["rates"]
                row["rates"][a] = {r: d.get(r) for r in SEGMENT_RATES}
                row["mean_latency_ms"][a] = round(s.latency_sum / s.requests, 3) if s.requests else None
            rows.append(row)
    return rows


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
        text += f" (~{need['hours']:g} h)"
    return text


def metric_rows(d: dict[str, Any]) -> list[list[str]]:
    """Guarded metrics: outcome, both arms, margin and what an inconclusive one still needs."""
    rows = []
    for m in d.get("metrics", []):
        kind, value = next(iter(m["margin"].items()))
        margin = f"{value:g} {kind}" if kind == "absolute" else f"{value:.0%} {kind}"
        rows.append([m["name"], m["outcome"], _metric_value(m.get("experiment")),
                     _metric_value(m.get("control")), margin, _needed_text(m)])
    return rows


def segment_rows(d: dict[str, Any], only_worse: bool = False) -> list[list[str]]:
    rows = []
    for s in d.get("segments", []):
        if only_worse and not s["shown_worse"]:
            continue
        req = s["requests"]
        task = {a: (r.get("task_success") or {}).get("rate") for a, r in s["rates"].items()}
        rows.append([f"{s['segment']}={s['value']}", str(req.get("experiment", 0)),
                     str(req.get("control", 0)),
                     "–" if task.get("experiment") is None else f"{task['experiment']:.4f}",
                     "–" if task.get("control") is None else f"{task['control']:.4f}",
                     ", ".join(s["shown_worse"]) or "none"])
    return rows


def metric_charts(d: dict[str, Any]) -> list[Chart]:
    """One chart per guarded metric, each on its own scale: the difference with its
    always-valid bound in the harmful direction, the margin, and no difference."""
    charts = []
    for m in d.get("metrics", []):
        c = m.get("chart")
        if not c:
            continue
        est, bound, margin = c["estimate"], c["bound"], c["margin"]
        rows = ({"what": "experiment - control", "value": est, "low": min(est, bound),
                 "high": max(est, bound)},
                {"what": "margin", "value": margin, "low": margin, "high": margin},
                {"what": "no difference", "value": 0.0, "low": 0.0, "high": 0.0})
        charts.append(Chart("interval", rows, x="value", y="what", x_title=c["unit"],
                            title=f"{m['name']}: {m['outcome']}"))
    return charts


def summary_report(d: dict[str, Any]) -> Report:
    """Compact, for CI step summaries: an H2 heading, the gates, the guarded metrics and
    any segment shown worse; no JSON."""
    nxt, cur = d["next_percent"], d["current_percent"]
    blocks: list[Any] = [
        Paragraph(f"Profile {d['profile']}; current percent {'–' if cur is None else cur}; next "
                  f"percent {'–' if nxt is None else nxt}; quarantined rows {d['quarantined']}."),
        table(["gate", "status", "reason"], [[g["name"], g["status"], g["reason"]] for g in d["gates"]]),
    ]
    if d.get("metrics"):
        blocks.append(table(list(METRIC_HEADERS), metric_rows(d)))
    if worse := segment_rows(d, only_worse=True):
        blocks.append(table(list(SEGMENT_HEADERS), worse))
    return Report(f"Canary {d['verdict']}: {d['experiment']}", tuple(blocks), level=2)


def append_summary(path: str, d: dict[str, Any]) -> None:
    """Append the compact Markdown summary to ``path`` in one write (CI summaries append)."""
    from tooldisc.reports.markdown import write_markdown

    with open(path, "a", encoding="utf-8") as fh:
        fh.write(write_markdown(summary_report(d)) + "\n")


def _quarantine(v: Verdict) -> dict[str, Any]:
    """Quarantined rows and their count per reason, where a CI job can read them directly.

    Reasons are the fixed rule texts of validation (``arm: must be one of …``), never
    row values, so they carry no ids or query text.
    """
    gate = next((g.numbers for g in v.gates if g.name == "quarantine"), {})
    ev = v.evidence
    count = ev.quarantined if ev is not None else gate.get("quarantined", 0)
    reasons = ev.quarantine_reasons if ev is not None else gate.get("reasons", {})
    return {"count": count, "reasons": dict(sorted(reasons.items()))}


def _reason_rows(d: dict[str, Any]) -> list[list[str]]:
    q = d.get("quarantine") or {}
    return [[reason, str(n)] for reason, n in sorted(q.get("reasons", {}).items())]


def _fmt_rate(r: dict[str, Any] | None) -> str:
    if not r:
        return "–"
    return f"{r['rate']:.4f} [{r['low']:.4f}, {r['high']:.4f}] ({r['successes']}/{r['n']})"


def _compact(numbers: dict[str, Any]) -> str:
    return json.dumps(numbers, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def _title(d: dict[str, Any]) -> str:
    return f"Canary verdict ({d['profile']}): {d['experiment']}"


def _headline(d: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [("verdict", d["verdict"]),
            ("next_percent", "null" if d["next_percent"] is None else f"{d['next_percent']}"),
            ("current_percent", "null" if d["current_percent"] is None else f"{d['current_percent']}"),
            ("quarantined rows", str(d["quarantined"]))]
    w = d["window"]
    if w["since"] or w["until"]:
        rows.append(("window", f"{w['since'] or '…'} to {w['until'] or '…'}"))
    if d.get("summary"):
        rows.extend((k, str(v)) for k, v in sorted(d["summary"].items()))
    return rows


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


def verdict_report(d: dict[str, Any]) -> Report:
    """Headline, gates, guarded metrics (table, one chart each), segments, arms, quarantine, gate numbers."""
    blocks: list[Any] = [
        Fields(tuple(_headline(d)), status=("verdict",)),
        Paragraph("PROMOTE means eligible for the next ladder step; an operator decides."),
        table(["gate", "status", "reason"], [[g["name"], g["status"], g["reason"]] for g in d["gates"]], "Gates",
              status=(1,)),
    ]
    if d.get("metrics"):
        blocks.append(table(list(METRIC_HEADERS), metric_rows(d), "Guarded metrics"))
        blocks.extend(metric_charts(d))
    if d.get("segments"):
        blocks.append(table(list(SEGMENT_HEADERS), segment_rows(d), "Segments"))
    if d["arms"]:
        names = sorted(d["arms"])
        blocks.append(table(["metric", *names], _arm_rows(d), "Arms (rate [Wilson 95%] (k/n))"))
    if reasons := _reason_rows(d):
        blocks.append(table(["reason", "rows"], reasons, "Quarantined rows by reason", align=numeric(1, 1)))
    blocks.append(Fields(tuple((g["name"], _compact(g["numbers"])) for g in d["gates"]), "Gate numbers", code=True))
    return Report(_title(d), tuple(blocks))
