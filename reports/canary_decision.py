"""A canary verdict's decision in words: the banner's verdict, one reason, the next step.

Only wording lives here. The numbers — which gate decided, how many hours a wait takes
at the current percent and at the next ladder step — are the verdict document's
``next_step`` (:mod:`tooldisc.canary.next_step`), computed beside the gates with their
arithmetic; this module never computes a statistic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Decision
from tooldisc.reports.canary_words import hours_text, pct

TONES = {"PROMOTE": "good", "HOLD": "warn", "ROLLBACK": "bad"}


def _where(where: list[Mapping[str, Any]]) -> str:
    parts = ["the whole window" if w["segment"] is None else f"{w['segment']}={w['value']}" for w in where]
    if len(parts) > 3:
        parts = [*parts[:3], f"{len(parts) - 3} more"]
    return ", ".join(parts)


def _gate(d: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
    return next((g for g in d["gates"] if g["name"] == name), {"name": name, "reason": ""})


def _metric(d: Mapping[str, Any], name: str | None) -> Mapping[str, Any] | None:
    return next((m for m in d.get("metrics", []) if m["name"] == name), None)


def _margin(m: Mapping[str, Any]) -> str:
    kind, value = next(iter(m["margin"].items()))
    return f"{value:g} absolute" if kind == "absolute" else f"{value:.0%} relative"


def _wait_text(d: Mapping[str, Any], wait: Mapping[str, Any]) -> str:
    text = f"Keep {pct(wait['percent'])} and wait {hours_text(wait.get('hours'))}"
    r = wait.get("requests_per_arm")
    if r:
        text += (f" (about {r['experiment']:,} more experiment and {r['control']:,} more control "
                 "requests" + ("" if wait["by"] == "data" else f"; {wait['by']} needs the longest") + ")")
    nxt = wait.get("next_step")
    if nxt and nxt.get("hours") is not None:
        text += f"; {hours_text(nxt['hours'])} at the next ladder step, {pct(nxt['percent'])}"
    if wait.get("by") == "data":
        text += "; then the guarded metrics are compared"
    return text + "."


def canary_decision(d: Mapping[str, Any]) -> Decision:
    """The banner of a canary (or shadow) verdict document."""
    if d.get("profile") == "interleaving":
        from tooldisc.reports.interleave_report import interleave_decision

        return interleave_decision(d)
    verdict = d["verdict"]
    ns: Mapping[str, Any] = d.get("next_step") or {}
    action = ns.get("action")
    shadow = d.get("profile") != "canary"
    gate, metric = _gate(d, ns.get("gate")), _metric(d, ns.get("metric"))
    if verdict == "PROMOTE":
        why = ("Every gate passes." if shadow else
               "Every gate passes: each guarded metric is shown non-inferior within its margin and no "
               "segment is shown worse.")
        if shadow:
            nxt = "Eligible to run the planner in capability mode; an operator decides."
        elif action == "complete":
            nxt = "Already at 100 %: the rollout is complete."
        else:
            nxt = f"Eligible for the next ladder step, {pct(ns.get('percent'))}; an operator decides."
        return Decision(verdict, "good", why, nxt)
    if verdict == "ROLLBACK":
        if metric is not None:
            why = f"{metric['name']} is shown worse than control on {_where(ns.get('where') or [])}."
            nxt = (f"Roll back to 0 % now and investigate {metric['name']}"
                   + (f" in {_where([w for w in ns['where'] if w['segment'] is not None])}."
                      if any(w["segment"] is not None for w in ns.get("where") or []) else "."))
        else:
            why = f"{gate['name']} gate: {gate['reason']}"
            nxt = "Roll back to 0 % now and investigate the security events before any new rollout."
        return Decision(verdict, "bad", why, nxt)
    # HOLD
    wait = ns.get("wait") or {}
    if action == "wait":
        if ns.get("gate") == "data":
            req = (_gate(d, "data").get("numbers") or {}).get("requests", {})
            why = (f"Too few requests to compare the arms yet (experiment {req.get('experiment', 0):,}, "
                   f"control {req.get('control', 0):,}; comparisons start at "
                   f"{(_gate(d, 'data').get('numbers') or {}).get('min_requests_per_arm', 500):,} per arm).")
        elif metric is not None:
            others = len(ns.get("still_needed", [])) - 1
            why = (f"{metric['name']} is inconclusive: its interval still reaches past the "
                   f"{_margin(metric)} margin" + (f" ({others} more metric{'s' if others > 1 else ''} "
                                                  "also inconclusive)." if others > 0 else "."))
        else:
            why = f"{gate['name']} gate: {gate['reason']}"
        if shadow:
            nxt = "Keep the planner in shadow mode and collect more turns, then judge again."
        else:
            nxt = _wait_text(d, wait) if wait else "Keep the current percent and collect more data."
        return Decision(verdict, "warn", why, nxt)
    if metric is not None and metric["outcome"] == "worse":
        why = f"{metric['name']} is shown worse than control on {_where(metric.get('shown_worse') or [])}."
        nxt = (f"Keep {pct(d.get('current_percent'))} no longer than needed: fix {metric['name']} or roll "
               "back; more requests will not change this.")
    elif metric is not None:
        why = (f"{metric['name']} is inconclusive and would not conclude if the observed difference "
               f"holds (beyond its {_margin(metric)} margin).")
        nxt = f"Investigate {metric['name']} before waiting longer."
    else:
        from tooldisc.canary.profiles import gate_fix

        why = f"{gate['name']} gate: {gate['reason']}"
        nxt = gate_fix(d.get("profile"), gate["name"])  # the deciding gate's own record says what to do
    return Decision(verdict, "warn", why, nxt)
