"""Paired bootstrap intervals: how far each arm moved each measure from the baseline, and how surely.

``compare``'s sign test says *whether* an arm differs; a reader deciding also wants
*how much*: the change in the mean (``b - a``) with a 95 % interval. The interval is a
percentile bootstrap over queries, paired: a resample draws queries with replacement
and every arm and measure is recomputed on the *same* drawn queries, so the interval
describes the per-query differences, as the tests do.

Each measure averages over its own domain (ranking measures over the matched queries,
``no_match_success`` over the no-match ones, ``forbidden@K`` over all), so the queries
are split into strata — the groups of queries that belong to the same domains — and
each stratum is resampled to its own size. Every domain then keeps its size in every
resample (a resample never has no no-match query at all), and the draws depend only on
the strata and the seed: the interval of an arm is the same whether it is compared
alone or beside other arms.

Pure numpy, vectorised: each stratum's draws become a counts matrix (resamples ×
queries) and one matrix product gives every resampled sum of every arm and measure at
once. Seeded, so a report is byte-identical on rerun.
"""

from __future__ import annotations

import numpy as np

from tooldisc.limits import check_count
from tooldisc.params import Interval, checked

DEFAULT_RESAMPLES = 10_000
LEVEL = 0.95
METHOD = "paired percentile bootstrap over queries, stratified by measure domain"
# Draws held at once: chunks of resamples x stratum size stay near 32 MB of int64.
_CHUNK_CELLS = 4_000_000
# A second word of the seed, so the bootstrap's stream never equals the randomization test's.
_STREAM = 0xB007


def paired_intervals(diffs: np.ndarray, domains: np.ndarray, *, resamples: int = DEFAULT_RESAMPLES,
                     seed: int = 0, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of each column's mean difference; ``(low, high)``.

    ``diffs`` is queries × columns (one column per arm and measure: ``b - a`` per query,
    any value outside the column's domain ignored); ``domains`` the same shape, True
    where the query is in the column's domain. A column with an empty domain gets NaN.
    """
    check_count("resamples", resamples, "The 'resamples' parameter")
    check_count("seed", seed, "The 'seed' parameter")
    d = np.asarray(diffs, dtype=np.float64)
    mask = np.asarray(domains, dtype=bool)
    if d.ndim != 2 or d.shape != mask.shape:
        raise ValueError(f"diffs and domains must be two matrices of one shape; got {d.shape} and {mask.shape}")
    checked(Interval(float, 0, 1, closed="neither"), level, "level")
    n_cols = d.shape[1]
    d = np.where(mask, d, 0.0)
    sums = np.zeros((resamples, n_cols))
    rng = np.random.default_rng([seed, _STREAM])
    for members in _strata(mask):
        size = members.size
        part = d[members]
        chunk = max(1, _CHUNK_CELLS // size)
        for start in range(0, resamples, chunk):
            rows = min(chunk, resamples - start)
            draws = rng.integers(0, size, size=(rows, size))
            draws += (np.arange(rows) * size)[:, None]
            counts = np.bincount(draws.ravel(), minlength=rows * size).reshape(rows, size)
            sums[start:start + rows] += counts @ part
    sizes = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / sizes
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    empty = sizes == 0
    low[empty] = np.nan
    high[empty] = np.nan
    return low, high


def _strata(mask: np.ndarray) -> list[np.ndarray]:
    """Queries grouped by the set of domains they belong to, in order of each group's first query.

    Queries in no domain at all are left out: no column reads them.
    """
    if mask.shape[0] == 0:
        return []
    _, first, inverse = np.unique(mask, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    groups = []
    for g in np.argsort(first, kind="stable"):
        members = np.flatnonzero(inverse == g)
        if mask[members[0]].any():
            groups.append(members)
    return groups

