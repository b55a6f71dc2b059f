"""Promotion gates and the verdict (DESIGN §7): pure functions over frozen evidence.

Every gate returns a :class:`GateResult` with its status (``pass``, ``fail``,
``reported``, ``not_judged``), the outcome a failure carries, a reason and the
numbers behind it. The verdict follows precedence ROLLBACK > HOLD > PROMOTE, and
missing evidence is never a pass: a ``not_judged`` gate holds the rollout. PROMOTE
needs positive evidence: every guarded metric shown non-inferior on the whole window
and none shown worse anywhere (:mod:`tooldisc.canary.comparisons`); an inconclusive
comparison is ``not_judged`` with the requests it still needs. PROMOTE means
"eligible for the next ladder step; an operator decides" — nothing here acts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tooldisc.canary.aggregate import ArmStats, Evidence
from tooldisc.canary.assignment import BUCKETS, threshold
from tooldisc.canary.comparisons import (
    INCONCLUSIVE,
    NON_INFERIOR,
    WORSE,
    MetricResult,
    compare,
    judged_by,
)
from tooldisc.canary.config import GateConfig
from tooldisc.canary.events import SECURITY_FLAGS
from tooldisc.canary.looks import sequential_view
from tooldisc.canary.next_step import next_step
from tooldisc.canary.stats import goodness_of_fit, wilson

Comparisons = Mapping[str, MetricResult]

PASS, FAIL, REPORTED, NOT_JUDGED = "pass", "fail", "reported", "not_judged"
PROMOTE, HOLD, ROLLBACK = "PROMOTE", "HOLD", "ROLLBACK"
EXIT_CODES = {PROMOTE: 0, HOLD: 10, ROLLBACK: 20}
RETRIEVAL_FLAGS = ("retrieval_miss", "discovery_miss", "schema_miss", "index_hit")


@dataclass(frozen=True)
class GateResult:
    """One gate's judgement; ``outcome`` is what a ``fail`` means for the verdict."""

    name: str
    status: str
    outcome: str | None
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """The decision for one experiment and window, with every gate behind it."""

    profile: str
    experiment: str
    verdict: str
    next_percent: float | None
    current_percent: float | None
    gates: tuple[GateResult, ...]
    evidence: Evidence | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    comparisons: tuple[MetricResult, ...] = ()
    next_step: dict[str, Any] = field(default_factory=dict)  # tooldisc.canary.next_step
    sequential: dict[str, Any] = field(default_factory=dict)  # tooldisc.canary.looks

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


