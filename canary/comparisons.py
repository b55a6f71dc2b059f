"""Guarded metrics: is the experiment shown worse, shown non-inferior, or not yet known?

Each guarded metric (:data:`GUARDED`) is one record: which gate it belongs to, whether
higher is better, and how to read it from an arm. :func:`compare` judges all of them at
once over frozen evidence:

* **shown worse** — the always-valid one-sided bound shows the experiment worse than
  control (no margin), Holm-corrected at ``worse_alpha`` across every metric and every
  segment value (``channel``, ``mode``, ``mutation`` by default). A segment counts at
  any size; the 500-per-arm floor applies to the whole window.
* **shown non-inferior** — on the whole window, the always-valid one-sided bound at
  ``non_inferiority_alpha`` shows the experiment no worse than control by more than the
  metric's margin (absolute, or relative to control).
* **inconclusive** — neither; the result says how many more requests per arm would
  conclude at the configured power if the observed rates hold, and how long that
  takes at the window's request rate.

Rates are compared as Agresti–Caffo adjusted proportions; latency as its p95 (the
configured quantile) on the whole window, via quantile confidence sequences of each
arm (union bound), and — per segment, where only sums leave the engine — as mean
latency. Boundaries and references: :mod:`tooldisc.canary.sequential`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooldisc.canary.aggregate import ArmStats, Evidence
from tooldisc.canary.config import GateConfig, Margin
from tooldisc.canary.sequential import (
    Boundary,
    Mixture,
    contrast_shown,
    mean_contrast,
    norm_ppf,
    quantile_lower,
    quantile_radius,
    quantile_upper,
    rate_contrast,
    requests_to_show,
    smallest_alpha,
)
from tooldisc.stats import holm

WORSE, NON_INFERIOR, INCONCLUSIVE = "worse", "non_inferior", "inconclusive"


@dataclass(frozen=True)
class Guarded:
    """A guarded metric: ``read`` gives (successes, units) of an arm for a rate
    (successes −1 when the evidence is missing, which is never read as zero)."""

    name: str
    gate: str
    kind: str  # "rate" | "quantile"
    higher_is_better: bool
    read: Callable[[ArmStats], tuple[int, int]] | None = None


GUARDED: tuple[Guarded, ...] = (
    Guarded("task_success", "task", "rate", True, lambda a: (a.task_successes, a.task_known)),
    Guarded("tool_execution_success", "task", "rate", True,
            lambda a: (a.execution_successes, a.execution_known)),
    Guarded("discovery_miss", "retrieval", "rate", False,
            lambda a: (a.flags.get("discovery_miss", -1), a.requests)),
    Guarded("fallback", "fallback", "rate", False, lambda a: (a.flags.get("fallback", -1), a.requests)),
    Guarded("latency", "latency", "quantile", False),
)


def judged_by(gate: str) -> tuple[str, ...]:
    """The guarded metrics ``gate`` judges, in :data:`GUARDED` order (its record's ``metrics``)."""
    return tuple(g.name for g in GUARDED if g.gate == gate)


@dataclass(frozen=True)
class MetricResult:
    """One guarded metric's judgement, with the numbers behind it (JSON-ready)."""

    name: str
    gate: str
    outcome: str
    reason: str
    numbers: dict[str, Any]


def _r(x: float | None, digits: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), digits)


def _rate_contrasts(g: Guarded, e: ArmStats, c: ArmStats, margin: Margin) -> tuple[Any, Any] | None:
    """(worse contrast, non-inferiority contrast); each is "shown" when positive."""
    assert g.read is not None
    xe, ne = g.read(e)
    xc, nc = g.read(c)
    if ne <= 0 or nc <= 0 or xe < 0 or xc < 0:  # no units, or the flag is missing: no evidence
        return None
    sign = -1.0 if g.higher_is_better else 1.0  # + when the experiment's change is bad
    worse = rate_contrast(xe, ne, xc, nc, sign, -sign, 0.0)
    m = margin.value
    if margin.kind == "absolute":
        ni = rate_contrast(xe, ne, xc, nc, -sign, sign, m)
    else:  # experiment within (1 ± m) of control
        ni = rate_contrast(xe, ne, xc, nc, -sign, sign * (1 + sign * m), 0.0)
    return worse, ni


