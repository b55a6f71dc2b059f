"""What to do after a verdict, as data: the deciding gate, and the next step with its numbers.

A verdict page leads with the decision, one reason and the next step (a person reads the
top and acts), so the arithmetic behind "wait about 66 h" lives here, beside the gates,
and the reports only word it. The waits come from the same computation the gates' reasons
quote (:func:`tooldisc.canary.comparisons.requests_to_show` through each inconclusive
metric's ``needed``), plus the data gate's minimum counts, at the window's request rate —
for the current percent and for the next ladder step.

Actions: ``promote`` (eligible for ``percent``; an operator decides), ``complete``
(already at 100 %), ``rollback`` (to 0 %, and what was shown worse), ``wait`` (only more
requests are missing), ``fix`` (something waiting cannot mend: a broken split, a worse
metric, quarantined rows, an engaged kill switch…).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from tooldisc.canary.comparisons import INCONCLUSIVE, WORSE, MetricResult, accrual, wait_at
from tooldisc.canary.config import GateConfig


def _metric_of(specs: Mapping[str, Any], gate: str | None) -> str | None:
    """The (first) metric a gate's record says it judges; None for a gate that judges none."""
    spec = specs.get(gate) if gate is not None else None
    return spec.metrics[0] if spec is not None and spec.metrics else None


def _num(x: float | None) -> float | int | None:
    return None if x is None else (int(x) if float(x).is_integer() else x)


def _data_wait(ev: Any, cfg: GateConfig) -> list[dict[str, Any]]:
    """Further requests until both arms reach the data gate's minimum, per percent asked."""
    acc = accrual(ev, cfg)
    have = {a: (ev.arms[a].requests if a in ev.arms else 0) for a in ("experiment", "control")}
    out = []
    for pct, share in acc.shares:
        arms = (("experiment", share), ("control", 1 - share))
        short = [(a, s) for a, s in arms if have[a] < cfg.min_requests_per_arm]
        if any(s <= 0 for _, s in short):  # a short arm that no longer grows (100 %)
            out.append({"percent": _num(pct), **wait_at(None, share, acc.per_hour)})
            continue
        r = max(((cfg.min_requests_per_arm - have[a]) / s for a, s in short), default=0.0)
        out.append({"percent": _num(pct), **wait_at(math.ceil(r), share, acc.per_hour)})
    return out


def _metric_waits(m: MetricResult) -> list[dict[str, Any]]:
    need = m.numbers.get("needed") or {}
    if not need:
        return []
    out = [{k: need.get(k) for k in ("requests_per_arm", "hours")}]
    if need.get("next_step"):
        out.append({k: need["next_step"].get(k) for k in ("requests_per_arm", "hours")})
    return out


def _total(w: Mapping[str, Any]) -> float:
    r = w.get("requests_per_arm")
    return math.inf if not r else float(sum(r.values()))


def _longest(items: Sequence[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]] | None:
    """The item that needs the most further requests (ties: first in gate order)."""
    best: tuple[str, dict[str, Any]] | None = None
    for name, w in items:
        if best is None or _total(w) > _total(best[1]):
            best = (name, w)
    return best


