"""The paired bootstrap behind each compare delta's 95 % interval, against a plain loop over its draws.

The oracle draws the same queries from the same seeded stream, one resample at a time,
and takes the mean in each measure's domain: the vectorised counts-matrix product must
give the same interval. Then what an interval must be whatever the data (ordered, inside
the range of the differences, one point when every query moved alike), strata keeping
each domain's size, and an interval that does not depend on which other arms are compared.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tooldisc.errors import UsageError
from tooldisc.evaluation.bootstrap import _STREAM, paired_intervals


def _oracle(diffs: np.ndarray, domains: np.ndarray, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One resample at a time: each stratum (queries in the same domains, ordered by first query)
    redrawn to its size, each column's mean over the drawn queries in its domain."""
    rng = np.random.default_rng([seed, _STREAM])
    keys = [tuple(row) for row in domains]
    strata: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        strata.setdefault(key, []).append(i)
    draws = {key: rng.integers(0, len(members), size=(resamples, len(members)))
             for key, members in strata.items() if any(key)}
    means = np.empty((resamples, diffs.shape[1]))
    for r in range(resamples):
        drawn = [strata[key][j] for key, d in draws.items() for j in d[r]]
        for c in range(diffs.shape[1]):
            picked = [diffs[q, c] for q in drawn if domains[q, c]]
            means[r, c] = sum(picked) / len(picked) if picked else np.nan
    return np.quantile(means, 0.025, axis=0), np.quantile(means, 0.975, axis=0)


def test_equals_a_plain_loop_over_the_same_draws() -> None:
    rng = np.random.default_rng(7)
    n = 60
    matched = np.arange(n) < 50  # 50 matched queries, 10 no-match ones
    a, b = rng.random((n, 3)), rng.random((n, 3))
    diffs = np.column_stack([b[:, 0] - a[:, 0], b[:, 1] - a[:, 1], b[:, 2] - a[:, 2]])
    domains = np.column_stack([matched, ~matched, np.ones(n, dtype=bool)])  # nDCG-, no_match- and forbidden-like
    low, high = paired_intervals(diffs, domains, resamples=1_000, seed=3)
    want_low, want_high = _oracle(diffs, domains, 1_000, 3)
    np.testing.assert_allclose(low, want_low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, want_high, rtol=0, atol=1e-12)


def test_seeded_and_independent_of_the_other_columns() -> None:
    rng = np.random.default_rng(1)
    diffs = rng.normal(size=(200, 4))
    domains = np.ones((200, 4), dtype=bool)
    domains[180:, :2] = False
    one = paired_intervals(diffs, domains, seed=5)
    assert all(np.array_equal(x, y) for x, y in zip(one, paired_intervals(diffs, domains, seed=5), strict=True))
    assert not np.array_equal(one[0], paired_intervals(diffs, domains, seed=6)[0])
    # an arm's interval is the same compared alone or beside another arm (columns 0-1 vs 0-3)
    alone = paired_intervals(diffs[:, :2], domains[:, :2], seed=5)
    assert np.array_equal(alone[0], one[0][:2]) and np.array_equal(alone[1], one[1][:2])


def test_width_matches_the_normal_approximation() -> None:
    """A percentile interval of a mean of 400 draws of N(0.1, 1) is about ±1.96/20 wide."""
    diffs = np.random.default_rng(11).normal(0.1, 1.0, size=(400, 1))
    low, high = paired_intervals(diffs, np.ones_like(diffs, dtype=bool), seed=0)
    sd = diffs.std(ddof=1) / np.sqrt(400)
    assert high[0] - low[0] == pytest.approx(2 * 1.96 * sd, rel=0.08)
    assert low[0] < diffs.mean() < high[0]


def test_an_empty_domain_has_no_interval_and_constant_moves_one_point() -> None:
    diffs = np.array([[0.5, 1.0], [0.5, 2.0], [0.5, 3.0]])
    domains = np.array([[True, False], [True, False], [True, False]])
    low, high = paired_intervals(diffs, domains, resamples=1_000)
    assert (low[0], high[0]) == (0.5, 0.5)
    assert np.isnan(low[1]) and np.isnan(high[1])


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 25), st.integers(1, 3)),
              elements=st.floats(-1, 1, allow_nan=False)),
       st.integers(0, 2**32))
def test_ordered_and_within_the_differences(diffs: np.ndarray, seed: int) -> None:
    domains = np.ones(diffs.shape, dtype=bool)
    domains[::3, 0] = False
    low, high = paired_intervals(diffs, domains, resamples=1_000, seed=seed)
    for c in range(diffs.shape[1]):
        inside = diffs[domains[:, c], c]
        if inside.size == 0:
            assert np.isnan(low[c]) and np.isnan(high[c])
            continue
        assert inside.min() - 1e-12 <= low[c] <= high[c] <= inside.max() + 1e-12


def test_bad_arguments_are_refused() -> None:
    ok = np.zeros((3, 1)), np.ones((3, 1), dtype=bool)
    with pytest.raises(UsageError, match="resamples"):
        paired_intervals(*ok, resamples=999)
    with pytest.raises(UsageError, match="seed"):
        paired_intervals(*ok, seed=-1)
    with pytest.raises(ValueError, match="one shape"):
        paired_intervals(np.zeros((3, 2)), np.ones((3, 1), dtype=bool))
    with pytest.raises(ValueError, match="level"):
        paired_intervals(*ok, level=1.0)
