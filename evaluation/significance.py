"""Paired significance tests for config-vs-config comparisons, and Holm's correction.

Two ranker configs answer the *same* queries, so every test here is paired: it looks
at per-query differences ``b - a``. The randomization (sign-flip) test is the one
IR evaluation trusts (Smucker, Allan & Carterette 2007); the paired t-test is reported
beside it because readers expect it. Holm's step-down correction keeps the
family-wise error rate when several measures are compared at once.

Pure numpy/scipy: no I/O, explicit seeds, so a comparison is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tooldisc.errors import UsageError

# Sign-flip sums closer than this count as equal: per-query values are sums of a
# few floats, and an exact ``>=`` would let rounding decide a tie.
_EPS = 1e-9
# Enumerate every sign pattern (an exact test) up to this many non-zero differences.
_EXACT_MAX = 16


@dataclass(frozen=True)
class PairedTest:
    """One measure's paired comparison: what moved, how often, and how surely."""

    n: int
    mean_a: float
    mean_b: float
    wins: int  # queries where b is better than a
    ties: int
    losses: int
    p_randomization: float
    p_ttest: float
    exact: bool  # the randomization p-value enumerates every sign pattern

    @property
    def delta(self) -> float:
        return self.mean_b - self.mean_a

    @property
    def discordant(self) -> int:
        return self.wins + self.losses


def randomization_p(diff: Sequence[float] | np.ndarray, *, permutations: int = 10_000,
                    seed: int = 0) -> tuple[float, bool]:
    """Two-sided paired randomization test on ``diff``; returns ``(p, exact)``.

    Under the null hypothesis each query's difference is as likely to have either
    sign. Zero differences cannot change the statistic, so only the non-zero ones
    are flipped. With at most 16 of them every one of the 2^n sign patterns is
    enumerated and p is exact; otherwise ``permutations`` random patterns are drawn
    with ``seed`` and p is ``(hits + 1) / (permutations + 1)``, which is never 0.
    """
    from tooldisc.limits import check_count

    check_count("permutations", permutations, "The 'permutations' parameter")
    d = np.asarray(diff, dtype=np.float64)
    d = d[np.abs(d) > _EPS]
    n = d.size
    if n == 0:
        return 1.0, True
    observed = abs(float(d.sum()))
    if n <= _EXACT_MAX:
        patterns = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int8)
        signs = 1 - 2 * patterns  # every ±1 vector, one per row
        sums = np.abs(signs @ d)
        return float(np.count_nonzero(sums >= observed - _EPS)) / float(1 << n), True
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, min(permutations, 2_000_000 // max(n, 1)))  # bound memory: chunk × n int8
    done = 0
    while done < permutations:
        m = min(chunk, permutations - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - _EPS))
        done += m
    return (hits + 1) / (permutations + 1), False


def ttest_p(diff: Sequence[float] | np.ndarray) -> float:
    """Two-sided paired t-test p-value (equals ``scipy.stats.ttest_rel`` on ``a + d`` vs ``a``).

    The closed form over ``scipy.special.stdtr`` (Student's t CDF): importing
    ``scipy.stats`` costs 1–3 s, more than the whole comparison of a small gold set.
    All-zero differences give 1.0 (nothing changed) instead of scipy's NaN; constant
    non-zero differences give 0.0 (every query moved the same way by the same amount).
    """
    d = np.asarray(diff, dtype=np.float64)
    if d.size < 2 or not np.any(np.abs(d) > _EPS):
        return 1.0
    if np.ptp(d) <= _EPS:
        return 0.0
    from scipy.special import stdtr

    t = float(np.mean(d) / (np.std(d, ddof=1) / np.sqrt(d.size)))
    return float(min(1.0, 2.0 * stdtr(d.size - 1, -abs(t))))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order.

    Step-down: sort ascending, multiply the i-th smallest by ``m - i``, enforce
    monotonicity with a running maximum, cap at 1. Equals statsmodels'
    ``multipletests(method="holm")[1]``; NaN inputs stay NaN and do not count in m.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out.tolist()
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out[order] = adjusted
    return out.tolist()


def paired_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                lower_is_better: bool = False, permutations: int = 10_000, seed: int = 0) -> PairedTest:
    """Compare per-query values ``a`` and ``b`` (same queries, same order).

    A *win* is a query where ``b`` beats ``a`` — higher, or lower when
    ``lower_is_better`` (forbidden, false abstention, cost).
    """
    av = np.asarray(a, dtype=np.float64)
    bv = np.asarray(b, dtype=np.float64)
    if av.shape != bv.shape or av.ndim != 1:
        raise UsageError(f"paired values must be two 1-D sequences of equal length; got {av.shape} and {bv.shape}")
    d = bv - av
    better = -d if lower_is_better else d
    p_rand, exact = randomization_p(d, permutations=permutations, seed=seed)
    return PairedTest(
        n=int(av.size),
        mean_a=float(av.mean()) if av.size else float("nan"),
        mean_b=float(bv.mean()) if bv.size else float("nan"),
        wins=int(np.count_nonzero(better > _EPS)),
        ties=int(np.count_nonzero(np.abs(d) <= _EPS)),
        losses=int(np.count_nonzero(better < -_EPS)),
        p_randomization=p_rand,
        p_ttest=ttest_p(d),
        exact=exact,
    )
