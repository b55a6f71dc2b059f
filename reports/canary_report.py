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
CHART_RATES = ("task_success", "fallback", "retrieval_miss", "discovery_miss", "schema_miss")


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
    return json.loads(json.dumps(out, sort_keys=True))


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
    """Headline, every gate with its reason, per-arm rates (HTML chart and table), quarantine, gate numbers."""
    blocks: list[Any] = [
        Fields(tuple(_headline(d)), status=("verdict",)),
        Paragraph("PROMOTE means eligible for the next ladder step; an operator decides."),
        table(["gate", "status", "reason"], [[g["name"], g["status"], g["reason"]] for g in d["gates"]], "Gates",
              status=(1,)),
    ]
    if d["arms"]:
        names = sorted(d["arms"])
        points = tuple({"rate": rate, "arm": a, "value": r["rate"], "low": r["low"], "high": r["high"]}
                       for rate in CHART_RATES for a in names if (r := d["arms"][a]["rates"].get(rate)))
        if points:
            blocks.append(Chart("interval", points, x="value", y="rate", color="arm", title="Rates by arm",
                                x_title="rate", x_max=1.0, heading="Per-arm rates (Wilson 95% intervals)"))
        blocks.append(table(["metric", *names], _arm_rows(d), "Arms (rate [Wilson 95%] (k/n))"))
    if reasons := _reason_rows(d):
        blocks.append(table(["reason", "rows"], reasons, "Quarantined rows by reason", align=numeric(1, 1)))
    blocks.append(Fields(tuple((g["name"], _compact(g["numbers"])) for g in d["gates"]), "Gate numbers", code=True))
    return Report(_title(d), tuple(blocks))
