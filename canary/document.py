"""The verdict document: the one JSON-able dict every canary verdict output starts from.

``canary verdict --format json`` prints it and every report renders it
(:mod:`tooldisc.reports.canary_report`), with sorted keys, rounded numbers and no clock,
so a document is byte-identical across runs. It carries only aggregates: no ids, no
query text, no file paths. Built here, inside canary, so canary never imports the
reports that render it.
"""

from __future__ import annotations

import json
from typing import Any

from tooldisc.canary.aggregate import ArmStats
from tooldisc.canary.gates import Verdict, interval_dict

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
    if v.profile == "interleaving":
        out["metrics"] = [{"name": m.name, "gate": m.gate, "outcome": m.outcome, "reason": m.reason,
                           **m.numbers} for m in v.comparisons]
        out["window"] = dict(v.summary.get("window") or out["window"])
        out["duplicates"] = v.summary.get("duplicates")
    out["next_step"] = v.next_step or None
    return json.loads(json.dumps(out, sort_keys=True))


SEGMENT_RATES = ("task_success", "tool_execution_success", "discovery_miss", "fallback")


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