def rnd(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def interval_dict(successes: int, n: int, confidence: float) -> dict[str, Any] | None:
    if n <= 0:
        return None
    iv = wilson(successes, n, confidence)
    return {"successes": successes, "n": n, "rate": rnd(iv.rate), "low": rnd(iv.low),
            "high": rnd(iv.high)}


def _arm(ev: Evidence, name: str) -> ArmStats | None:
    arm = ev.arms.get(name)
    return arm if arm is not None and arm.requests > 0 else None


def _counts(ev: Evidence) -> dict[str, int]:
    return {a: (ev.arms[a].requests if a in ev.arms else 0) for a in ("control", "experiment")}


def gate_data(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    counts = _counts(ev)
    nums = {"requests": counts, "min_requests_per_arm": cfg.min_requests_per_arm}
    if counts["control"] == 0 and counts["experiment"] == 0:
        return GateResult("data", FAIL, HOLD, "no requests in the window", nums)
    missing = [a for a, n in counts.items() if n == 0]
    if missing:
        return GateResult("data", FAIL, HOLD, f"arm missing: {missing[0]} has no requests", nums)
    short = [f"{a} {n}" for a, n in counts.items() if n < cfg.min_requests_per_arm]
    if short:
        return GateResult("data", FAIL, HOLD,
                          f"fewer than {cfg.min_requests_per_arm} requests: {', '.join(short)}", nums)
    return GateResult("data", PASS, None,
                      f"both arms have >= {cfg.min_requests_per_arm} valid requests", nums)


def gate_sample_ratio(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    counts = _counts(ev)
    total = counts["control"] + counts["experiment"]
    nums: dict[str, Any] = {"observed": counts, "alpha": cfg.sample_ratio_alpha,
                            "percents_seen": list(ev.percents)}
    if total == 0 or ev.current_percent is None or not ev.percents:
        return GateResult("sample_ratio", NOT_JUDGED, HOLD, "no requests with a rollout percent", nums)
    if len(set(ev.percents)) > 1:
        return GateResult("sample_ratio", FAIL, HOLD,
                          f"percent changed inside the window ({ev.percents[0]:g} to "
                          f"{ev.percents[-1]:g}); narrow the window", nums)
    share = threshold(ev.current_percent) / BUCKETS
    if not 0 < share < 1:
        return GateResult("sample_ratio", NOT_JUDGED, HOLD,
                          f"no split to test at {ev.current_percent:g}%", nums)
    test = goodness_of_fit([counts["control"], counts["experiment"]], [1 - share, share])
    nums.update({"expected_experiment_share": rnd(share),
                 "expected": {"control": rnd(total * (1 - share), 3),
                              "experiment": rnd(total * share, 3)},
                 "chi_square": rnd(test.statistic), "p_value": float(f"{test.p_value:.6g}")})
    if test.p_value < cfg.sample_ratio_alpha:
        return GateResult("sample_ratio", FAIL, HOLD,
                          f"sample ratio mismatch: p = {test.p_value:.3g} < {cfg.sample_ratio_alpha:g}; "
                          "assignment or logging is broken", nums)
    return GateResult("sample_ratio", PASS, None,
                      f"arm counts match the {ev.current_percent:g}% split "
                      f"(p = {test.p_value:.3g})", nums)


def gate_security(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    per_arm: dict[str, dict[str, int | None]] = {}
    events = 0
    unknown = False
    for name, arm in sorted(ev.arms.items()):
        per_arm[name] = {f: arm.flags.get(f) for f in SECURITY_FLAGS}
        for f in SECURITY_FLAGS:
            v = arm.flags.get(f)
            unknown |= v is None
            events += v or 0
    nums: dict[str, Any] = {"per_arm": per_arm,
                            "quarantined_rows_with_security_flag": ev.quarantined_security,
                            "quarantined_rows_with_unknown_security_flag":
                                ev.quarantined_security_unknown}
    events += ev.quarantined_security
    if events > 0:
        where = [f"{a} {f}={v}" for a, d in per_arm.items() for f, v in d.items() if v]
        if ev.quarantined_security:
            where.append(f"quarantined rows {ev.quarantined_security}")
        return GateResult("security", FAIL, ROLLBACK,
                          f"{events} security event(s): {', '.join(where)}; roll back now", nums)
    if ev.quarantined_security_unknown:
        # a flag that is missing or does not parse is never "no incident": not judged, so
        # never PROMOTE, however few such rows the quarantine threshold would tolerate
        return GateResult("security", NOT_JUDGED, HOLD,
                          f"{ev.quarantined_security_unknown} quarantined row(s) have a missing or "
                          "unparseable security flag; security cannot be shown clean", nums)
    if _arm(ev, "experiment") is None or unknown:
        return GateResult("security", NOT_JUDGED, HOLD, "no security evidence for the experiment arm",
                          nums)
    return GateResult("security", PASS, None,
                      "no unauthorized candidate, tenant leak or permission violation", nums)


def _comparable(ev: Evidence, cfg: GateConfig) -> str | None:
    """Why the arms cannot be compared yet (None when they can)."""
    counts = _counts(ev)
    if _arm(ev, "control") is None or _arm(ev, "experiment") is None:
        return "needs both arms"
    if min(counts.values()) < cfg.min_requests_per_arm:
        return f"judged only once both arms have >= {cfg.min_requests_per_arm} requests"
    return None


def _metric_gate(name: str, metrics: tuple[str, ...], ev: Evidence, cfg: GateConfig,
                 cmp: Comparisons | None, outcome: str,
                 extra: dict[str, Any] | None = None) -> GateResult:
    """A gate over guarded metrics: any shown worse → its failure outcome; all shown
    non-inferior → pass; otherwise inconclusive (not judged → HOLD)."""
    nums: dict[str, Any] = {"requests": _counts(ev), **(extra or {})}
    why = _comparable(ev, cfg)
    if why is not None or cmp is None:
        return GateResult(name, NOT_JUDGED, HOLD, why or "not compared", nums)
    results = [cmp[m] for m in metrics]
    nums["metrics"] = {r.name: {"outcome": r.outcome, "reason": r.reason, **r.numbers}
                       for r in results}
    worse = [r for r in results if r.outcome == WORSE]
    if worse:
        return GateResult(name, FAIL, outcome, "; ".join(r.reason for r in worse), nums)
    if all(r.outcome == NON_INFERIOR for r in results):
        return GateResult(name, PASS, None, "; ".join(r.reason for r in results), nums)
    return GateResult(name, NOT_JUDGED, HOLD,
                      "; ".join(r.reason for r in results if r.outcome == INCONCLUSIVE), nums)


def gate_task(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    return _metric_gate("task", judged_by("task"), ev, cfg, cmp, ROLLBACK)


def gate_retrieval(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    ctrl, exp = _arm(ev, "control"), _arm(ev, "experiment")
    rates: dict[str, Any] = {}
    for name, arm in (("control", ctrl), ("experiment", exp)):
        if arm is None:
            continue
        rates[name] = {f: interval_dict(arm.flags[f], arm.requests, cfg.confidence)
                       for f in RETRIEVAL_FLAGS if arm.flags.get(f) is not None}
    return _metric_gate("retrieval", judged_by("retrieval"), ev, cfg, cmp, HOLD, {"rates": rates})


def gate_fallback(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    exp = _arm(ev, "experiment")
    if exp is None or exp.flags.get("fallback") is None:
        return GateResult("fallback", NOT_JUDGED, HOLD, "no experiment requests", {})
    iv = interval_dict(exp.flags["fallback"], exp.requests, cfg.confidence)
    assert iv is not None
    extra = {"experiment_rate": iv, "max_lower_bound": cfg.fallback_max_lower_bound,
             "reasons": dict(sorted(exp.fallback_reasons.items()))}
    if iv["low"] > cfg.fallback_max_lower_bound:
        return GateResult("fallback", FAIL, HOLD,
                          f"experiment falls back on {iv['rate']:.1%} of requests (lower bound "
                          f"{iv['low']:.4f} > {cfg.fallback_max_lower_bound:g})",
                          {"requests": _counts(ev), **extra})
    return _metric_gate("fallback", judged_by("fallback"), ev, cfg, cmp, HOLD, extra)


def gate_latency(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    extra = {a: dict(sorted(s.latency.items())) for a, s in sorted(ev.arms.items())}
    return _metric_gate("latency", judged_by("latency"), ev, cfg, cmp, HOLD, {"latency_ms": extra})


def gate_kill_switch(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    if not any(a.requests for a in ev.arms.values()):
        return GateResult("kill_switch", NOT_JUDGED, HOLD, "no requests in the window", {})
    per_arm = {a: s.flags.get("kill_switch") for a, s in sorted(ev.arms.items())}
    if any(v is None for v in per_arm.values()):
        return GateResult("kill_switch", NOT_JUDGED, HOLD, "kill switch state unknown", {})
    engaged = sum(v or 0 for v in per_arm.values())
    nums = {"requests_with_kill_switch": per_arm}
    if engaged:
        return GateResult("kill_switch", FAIL, HOLD,
                          f"kill switch engaged on {engaged} request(s) in the window", nums)
    return GateResult("kill_switch", PASS, None, "kill switch never engaged in the window", nums)


def gate_quarantine(ev: Evidence, cfg: GateConfig, cmp: Comparisons | None = None) -> GateResult:
    total = ev.rows
    nums: dict[str, Any] = {"quarantined": ev.quarantined, "rows": total,
                            "max_share": cfg.max_quarantine_share,
                            "reasons": dict(sorted(ev.quarantine_reasons.items()))}
    if total == 0:
        return GateResult("quarantine", NOT_JUDGED, HOLD, "no rows in the window", nums)
    share = Fraction(ev.quarantined, total)
    nums["share"] = rnd(float(share))
    if share > Fraction(str(cfg.max_quarantine_share)):
        return GateResult("quarantine", FAIL, HOLD,
                          f"{float(share):.2%} of rows quarantined (> {cfg.max_quarantine_share:.2%})",
                          nums)
    return GateResult("quarantine", PASS, None,
                      f"{float(share):.2%} of rows quarantined (<= {cfg.max_quarantine_share:.2%})",
                      nums)


Gate = Callable[[Evidence, GateConfig, Comparisons | None], GateResult]


@dataclass(frozen=True)
class GateSpec:
    """One gate of a profile: its name (the key of its result in a verdict), the check that judges it,
    and what the next step needs to know about it.

    A profile's gates are a tuple of these, run in that order (the verdict lists them so);
    every list of gate names is derived from it (:mod:`tooldisc.canary.next_step`, the
    verdict's wording in :mod:`tooldisc.reports.canary_decision`).

    ``metrics``: the metrics it judges (for a canary gate, the :data:`~tooldisc.canary.comparisons.GUARDED`
    metrics that name it, :func:`~tooldisc.canary.comparisons.judged_by`); such a gate not judged
    waits for requests. ``waits``: when it holds, more data alone can mend it (the next step is
    to wait, unless its numbers say otherwise). ``fix``: the next step a reader is told when it
    holds and waiting cannot mend it.
    """

    name: str
    check: Callable[..., GateResult]
    metrics: tuple[str, ...] = ()
    waits: bool = False
    fix: str = ""


def fix_reported(name: str) -> str:
    """The next step of a gate with no more specific advice: fix what its reason says."""
    return f"Fix what the {name} gate reports, then judge again."


GATES: tuple[GateSpec, ...] = (
    GateSpec("data", gate_data, fix="Check the assignment and the export: an arm has no requests in the window."),
    GateSpec("sample_ratio", gate_sample_ratio,
             fix="Fix assignment or logging, then judge a new window; waiting does not help."),
    GateSpec("security", gate_security,
             fix="Fix the export so every row carries its security flags, then judge again."),
    GateSpec("task", gate_task, metrics=judged_by("task"), fix=fix_reported("task")),
    GateSpec("retrieval", gate_retrieval, metrics=judged_by("retrieval"), fix=fix_reported("retrieval")),
    GateSpec("fallback", gate_fallback, metrics=judged_by("fallback"),
             fix="Fix the experiment's fallback path; more requests will not change this."),
    GateSpec("latency", gate_latency, metrics=judged_by("latency"), fix=fix_reported("latency")),
    GateSpec("kill_switch", gate_kill_switch,
             fix="Find out why the kill switch was engaged; judge a window that starts after it was released "
                 "(--since)."),
    GateSpec("quarantine", gate_quarantine,
             fix="Fix what writes the quarantined rows (see the reasons below), then judge again."),
)
GATE_NAMES: tuple[str, ...] = tuple(g.name for g in GATES)


def decide(gates: tuple[GateResult, ...]) -> str:
    """ROLLBACK > HOLD > PROMOTE; ``not_judged`` holds, ``reported`` never blocks."""
    if any(g.status == FAIL and g.outcome == ROLLBACK for g in gates):
        return ROLLBACK
    if any(g.status in (FAIL, NOT_JUDGED) for g in gates):
        return HOLD
    return PROMOTE


def next_percent(verdict: str, current: float | None, ladder: tuple[float, ...]) -> float | None:
    """Next ladder step on PROMOTE, current on HOLD, 0 on ROLLBACK, None at 100 or unknown."""
    if verdict == ROLLBACK:
        return 0
    if current is None or current >= 100:
        return None
    if verdict == HOLD:
        return _num(current)
    return _num(next((s for s in ladder if s > current), 100))


def _num(x: float) -> float:
    return int(x) if float(x).is_integer() else x


def judge(ev: Evidence, cfg: GateConfig | None = None) -> Verdict:
    """Compare the guarded metrics once, run every gate in the documented order, decide."""
    cfg = cfg or GateConfig()
    cmp = compare(ev, cfg) if _comparable(ev, cfg) is None else None
    results = tuple(g.check(ev, cfg, cmp) for g in GATES)
    verdict = decide(results)
    current = _num(ev.current_percent) if ev.current_percent is not None else None
    nxt = next_percent(verdict, ev.current_percent, cfg.ladder)
    comparisons = tuple(cmp.values()) if cmp is not None else ()
    return Verdict(profile="canary", experiment=ev.experiment, verdict=verdict, next_percent=nxt,
                   current_percent=current, gates=results, evidence=ev, comparisons=comparisons,
                   next_step=next_step("canary", verdict, nxt, current, results, comparisons, ev, cfg, GATES),
                   sequential=sequential_view(ev, cfg))
