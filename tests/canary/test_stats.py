from __future__ import annotations

import pytest
from scipy.stats import chi2_contingency, chisquare
from statsmodels.stats.proportion import proportion_confint

from tooldisc.canary.stats import goodness_of_fit, independence, wilson


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 500), (425, 500), (499, 500), (7, 100_000),
                                      (8_500_000, 10_000_000)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    iv = wilson(k, n, 0.95)
    assert iv.low == pytest.approx(low, abs=1e-12)
    assert iv.high == pytest.approx(high, abs=1e-12)


def test_goodness_of_fit_matches_scipy() -> None:
    ours = goodness_of_fit([9098, 902], [0.9, 0.1])
    ref = chisquare([9098, 902], [9000, 1000])
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue)


def test_independence_matches_scipy() -> None:
    table = [[85606, 9452], [4483, 459]]
    ours = independence(table)
    ref = chi2_contingency(table, correction=False)
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue)


def test_chi2_sf_and_normal_match_scipy() -> None:
    """The standard-library closed forms against scipy over the range gates and simulations use."""
    from scipy.special import ndtri
    from scipy.stats import chi2, norm

    from tooldisc.canary.stats import chi2_sf, normal_quantile, normal_sf

    for dof in (1, 2, 3, 4, 5, 9, 10, 31, 99, 100, 399):
        for x in (0.0, 1e-9, 0.3, 1.0, 3.84, dof * 0.5, float(dof), dof + 7.0, 3.0 * dof, 60.0, 700.0, 5000.0):
            ref = float(chi2.sf(x, dof))
            assert chi2_sf(x, dof) == pytest.approx(ref, rel=1e-10, abs=1e-300), (dof, x)
    for q in (1e-12, 0.001, 0.025, 0.05, 0.5, 0.8, 0.95, 0.975, 0.999, 1 - 1e-12):
        assert normal_quantile(q) == pytest.approx(float(ndtri(q)), rel=1e-12)
    for z in (-8.0, -1.96, 0.0, 0.5, 1.645, 3.0, 8.0, 20.0):
        assert normal_sf(z) == pytest.approx(float(norm.sf(z)), rel=1e-12, abs=1e-300)
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)
