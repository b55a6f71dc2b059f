"""Paired tests and Holm's correction against hand-computed cases and reference libraries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from tooldisc.errors import UsageError
from tooldisc.evaluation.significance import (
    holm,
    paired_test,
    randomization_p,
    sign_test_floor,
    sign_test_needs,
    sign_test_p,
    ttest_p,
)


def test_randomization_exact_tiny_case_by_hand() -> None:
    # Non-zero differences 1, -1, 2 (the 0 cannot flip): |sum| over the 8 sign patterns is
    # 2,0,4,2,2,4,0,2 → 6 of 8 are >= the observed |1 - 1 + 2| = 2.
    p, exact = randomization_p([1.0, -1.0, 2.0, 0.0])
    assert exact
    assert p == pytest.approx(6 / 8)


def test_randomization_all_same_sign_is_the_smallest_exact_p() -> None:
    p, exact = randomization_p([0.5] * 5)
    assert exact and p == pytest.approx(2 / 2**5)  # only all-plus and all-minus reach |2.5|


def test_randomization_exact_matches_brute_force_enumeration() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(size=9).round(2)
    obs = abs(d.sum())
    hits = sum(abs(np.dot(s, d)) >= obs - 1e-9 for s in itertools.product((1, -1), repeat=d.size))
    p, exact = randomization_p(d)
    assert exact and p == pytest.approx(hits / 2**d.size)


def test_randomization_monte_carlo_is_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.3, 1.0, size=40)
    p1, exact = randomization_p(d, permutations=4000, seed=1)
    p2, _ = randomization_p(d, permutations=4000, seed=1)
    assert not exact and p1 == p2
    # large n: the sign-flip distribution is close to the t-test's
    assert p1 == pytest.approx(ttest_p(d), abs=0.05)
    assert 0 < p1 <= 1


def test_randomization_no_difference_is_p_one() -> None:
    assert randomization_p([0.0, 0.0, 0.0]) == (1.0, True)
    assert randomization_p([]) == (1.0, True)


def test_randomization_rejects_bad_permutations() -> None:
    with pytest.raises(UsageError, match="permutations"):
        randomization_p([1.0], permutations=0)


def test_ttest_equals_scipy_ttest_rel() -> None:
    a = np.array([0.2, 0.5, 0.9, 0.4, 0.3, 0.8, 0.1])
    b = np.array([0.3, 0.5, 1.0, 0.6, 0.2, 0.9, 0.4])
    assert ttest_p(b - a) == pytest.approx(stats.ttest_rel(b, a).pvalue)
    rng = np.random.default_rng(7)  # the closed form against scipy over sizes, shifts and spreads
    for _ in range(300):
        n = int(rng.integers(2, 400))
        a, b = rng.random(n), rng.random(n) + rng.normal(0.0, 0.2)
        assert ttest_p(b - a) == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9, abs=1e-300)


def test_ttest_degenerate_cases() -> None:
    assert ttest_p([0.0, 0.0, 0.0]) == 1.0  # nothing moved (scipy would say NaN)
    assert ttest_p([0.2, 0.2, 0.2]) == 0.0  # every query moved by the same amount
    assert ttest_p([0.5]) == 1.0


def test_holm_known_values() -> None:
    # sorted 0.01, 0.03, 0.04, 0.2 → ×4, ×3, ×2, ×1 = 0.04, 0.09, 0.08→0.09 (monotone), 0.2
    assert holm([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []


def test_holm_equals_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(11)
    p = rng.uniform(0, 0.2, size=12)
    assert holm(p.tolist()) == pytest.approx(multipletests(p, method="holm")[1].tolist())


def test_holm_leaves_nan_out_of_the_family() -> None:
    out = holm([0.01, float("nan"), 0.02])
    assert out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.02) and np.isnan(out[1])


def test_paired_test_counts_and_direction() -> None:
    a = [0, 1, 0, 1, 1]
    b = [1, 1, 1, 0, 1]
    t = paired_test(a, b)
    assert (t.wins, t.ties, t.losses) == (2, 2, 1)
    assert t.delta == pytest.approx(0.2) and t.discordant == 3
    lower = paired_test(a, b, lower_is_better=True)  # e.g. forbidden@K: b rising is a loss
    assert (lower.wins, lower.losses) == (1, 2)
    with pytest.raises(UsageError):
        paired_test([1, 2], [1])


def test_sign_test_equals_scipy_binomtest_and_ignores_ties() -> None:
    for wins, losses in [(0, 18), (3, 0), (28, 109), (70, 161), (5, 5), (1, 0), (0, 0)]:
        want = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
        assert sign_test_p(wins, losses) == pytest.approx(want, rel=1e-12)
    t = paired_test([0] * 1982 + [0] * 18, [0] * 1982 + [1] * 18, lower_is_better=True)
    assert (t.wins, t.ties, t.losses) == (0, 1982, 18) and t.p_sign == pytest.approx(2 * 0.5 ** 18)
    with pytest.raises(UsageError, match="wins"):
        sign_test_p(-1, 2)


def test_sign_test_floor_and_how_many_moved_queries_it_needs() -> None:
    assert sign_test_floor(0) == 1.0 and sign_test_floor(1) == 1.0 and sign_test_floor(18) == 2 * 0.5 ** 18
    for n in range(1, 30):  # the floor is the p of every moved query going one way
        assert sign_test_floor(n) == pytest.approx(stats.binomtest(0, n, 0.5).pvalue)
    assert sign_test_needs(0.05 / 10) == 9 and sign_test_needs(0.05 / 20) == 10 and sign_test_needs(0.05) == 6
    assert sign_test_floor(9) < 0.005 <= sign_test_floor(8)
    assert sign_test_needs(0.0) is None


def test_there_is_one_holm() -> None:
    """issue 27: compare and the canary gates share one Holm function (a later refactor wants one)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = [p.relative_to(root).as_posix() for d in ("tooldisc", "evaluation", "canary", "metrics", "discovery",
                                                      "reports", "agent", "cli", "gold")
             for p in (root / d).rglob("*.py") if "def holm" in p.read_text("utf-8")]
    assert found == ["tooldisc/stats.py"]
