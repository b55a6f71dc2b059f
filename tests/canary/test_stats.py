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