def _latency_ni(e: ArmStats, c: ArmStats, p: float, margin: Margin, b: Boundary,
                alpha: float) -> tuple[bool, float, float]:
    """Shown non-inferior when experiment's upper bound ≤ control's lower bound ⊕ margin."""
    assert e.latency_order is not None and c.latency_order is not None
    up = quantile_upper(e.latency_order, p, b, alpha / 2)
    low = quantile_lower(c.latency_order, p, b, alpha / 2)
    limit = low * (1 + margin.value) if margin.kind == "relative" else low + margin.value
    return up <= limit, up, limit


def _latency_worse_p(e: ArmStats, c: ArmStats, p: float, b: Boundary) -> float:
    assert e.latency_order is not None and c.latency_order is not None
    eo, co = e.latency_order, c.latency_order
    return smallest_alpha(lambda a: quantile_lower(eo, p, b, a / 2) > quantile_upper(co, p, b, a / 2))


def _latency_shown(e: ArmStats, c: ArmStats, p: float, margin: Margin, b: Boundary, alpha: float,
                   power: float) -> Callable[[float, float], bool] | None:
    """``ok(n_e, n_c)`` for :func:`requests_to_show`: with that many requests per arm, would
    the observed quantile functions show non-inferiority with ``power``? None when the
    observed quantiles themselves are beyond the margin (no number of requests helps)."""
    assert e.latency_order is not None and c.latency_order is not None
    eo, co = e.latency_order, c.latency_order
    z = norm_ppf(power)

    def q_at(os: Any, level: float, upper: bool) -> float:
        r = math.floor(os.n * level) + 1 if upper else math.ceil(os.n * level)
        return os.at_rank_at_least(r) if upper else os.at_rank_at_most(r)

    def limit_of(low: float) -> float:
        return low * (1 + margin.value) if margin.kind == "relative" else low + margin.value

    def ok(ne: float, nc: float) -> bool:
        ue = quantile_radius(p, ne, b, alpha / 2) + z * math.sqrt(p * (1 - p) / ne)
        uc = quantile_radius(p, nc, b, alpha / 2) + z * math.sqrt(p * (1 - p) / nc)
        return q_at(eo, p + ue, True) <= limit_of(q_at(co, p - uc, False))

    if q_at(eo, p, True) > limit_of(q_at(co, p, False)):
        return None
    return ok


@dataclass(frozen=True)
class Accrual:
    """How a window grows: requests per hour, and the rollout percents to ask about (the
    current one and the next ladder step), so "how long" is answered for both."""

    per_hour: float | None
    shares: tuple[tuple[float, float], ...]  # (percent, experiment share)


def accrual(ev: Evidence, cfg: GateConfig) -> Accrual:
    """The window's request rate and the percents a wait is computed for: the current
    percent (or the observed split when it is unknown) and the next ladder step."""
    requests = sum(a.requests for a in ev.arms.values())
    per_hour = requests / ev.span_hours if ev.span_hours and ev.span_hours > 0 and requests else None
    pct = ev.current_percent
    shares: list[tuple[float, float]] = []
    if pct is not None and 0 < pct < 100:
        shares.append((pct, pct / 100))
        nxt = next((step for step in cfg.ladder if step > pct), None)
        if nxt is not None:
            shares.append((nxt, min(nxt, 100) / 100))
    elif requests:
        e = ev.arms.get("experiment")
        shares.append((pct if pct is not None else 100 * (e.requests if e else 0) / requests,
                       (e.requests if e else 0) / requests))
    return Accrual(per_hour, tuple(shares))


def wait_at(requests: float | None, share: float, per_hour: float | None) -> dict[str, Any]:
    """Further requests (split by ``share``) and the hours they take at ``per_hour``."""
    if requests is None:
        return {"requests_per_arm": None, "hours": None,
                "note": "not reachable if the observed difference holds"}
    hours = requests / per_hour if per_hour else None
    return {"requests_per_arm": {"experiment": math.ceil(requests * share),
                                 "control": math.ceil(requests * (1 - share))},
            "hours": _r(hours, 2)}


def _needed(ok: Callable[[float, float], bool] | None, have: tuple[float, float],
            unit_share: tuple[float, float], acc: Accrual) -> dict[str, Any]:
    """What an inconclusive metric still needs: further requests per arm and hours at the
    window's rate, at the current percent, and (``next_step``) at the next ladder step."""
    out: dict[str, Any] = {}
    for i, (pct, share) in enumerate(acc.shares):
        r = None if ok is None else requests_to_show(ok, have, (share * unit_share[0],
                                                                (1 - share) * unit_share[1]))
        at = wait_at(r, share, acc.per_hour)
        if i == 0:
            out.update(at)
        else:
            out["next_step"] = {"percent": pct, **at}
    if not out:
        out = wait_at(None, 0.0, None)
    return out


