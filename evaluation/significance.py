"""Paired significance tests for config-vs-config comparisons, and Holm's correction.

Two ranker configs answer the *same* queries, so every test here is paired: it looks
at per-query differences ``b - a``.

The **exact sign test** decides: over the queries that moved, is one direction more
common than a fair coin would make it? It is exact at every sample size and for every
measure, including the 0/1 safety measures where a handful of queries all moving the
same way is the whole story (18 new false abstentions and no fewer one is p = 7.6e-6,
which a "needs 20 that moved" rule used to hide). The randomization (sign-flip) test on
the mean difference, the one IR evaluation trusts for effect sizes (Smucker, Allan &
Carterette 2007), and the paired t-test are reported beside it as second opinions.
Holm's step-down correction keeps the family-wise error rate when several measures
(and several arms) are compared at once; it is the one Holm in tooldisc (the canary
gates call it too).

Pure numpy/scipy: no I/O, explicit seeds, so a comparison is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tooldisc.errors import UsageError
from tooldisc.params import Interval, checked
from tooldisc.stats import (
    holm as holm,  # re-exported: the one Holm lives in the base layer (the canary uses it)
)

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

    @property
    def p_sign(self) -> float:
        """The exact two-sided sign test over the queries that moved (what ``compare`` decides by).

        Computed on first use: ``learn``'s judges read only the randomization p and need
        not import ``scipy.stats``.
        """
        return sign_test_p(self.wins, self.losses)


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


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: P(a split at least this uneven | each moved query a fair coin).

    Ties (queries that did not move) carry no information about direction and are left
    out, as the sign test prescribes. Nothing moved gives 1.0.
    """
    for name, v in (("wins", wins), ("losses", losses)):
        checked(Interval(int, 0, None, strict=True), v, name, UsageError)
    if wins + losses == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(wins, wins + losses, 0.5).pvalue)


def sign_test_floor(moved: int) -> float:
    """The smallest p the two-sided sign test can give when ``moved`` queries moved: all one way.

    ``2 · 2^-moved`` (capped at 1). A measure whose floor is not below α/m can never be
    called significant in a family of m tests, whatever the data say: that, and only
    that, is "too small to tell".
    """
    return 1.0 if moved <= 0 else min(1.0, 2.0 * 0.5 ** moved)


def sign_test_needs(level: float) -> int | None:
    """The fewest moved queries whose sign-test floor is below ``level`` (None when ``level`` <= 0)."""
    if not level > 0.0:
        return None
    n = 1
    while sign_test_floor(n) >= level:
        n += 1
    return n


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
    wins = int(np.count_nonzero(better > _EPS))
    losses = int(np.count_nonzero(better < -_EPS))
    return PairedTest(
        n=int(av.size),
        mean_a=float(av.mean()) if av.size else float("nan"),
        mean_b=float(bv.mean()) if bv.size else float("nan"),
        wins=wins,
        ties=int(np.count_nonzero(np.abs(d) <= _EPS)),
        losses=losses,
        p_randomization=p_rand,
        p_ttest=ttest_p(d),
        exact=exact,
    )
