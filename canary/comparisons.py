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
    mean_contrast,
    norm_ppf,
    quantile_lower,
    quantile_radius,
    quantile_upper,
    rate_contrast,
    smallest_alpha,
    solve_units,
    units_for_contrast,
)
from tooldisc.evaluation.significance import holm

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


def _latency_needed(e: ArmStats, c: ArmStats, p: float, margin: Margin, b: Boundary, alpha: float,
                    power: float, share_e: float) -> float | None:
    """Total requests at which the observed quantile functions would show non-inferiority."""
    assert e.latency_order is not None and c.latency_order is not None
    eo, co = e.latency_order, c.latency_order
    z = norm_ppf(power)

    def q_at(os: Any, level: float, upper: bool) -> float:
        r = math.floor(os.n * level) + 1 if upper else math.ceil(os.n * level)
        return os.at_rank_at_least(r) if upper else os.at_rank_at_most(r)

    def ok(t: float) -> bool:
        ne, nc = t * share_e, t * (1 - share_e)
        ue = quantile_radius(p, ne, b, alpha / 2) + z * math.sqrt(p * (1 - p) / ne)
        uc = quantile_radius(p, nc, b, alpha / 2) + z * math.sqrt(p * (1 - p) / nc)
        up, low = q_at(eo, p + ue, True), q_at(co, p - uc, False)
        limit = low * (1 + margin.value) if margin.kind == "relative" else low + margin.value
        return up <= limit

    if q_at(eo, p, True) > (q_at(co, p, False) * (1 + margin.value) if margin.kind == "relative"
                            else q_at(co, p, False) + margin.value):
        return None
    return solve_units(ok, float(eo.n + co.n))


def _needed(total_units: float | None, units: dict[str, int], share: dict[str, float],
            unit_share: dict[str, float], ev: Evidence) -> dict[str, Any]:
    """Additional requests per arm, and hours at the window's request rate."""
    if total_units is None:
        return {"requests_per_arm": None, "hours": None,
                "note": "not reachable if the observed difference holds"}
    extra: dict[str, int] = {}
    for arm in ("control", "experiment"):
        want_units = total_units * share[arm]
        have = units[arm]
        extra[arm] = max(0, math.ceil((want_units - have) / max(unit_share[arm], 1e-12)))
    hours = None
    requests = sum(a.requests for a in ev.arms.values())
    if ev.span_hours and ev.span_hours > 0 and requests > 0:
        rate = requests / ev.span_hours
        hours = max(extra[a] / (rate * share[a]) for a in extra if share[a] > 0)
    return {"requests_per_arm": extra, "hours": _r(hours, 2)}


def compare(ev: Evidence, cfg: GateConfig) -> dict[str, MetricResult]:
    """Every guarded metric judged on ``ev`` (both arms must be present and ≥ the floor)."""
    b = Mixture.tuned(cfg.sequential_tuning_requests, cfg.non_inferiority_alpha)
    ctrl, exp = ev.arms["control"], ev.arms["experiment"]
    p = cfg.latency_quantile
    pct = ev.current_percent
    share_e = (pct / 100) if pct is not None and 0 < pct < 100 else exp.requests / (exp.requests + ctrl.requests)
    share = {"experiment": share_e, "control": 1 - share_e}

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
        if g.kind == "rate":
            pair = _rate_contrasts(g, exp, ctrl, margin)
            if pair is None:
                out[g.name] = MetricResult(g.name, g.gate, INCONCLUSIVE,
                                           f"{g.name}: no known outcome in an arm", nums)
                continue
            ni_c = pair[1]
            assert g.read is not None
            (xe, ne), (xc, nc) = g.read(exp), g.read(ctrl)
            bound = ni_c.lower(b, cfg.non_inferiority_alpha)
            shown_ni = bound > 0
            # for the chart: the difference, its always-valid bound in the bad direction, and
            # where the margin sits (in rate points at control's observed rate)
            good = 1.0 if g.higher_is_better else -1.0
            delta = xe / ne - xc / nc
            worse_c = pair[0]
            d_bound = delta - good * worse_c.se * b.multiplier(worse_c.t, cfg.non_inferiority_alpha)
            m_line = -good * (margin.value if margin.kind == "absolute" else margin.value * xc / nc)
            nums.update({"experiment": {"successes": xe, "n": ne, "rate": _r(xe / ne)},
                         "control": {"successes": xc, "n": nc, "rate": _r(xc / nc)},
                         "delta": _r(xe / ne - xc / nc),
                         "non_inferiority_slack": _r(bound),
                         "chart": {"unit": "rate difference", "estimate": _r(delta),
                                   "bound": _r(d_bound), "margin": _r(m_line)},
                         "worse_p_value": float(f"{p_whole.get(g.name, 1.0):.6g}")})
            if not shown_ni:
                sigma = math.sqrt(ni_c.a ** 2 * ni_c.var_e / share_e
                                  + ni_c.b ** 2 * ni_c.var_c / (1 - share_e))
                t_need = units_for_contrast(ni_c.estimate, sigma, b, cfg.non_inferiority_alpha,
                                            cfg.power, ni_c.t)
                needed = _needed(t_need, {"experiment": ne, "control": nc}, share,
                                 {"experiment": ne / max(exp.requests, 1),
                                  "control": nc / max(ctrl.requests, 1)}, ev)
        else:
            if exp.latency_order is None or ctrl.latency_order is None:
                out[g.name] = MetricResult(g.name, g.gate, INCONCLUSIVE, "latency: no latency values",
                                           nums)
                continue
            shown_ni, up, limit = _latency_ni(exp, ctrl, p, margin, b, cfg.non_inferiority_alpha)
            key = f"p{round(p * 100, 2):g}"
            nums.update({"statistic": key,
                         "experiment": {key: exp.latency.get(key), "upper_bound": _r(up, 3)},
                         "control": {key: ctrl.latency.get(key)},
                         "limit": _r(limit, 3),
                         "worse_p_value": float(f"{p_whole.get(g.name, 1.0):.6g}")})
            pe, pc = exp.latency.get(key), ctrl.latency.get(key)
            low_c = quantile_lower(ctrl.latency_order, p, b, cfg.non_inferiority_alpha / 2)
            if pe is not None and pc is not None and math.isfinite(up) and math.isfinite(low_c):
                nums["chart"] = {"unit": f"{key} difference (ms)", "estimate": _r(pe - pc, 3),
                                 "bound": _r(up - low_c, 3), "margin": _r(limit - low_c, 3)}
            if not shown_ni:
                t_need = _latency_needed(exp, ctrl, p, margin, b, cfg.non_inferiority_alpha,
                                         cfg.power, share_e)
                needed = _needed(t_need, {"experiment": exp.requests, "control": ctrl.requests},
                                 share, {"experiment": 1.0, "control": 1.0}, ev)
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