def interval(kind: str, estimate: float, low: float, high: float, limit: float,
             higher_is_better: bool, alpha: float) -> dict[str, Any]:
    """A guarded metric's always-valid interval as the forest plot and sequential view draw
    it: ``kind`` ``difference`` (experiment − control, a rate), ``ratio`` or
    ``difference_ms`` (latency); ``limit`` is the margin on that scale, and ``worse`` says
    which side is harm. Shown non-inferior exactly when the harm-side end is within ``limit``."""
    return {"kind": kind, "estimate": _r(estimate), "low": _r(low), "high": _r(high), "limit": _r(limit),
            "worse": "lower" if higher_is_better else "higher", "alpha": alpha}


def rate_interval(g: Guarded, xe: int, ne: int, xc: int, nc: int, margin: Margin, b: Boundary,
                  alpha: float) -> dict[str, Any] | None:
    """The Agresti–Caffo difference with its always-valid two one-sided bounds at ``alpha``
    (each the bound the non-inferiority decision reads), and the margin as a difference
    (a relative margin at control's observed rate)."""
    if ne <= 0 or nc <= 0 or xe < 0 or xc < 0:
        return None
    sign = -1.0 if g.higher_is_better else 1.0
    worse = rate_contrast(xe, ne, xc, nc, sign, -sign, 0.0)
    d = sign * worse.estimate
    half = worse.se * b.multiplier(worse.t, alpha)
    limit = sign * (margin.value if margin.kind == "absolute" else margin.value * xc / nc)
    return interval("difference", d, d - half, d + half, limit, g.higher_is_better, alpha)


def latency_interval(pe: float, pc: float, low_e: float, up_e: float, low_c: float, up_c: float,
                     margin: Margin, alpha: float) -> dict[str, Any]:
    """Experiment vs control latency quantile: a ratio (relative margin) or a difference in
    ms (absolute margin); ends from each arm's always-valid bounds at ``alpha``/2."""
    def div(a: float, b: float) -> float:
        return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.inf

    if margin.kind == "relative":
        return interval("ratio", div(pe, pc), div(low_e, up_c), div(up_e, low_c), 1 + margin.value,
                        False, alpha)
    return interval("difference_ms", pe - pc, low_e - up_c, up_e - low_c, margin.value, False, alpha)


