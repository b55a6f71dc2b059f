"""The few statistics canary gates need: Wilson intervals and Pearson chi-square tests.

Closed forms over ``scipy.special`` (the normal quantile and the chi-square survival
function) rather than ``scipy.stats``, whose import alone costs ~0.6 s of a verdict's
3 s budget. Tests check these against ``statsmodels.proportion_confint(method=
"wilson")``, ``scipy.stats.chisquare`` and ``scipy.stats.chi2_contingency``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


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
    from scipy.special import ndtri

    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1; got {successes}/{n}")
    z = float(ndtri(1 - (1 - confidence) / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(successes, n, p, max(0.0, centre - half), min(1.0, centre + half))


def chi2_sf(statistic: float, dof: int) -> float:
    from scipy.special import chdtrc

    return float(chdtrc(dof, statistic))


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
