"""The always-valid statistics against statsmodels/scipy where they implement the same test."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from statsmodels.stats import proportion as sm_proportion
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower

from tests.canary.helpers import arm, evidence
from tooldisc.canary.config import GateConfig
from tooldisc.canary.gates import judge
from tooldisc.canary.sequential import (
    FixedHorizon,
    Mixture,
    OrderStats,
    quantile_lower,
    quantile_upper,
    rank,
    rate_contrast,
    units_for_contrast,
)
from tooldisc.evaluation.significance import holm


@pytest.mark.parametrize(("xe", "ne", "xc", "nc", "margin"),
                         [(8600, 10_000, 8500, 10_000, 0.02), (425, 500, 4300, 5000, 0.02),
                          (40, 1000, 300, 9000, 0.01)])
def test_agresti_caffo_z_matches_statsmodels(xe: int, ne: int, xc: int, nc: int, margin: float) -> None:
    ref = sm_proportion.test_proportions_2indep(xe, ne, xc, nc, value=-margin, method="agresti-caffo",
                                  compare="diff", alternative="larger")
    c = rate_contrast(xe, ne, xc, nc, 1.0, -1.0, margin)
    assert c.estimate / c.se == pytest.approx(ref.statistic, rel=1e-12)
    # one look with the fixed boundary is statsmodels' one-sided test
    assert FixedHorizon().p_value(c.t, c.estimate / c.se) == pytest.approx(ref.pvalue, rel=1e-9)


def test_mixture_p_value_inverts_the_boundary_and_is_more_cautious() -> None:
    b = Mixture.tuned(10_000, 0.05)
    for t in (500, 10_000, 500_000):
        for alpha in (0.05, 0.01, 1e-4):
            assert b.p_value(t, b.multiplier(t, alpha)) == pytest.approx(alpha, rel=1e-9)
            assert b.multiplier(t, alpha) > FixedHorizon().multiplier(t, alpha)


def test_holm_rejections_match_statsmodels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The canary gates reject where tooldisc's one Holm (adjusted p) is <= alpha: statsmodels' rejections."""
    # statsmodels' Holm branch runs a full gc.collect() per call (0.25 s in a test process's
    # heap); it cannot change the answer, so it is skipped here: 50 cases in ~0.1 s, not 15 s.
    monkeypatch.setattr(gc, "collect", lambda *a: 0)
    rng = np.random.default_rng(3)
    for _ in range(50):
        p = list(rng.uniform(0, 0.05, size=8) ** rng.uniform(0.5, 3))
        assert [q <= 0.01 for q in holm(p)] == list(multipletests(p, alpha=0.01, method="holm")[0])


@pytest.mark.parametrize(("effect", "ratio"), [(0.01, 9.0), (0.02, 1.0), (0.005, 3.0)])
def test_fixed_horizon_sample_size_matches_statsmodels(effect: float, ratio: float) -> None:
    # equal per-unit variance in both arms; experiment share 1 / (1 + ratio)
    sigma, alpha, power = 0.35, 0.05, 0.8
    share_e = 1 / (1 + ratio)
    sigma_unit = sigma * math.sqrt(1 / share_e + 1 / (1 - share_e))
    t = units_for_contrast(effect, sigma_unit, FixedHorizon(), alpha, power, 1.0)
    n1 = NormalIndPower().solve_power(effect_size=effect / sigma, alpha=alpha, power=power,
                                      ratio=ratio, alternative="larger")
    assert t is not None
    assert t * share_e == pytest.approx(n1, rel=1e-3)
    # the always-valid boundary needs more, and at that size it just concludes
    b = Mixture.tuned(10_000, alpha)
    tv = units_for_contrast(effect, sigma_unit, b, alpha, power, 1.0)
    assert tv is not None and tv > t
    def concludes(t: float) -> bool:
        return effect * math.sqrt(t) / sigma_unit >= b.multiplier(t, alpha) + 0.8416212335729143

    assert concludes(tv) and not concludes(tv - 2)


def test_nearest_rank_definition() -> None:
    assert [rank(k, 10) for k in (0, 500, 5000, 9500, 9501, 10_000)] == [1, 1, 5, 10, 10, 10]
    assert rank(9500, 20) == 19 and rank(9500, 7) == 7


def test_quantile_bounds_bracket_the_true_quantile_and_shrink() -> None:
    rng = np.random.default_rng(1)
    b = Mixture.tuned(10_000, 0.05)
    levels = tuple(range(0, 10_001, 10))
    widths = []
    for n in (2_000, 50_000):
        x = np.sort(rng.lognormal(np.log(120), 0.5, n))
        os = OrderStats(n, levels, tuple(float(x[rank(k, n) - 1]) for k in levels))
        lo, hi = quantile_lower(os, 0.95, b, 0.025), quantile_upper(os, 0.95, b, 0.025)
        true = 120 * math.exp(0.5 * 1.6448536269514722)
        assert lo <= true <= hi
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 3


# Fixed-count fixtures: each outcome at stated counts (rates typed here, not derived)
@pytest.mark.parametrize(("ctrl", "exp", "outcome"), [
    ((450_000, 0.85), (50_000, 0.85), "non_inferior"),   # no difference, large: shown safe
    ((450_000, 0.85), (50_000, 0.80), "worse"),          # 5 points down: shown worse
    ((5_000, 0.85), (1_000, 0.85), "inconclusive"),      # no difference, small: not yet known
    ((45_000, 0.85), (5_000, 0.835), "inconclusive"),    # 1.5 points down: neither shown yet
])
def test_task_success_outcome_at_stated_counts(ctrl: tuple[int, float], exp: tuple[int, float],
                                               outcome: str) -> None:
    v = judge(evidence(arm(ctrl[0], task_rate=ctrl[1]), arm(exp[0], task_rate=exp[1])),
              GateConfig())
    task = next(m for m in v.comparisons if m.name == "task_success")
    assert task.outcome == outcome, task.reason
    if outcome == "inconclusive":
        need = task.numbers["needed"]
        assert need["requests_per_arm"]["experiment"] > 0 and need["hours"] > 0