def _wait(waits: list[tuple[str, list[dict[str, Any]]]], shares: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """The longest wait at the current percent (and at the next step), naming what needs it."""
    out: dict[str, Any] = {}
    for i, (pct, _) in enumerate(shares):
        at = [(name, w[i]) for name, w in waits if i < len(w)]
        found = _longest(at)
        if found is None:
            continue
        name, w = found
        entry = {"percent": _num(pct), "by": name, "hours": w.get("hours"),
                 "requests_per_arm": w.get("requests_per_arm")}
        if i == 0:
            out.update(entry)
        else:
            out["next_step"] = entry
    return out


def next_step(profile: str, verdict: str, next_percent: float | None, current_percent: float | None,
              gates: Sequence[Any], comparisons: Sequence[MetricResult] = (), ev: Any = None,
              cfg: GateConfig | None = None, specs: Sequence[Any] = ()) -> dict[str, Any]:
    """The deciding gate (and metric), and what to do next with the numbers it needs.

    ``gates`` are the results; ``specs`` the profile's gate records
    (:class:`~tooldisc.canary.gates.GateSpec`), which say which gates judge metrics and which
    only more data can mend — no gate is named here.
    """
    cfg = cfg or GateConfig()
    by_spec = {s.name: s for s in specs}
    if profile == "interleaving":
        return _interleaving_step(verdict, next_percent, gates, by_spec)
    metric_gates = {s.name for s in specs if s.metrics}  # not judged: waiting for requests can help
    waiting = {s.name for s in specs if s.waits}
    by_name = {m.name: m for m in comparisons}
    out: dict[str, Any] = {"action": "", "percent": _num(next_percent), "gate": None, "metric": None}
    if verdict == "ROLLBACK":
        gate = next(g for g in gates if g.status == "fail" and g.outcome == "ROLLBACK")
        worse = [m for m in comparisons if m.gate == gate.name and m.outcome == WORSE]
        out.update(action="rollback", gate=gate.name)
        if worse:
            out["metric"] = worse[0].name
            out["where"] = [{"segment": w["segment"], "value": w["value"]}
                            for w in worse[0].numbers.get("shown_worse", [])]
        return out
    if verdict == "PROMOTE":
        out["action"] = "complete" if profile == "canary" and next_percent is None else "promote"
        return out
    waits: list[tuple[str, list[dict[str, Any]]]] = []
    fixes: list[tuple[Any, str | None]] = []
    for g in gates:
        if g.status not in ("fail", "not_judged"):
            continue
        if profile != "canary":
            nums = g.numbers or {}
            if g.name in waiting and not nums.get("invalid_plans") and not nums.get("premature"):
                waits.append((g.name, []))  # only more turns or labelled cases are missing
            else:
                fixes.append((g, None))
            continue
        if g.name == "data" and ev is not None and all(ev.arms.get(a) is not None and ev.arms[a].requests > 0
                                                       for a in ("control", "experiment")):
            waits.append(("data", _data_wait(ev, cfg)))
        elif g.name in metric_gates and g.status == "not_judged" and not (g.numbers or {}).get("metrics"):
            if not any(w[0] == "data" for w in waits):
                fixes.append((g, None))  # not compared for another reason (an arm missing)
        elif g.name in metric_gates and g.status == "not_judged":
            for name in (g.numbers.get("metrics") or {}):
                m = by_name.get(name)
                if m is None or m.outcome != INCONCLUSIVE:
                    continue
                w = _metric_waits(m)
                if w and w[0].get("requests_per_arm"):
                    waits.append((name, w))
                else:
                    fixes.append((g, name))  # not reachable if the observed difference holds
        else:
            metric = next((m.name for m in comparisons if m.gate == g.name and m.outcome == WORSE), None)
            fixes.append((g, metric))
    shares = accrual(ev, cfg).shares if profile == "canary" and ev is not None else ()
    wait = _wait(waits, shares) if waits and shares else {}
    if fixes:
        gate, metric = fixes[0]
        out.update(action="fix", gate=gate.name, metric=metric)
    else:
        out["action"] = "wait"
        if wait:
            by = wait["by"]
            out.update(gate="data" if by == "data" else by_name[by].gate, metric=None if by == "data" else by)
        elif waits:
            out["gate"] = waits[0][0]
    if wait:
        out["wait"] = wait
    out["still_needed"] = [name for name, _ in waits]
    return out


def _interleaving_step(verdict: str, next_percent: float | None, gates: Sequence[Any],
                       specs: Mapping[str, Any]) -> dict[str, Any]:
    """The interleaving profile's next step: its waits are in interleaved requests (not per
    arm), read from the ``needed`` numbers of the data and preference gates."""
    out: dict[str, Any] = {"action": "", "percent": _num(next_percent), "gate": None, "metric": None}
    if verdict == "ROLLBACK":
        gate = next(g for g in gates if g.status == "fail" and g.outcome == "ROLLBACK")
        out.update(action="rollback", gate=gate.name)
        metric = _metric_of(specs, gate.name)
        if metric is not None:
            out.update(metric=metric, where=[{"segment": None, "value": None}])
        return out
    if verdict == "PROMOTE":
        out["action"] = "promote"
        return out
    waits: list[tuple[str, Mapping[str, Any]]] = []
    fixes: list[Any] = []
    for g in gates:
        if g.status not in ("fail", "not_judged"):
            continue
        need = (g.numbers or {}).get("needed")
        spec = specs.get(g.name)
        if spec is not None and spec.waits and need and need.get("requests") is not None:
            waits.append((g.name, need))
        elif _metric_of(specs, g.name) is not None and not need:
            continue  # not judged yet: the data gate says what is missing
        elif g.name == "security" and g.status == "not_judged" and not (g.numbers or {}).get(
                "quarantined_rows_with_unknown_security_flag"):
            continue  # no interleaved request yet (the data gate)
        else:
            fixes.append(g)
    if fixes:
        gate = fixes[0]
        out.update(action="fix", gate=gate.name, metric=_metric_of(specs, gate.name))
    else:
        out["action"] = "wait"
    if waits:
        by, need = max(waits, key=lambda w: w[1]["requests"])
        wait: dict[str, Any] = {"percent": _num(next_percent), "by": by, "hours": need.get("hours"),
                                "requests": need["requests"], "to_show": need.get("to_show")}
        nxt = need.get("next_step")
        if nxt:
            wait["next_step"] = {"percent": _num(nxt.get("percent")), "by": by, "hours": nxt.get("hours"),
                                 "requests": nxt.get("requests")}
        out["wait"] = wait
        if not fixes:
            out.update(gate=by, metric=_metric_of(specs, by))
    out["still_needed"] = [name for name, _ in waits]
    return out