def compare(ev: Evidence, cfg: GateConfig) -> dict[str, MetricResult]:
    """Every guarded metric judged on ``ev`` (both arms must be present and ≥ the floor)."""
    b = Mixture.tuned(cfg.sequential_tuning_requests, cfg.non_inferiority_alpha)
    ctrl, exp = ev.arms["control"], ev.arms["experiment"]
    p = cfg.latency_quantile
    acc = accrual(ev, cfg)

    # 1. every "worse" hypothesis: metric × (whole window + each segment value)
    family: list[tuple[str, str | None, str | None, float]] = []
    for g in GUARDED:
        cells: list[tuple[str | None, str | None, ArmStats, ArmStats]] = [(None, None, exp, ctrl)]
        for seg, values in ev.segments.items():
            for value, arms in values.items():
                if "control" in arms and "experiment" in arms:
                    cells.append((seg, value, arms["experiment"], arms["control"]))
        for seg, value, e, c in cells:
            if g.kind == "rate":
                pair = _rate_contrasts(g, e, c, cfg.margins[g.name])
                if pair is None:
                    continue
                family.append((g.name, seg, value, pair[0].p_positive(b)))
            elif seg is None:
                if e.latency_order is None or c.latency_order is None:
                    continue
                family.append((g.name, None, None, _latency_worse_p(e, c, p, b)))
            else:
                if e.requests < 2 or c.requests < 2:
                    continue
                mc = mean_contrast(e.latency_sum, e.latency_sumsq, e.requests, c.latency_sum,
                                   c.latency_sumsq, c.requests, 1.0, -1.0, 0.0)
                family.append((g.name, seg, value, mc.p_positive(b)))
    # tooldisc's one Holm (adjusted p-values); a test is rejected when its adjusted p <= alpha
    rejected = [q <= cfg.worse_alpha for q in holm([f[3] for f in family])]
    worse_by_metric: dict[str, list[dict[str, Any]]] = {g.name: [] for g in GUARDED}
    p_whole: dict[str, float] = {}
    for (name, seg, value, pv), rej in zip(family, rejected, strict=True):
        if seg is None:
            p_whole[name] = pv
        if rej:
            worse_by_metric[name].append({"segment": seg, "value": value, "p_value": float(f"{pv:.6g}")})

    # 2. non-inferiority on the whole window, and what an inconclusive result still needs
    out: dict[str, MetricResult] = {}
    for g in GUARDED:
        margin = cfg.margins[g.name]
        nums: dict[str, Any] = {"margin": {margin.kind: margin.value},
                                "higher_is_better": g.higher_is_better,
                                "hypotheses_in_family": len(family)}
        shown_ni = False
        needed: dict[str, Any] | None = None
        alpha = cfg.non_inferiority_alpha
        if g.kind == "rate":
            pair = _rate_contrasts(g, exp, ctrl, margin)
            if pair is None:
                out[g.name] = MetricResult(g.name, g.gate, INCONCLUSIVE,
                                           f"{g.name}: no known outcome in an arm", nums)
                continue
            ni_c = pair[1]
            assert g.read is not None
            (xe, ne), (xc, nc) = g.read(exp), g.read(ctrl)
            bound = ni_c.lower(b, alpha)
            shown_ni = bound > 0
            nums.update({"experiment": {"successes": xe, "n": ne, "rate": _r(xe / ne)},
                         "control": {"successes": xc, "n": nc, "rate": _r(xc / nc)},
                         "delta": _r(xe / ne - xc / nc),
                         "non_inferiority_slack": _r(bound),
                         "interval": rate_interval(g, xe, ne, xc, nc, margin, b, alpha),
                         "worse_p_value": float(f"{p_whole.get(g.name, 1.0):.6g}")})
            if not shown_ni:
                needed = _needed(contrast_shown(ni_c, b, alpha, cfg.power), (ni_c.n_e, ni_c.n_c),
                                 (ne / max(exp.requests, 1), nc / max(ctrl.requests, 1)), acc)
        else:
            if exp.latency_order is None or ctrl.latency_order is None:
                out[g.name] = MetricResult(g.name, g.gate, INCONCLUSIVE, "latency: no latency values",
                                           nums)
                continue
            shown_ni, up, limit = _latency_ni(exp, ctrl, p, margin, b, alpha)
            key = f"p{round(p * 100, 2):g}"
            nums.update({"statistic": key,
                         "experiment": {key: exp.latency.get(key), "upper_bound": _r(up, 3)},
                         "control": {key: ctrl.latency.get(key)},
                         "limit": _r(limit, 3),
                         "worse_p_value": float(f"{p_whole.get(g.name, 1.0):.6g}")})
            pe, pc = exp.latency.get(key), ctrl.latency.get(key)
            if pe is not None and pc is not None:
                nums["interval"] = latency_interval(
                    pe, pc, quantile_lower(exp.latency_order, p, b, alpha / 2), up,
                    quantile_lower(ctrl.latency_order, p, b, alpha / 2),
                    quantile_upper(ctrl.latency_order, p, b, alpha / 2), margin, alpha)
            if not shown_ni:
                needed = _needed(_latency_shown(exp, ctrl, p, margin, b, alpha, cfg.power),
                                 (exp.requests, ctrl.requests), (1.0, 1.0), acc)
        worse = worse_by_metric[g.name]
        nums["shown_worse"] = worse
        if worse:
            where = ", ".join("whole window" if w["segment"] is None else f"{w['segment']}={w['value']}"
                              for w in worse)
            out[g.name] = MetricResult(g.name, g.gate, WORSE,
                                       f"{g.name} shown worse than control ({where})", nums)
        elif shown_ni:
            out[g.name] = MetricResult(g.name, g.gate, NON_INFERIOR,
                                       f"{g.name} shown non-inferior within {_margin_text(margin)}",
                                       nums)
        else:
            nums["needed"] = needed
            more = ""
            if needed and needed.get("requests_per_arm"):
                r = needed["requests_per_arm"]
                more = (f"; about {r['experiment']:,} more experiment and {r['control']:,} more "
                        f"control requests")
                if needed.get("hours") is not None:
                    more += f" (~{needed['hours']:g} h at the window's rate)"
            elif needed:
                more = "; not reachable if the observed difference holds"
            out[g.name] = MetricResult(g.name, g.gate, INCONCLUSIVE,
                                       f"{g.name} inconclusive within {_margin_text(margin)}{more}",
                                       nums)
    return out


def _margin_text(m: Margin) -> str:
    return f"{m.value:g} absolute" if m.kind == "absolute" else f"{m.value:.0%} relative"
