"""Canary verdict reports: JSON for machines, Markdown and standalone HTML for people.

All three come from one dict (:func:`verdict_dict`) with sorted keys and rounded
numbers and no clock, so a report is byte-identical across runs. Reports carry only
aggregates: no ids, no query text, no file paths.
"""

from __future__ import annotations

import json
from typing import Any

from tooldisc.canary.aggregate import ArmStats
from tooldisc.canary.gates import Verdict, interval_dict

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


def render_json(d: dict[str, Any]) -> str:
    return json.dumps(d, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


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


def render_markdown(d: dict[str, Any]) -> str:
    out = [f"# {_title(d)}", ""]
    out += [f"- **{k}**: {v}" for k, v in _headline(d)]
    out += ["", "PROMOTE means eligible for the next ladder step; an operator decides.", "",
            "## Gates", "", "| gate | status | reason |", "|---|---|---|"]
    for g in d["gates"]:
        out.append(f"| {g['name']} | {g['status']} | {g['reason'].replace('|', '/')} |")
    if d["arms"]:
        names = sorted(d["arms"])
        out += ["", "## Arms", "", "| metric | " + " | ".join(names) + " |",
                "|---|" + "---|" * len(names)]
        out += ["| " + " | ".join(r) + " |" for r in _arm_rows(d)]
    if reasons := _reason_rows(d):
        out += ["", "## Quarantined rows by reason", "", "| reason | rows |", "|---|---|"]
        out += [f"| {r.replace('|', '/')} | {n} |" for r, n in reasons]
    out += ["", "## Gate numbers", ""]
    for g in d["gates"]:
        out.append(f"- **{g['name']}**: `{_compact(g['numbers'])}`")
    return "\n".join(out) + "\n"


def render_html(d: dict[str, Any]) -> str:
    from tooldisc.reports.html import IntervalPoint, esc, interval_chart, page, table

    parts = [f"<h1>{esc(_title(d))}</h1>",
             f'<p>Verdict: <strong class="{esc(d["verdict"])}">{esc(d["verdict"])}</strong>. '
             "PROMOTE means eligible for the next ladder step; an operator decides.</p>",
             table(["", ""], _headline(d)), "<h2>Gates</h2>"]
    gate_rows = [[esc(g["name"]), f'<span class="{esc(g["status"])}">{esc(g["status"])}</span>',
                  esc(g["reason"]), f"<code>{esc(_compact(g['numbers']))}</code>"] for g in d["gates"]]
    parts.append(table(["gate", "status", "reason", "numbers"], gate_rows, raw=True))
    if d["arms"]:
        names = sorted(d["arms"])
        points = [IntervalPoint(rate, a, r["rate"], r["low"], r["high"])
                  for rate in CHART_RATES for a in names
                  if (r := d["arms"][a]["rates"].get(rate))]
        parts.append("<h2>Per-arm rates (Wilson 95% intervals)</h2>")
        if points:
            parts.append(interval_chart(points, "Rates by arm", x_max=1.0))
        parts.append("<h2>Arms</h2>")
        parts.append(table(["metric", *names], _arm_rows(d)))
    if reasons := _reason_rows(d):
        parts.append("<h2>Quarantined rows by reason</h2>")
        parts.append(table(["reason", "rows"], reasons))
    html = page(_title(d), "\n".join(parts))
    if "http" in html.lower():  # a report must never reference anything outside itself
        raise AssertionError("HTML report would contain a URL")
    return html


def render_table(d: dict[str, Any]) -> None:
    """Human tables on stdout (rich)."""
    from rich.table import Table
    from tooldisc.cli.common import stdout_console

    console = stdout_console()
    head = Table(title=_title(d), show_header=False)
    for k, v in _headline(d):
        head.add_row(k, v)
    console.print(head)
    gates = Table(title="Gates")
    for col in ("gate", "status", "reason"):
        gates.add_column(col)
    for g in d["gates"]:
        gates.add_row(g["name"], g["status"], g["reason"])
    console.print(gates)
    if d["arms"]:
        arms = Table(title="Arms (rate [Wilson 95%] (k/n))")
        names = sorted(d["arms"])
        for col in ("metric", *names):
            arms.add_column(col)
        for r in _arm_rows(d):
            arms.add_row(*r)
        console.print(arms)
    if reasons := _reason_rows(d):
        quarantine = Table(title="Quarantined rows by reason")
        for col in ("reason", "rows"):
            quarantine.add_column(col)
        for r in reasons:
            quarantine.add_row(*r)
        console.print(quarantine)
