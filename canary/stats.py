"""The few statistics canary gates need: Wilson intervals and Pearson chi-square tests.

Closed forms over the standard library (``statistics.NormalDist`` for the normal
quantile, a finite sum for the chi-square survival function of integer degrees of
freedom) rather than scipy: importing ``scipy.stats`` costs ~0.6 s and even
``scipy.special`` with numpy ~0.3 s, a tenth of a verdict's 3 s budget over 10M
events. Tests check these against ``statsmodels.proportion_confint(method="wilson")``,
``scipy.stats.chisquare``, ``scipy.stats.chi2_contingency`` and ``scipy.stats.chi2.sf``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

_NORMAL = NormalDist()


@dataclass(frozen=True)
class Interval:
    """A proportion with its two-sided Wilson score interval."""

    successes: int
    n: int
    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    dof: int
    p_value: float


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval (no continuity correction) of ``successes / n``; ``n`` ≥ 1."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1; got {successes}/{n}")
    z = normal_quantile(1 - (1 - confidence) / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(successes, n, p, max(0.0, centre - half), min(1.0, centre + half))


def normal_quantile(q: float) -> float:
    """Standard normal quantile (Wichura's AS241 in ``statistics``, as ``scipy.special.ndtri``)."""
    return _NORMAL.inv_cdf(q)


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X ≥ statistic) for X ~ chi-square with ``dof`` ≥ 1 (an integer).

    The regularised upper incomplete gamma Q(dof/2, x/2) as its finite sum: every term
    is positive (no cancellation) and is formed in log space (no overflow at large x).
    """
    if dof < 1 or dof != int(dof):
        raise ValueError(f"degrees of freedom must be a positive integer; got {dof}")
    x = max(0.0, float(statistic)) / 2.0
    if x == 0.0:
        return 1.0
    log_x = math.log(x)
    if dof % 2 == 0:  # Q(m, x) = e^-x Σ_{i<m} x^i / i!
        total = sum(math.exp(i * log_x - x - math.lgamma(i + 1)) for i in range(dof // 2))
    else:  # Q(m + 1/2, x) = erfc(√x) + e^-x Σ_{i=1..m} x^(i-1/2) / Γ(i + 1/2)
        total = math.erfc(math.sqrt(x)) + sum(math.exp((i - 0.5) * log_x - x - math.lgamma(i + 0.5))
                                              for i in range(1, (dof - 1) // 2 + 1))
    return min(1.0, total)


def goodness_of_fit(observed: Sequence[int], expected_share: Sequence[float]) -> ChiSquare:
    """Pearson chi-square of counts against expected shares (which must sum to 1)."""
    total = sum(observed)
    if total <= 0:
        raise ValueError("no observations")
    stat = 0.0
    for obs, share in zip(observed, expected_share, strict=True):
        exp = total * share
        if exp <= 0:
            raise ValueError("every expected share must be > 0")
        stat += (obs - exp) ** 2 / exp
    dof = len(observed) - 1
    return ChiSquare(stat, dof, chi2_sf(stat, dof))


def independence(table: Sequence[Sequence[int]]) -> ChiSquare:
    """Pearson chi-square test of independence of an r×c table (no Yates correction)."""
    rows = [sum(r) for r in table]
    cols = [sum(c) for c in zip(*table, strict=True)]
    total = sum(rows)
    if total <= 0:
        raise ValueError("no observations")
    stat = 0.0
    for i, r in enumerate(table):
        for j, obs in enumerate(r):
            exp = rows[i] * cols[j] / total
            if exp <= 0:
                raise ValueError("a row or column of the table is empty")
            stat += (obs - exp) ** 2 / exp
    dof = (len(rows) - 1) * (len(cols) - 1)
    return ChiSquare(stat, dof, chi2_sf(stat, dof))
