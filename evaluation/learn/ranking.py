"""The ranking parts of ``tooldisc learn``, each judged on held-out folds: expansions, phrase weights, ranker.

Every judge compares per-request nDCG@10 (graded as DESIGN §6: gain 2 for a relevant
tool, 1 for an acceptable one; within the request's cross-fitted candidates) with the part against without it, fold by fold: whatever
the part needs (a weight, a temperature, coefficients) is chosen on the other folds
only. The comparison is the paired randomization test ``tooldisc compare`` uses; a
part is kept when it wins at ``alpha``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tooldisc.evaluation.learn.options import LearnOptions, Rows

RANK_DEPTH = 10
WEIGHT_GRID = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
TEMPERATURES = (0.05, 0.1, 0.25)


@dataclass(frozen=True)
class Judged:
    """Requests' candidates laid end to end once, with what every nDCG@10 of them shares.

    The judges score the same requests under dozens of weight vectors (a grid per
    column, a ranker per fold). Sorting every candidate for each would redo the same
    work; a request's nDCG only needs where its *graded* candidates land. So each
    graded candidate is paired, once, with every candidate of its request (and
    whether that one's name sorts first), and a weight vector then costs one
    matrix-vector product and a count, per graded candidate, of the candidates ranked
    above it: by score, then by name, as discovery breaks ties. A request's value
    does not depend on which other requests are judged with it, so one evaluation
    over all requests serves every fold's subset.
    """

    x: np.ndarray  # every candidate × feature column
    graded: np.ndarray  # index into x of each candidate with a positive gain
    gain: np.ndarray  # its gain
    request: np.ndarray  # its request
    rival: np.ndarray  # per pair: index into x of a candidate of the same request
    pair_of: np.ndarray  # per pair: which graded candidate (index into graded)
    rival_name_first: np.ndarray  # per pair: the rival wins an exact tie of scores
    ideal: np.ndarray  # per request: trec_eval's ideal DCG@10
    requests: int

    @classmethod
    def of(cls, rows: Sequence[Rows]) -> Judged:
        n = len(rows)
        if not n:
            e = np.zeros(0, dtype=np.int64)
            return cls(np.zeros((0, 0)), e, np.zeros(0), e, e, e, np.zeros(0, bool), np.zeros(0), 0)
        sizes = np.array([len(r.y) for r in rows], dtype=np.int64)
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(sizes, out=start[1:])
        owner = np.repeat(np.arange(n), sizes)
        x = np.concatenate([r.x for r in rows])
        y = np.concatenate([r.gain for r in rows])
        tie = np.concatenate([r.tie for r in rows])
        graded = np.flatnonzero(y > 0)
        request = owner[graded]
        span = sizes[request]
        pair_of = np.repeat(np.arange(len(graded)), span)
        first = np.zeros(len(graded) + 1, dtype=np.int64)
        np.cumsum(span, out=first[1:])
        rival = np.arange(len(pair_of)) - first[pair_of] + start[request][pair_of]
        rival_name_first = tie[rival] < tie[graded][pair_of]
        # trec_eval's ideal: every relevant tool (gain 2), then every acceptable one (gain 1), cut at the depth;
        # gains are DESIGN's grades, so counting them is enough (no sort)
        cum = np.concatenate([[0.0], np.cumsum(_DISCOUNT)])
        n2 = np.minimum(np.bincount(owner, weights=(y == 2).astype(np.float64), minlength=n).astype(np.int64),
                        RANK_DEPTH)
        n21 = np.minimum(np.bincount(owner, weights=(y > 0).astype(np.float64), minlength=n).astype(np.int64),
                         RANK_DEPTH)
        ideal = 2.0 * cum[n2] + (cum[n21] - cum[n2])
        return cls(x, graded, y[graded], request, rival, pair_of, rival_name_first, ideal, n)

    def ndcg(self, weights: np.ndarray) -> np.ndarray:
        """Per-request nDCG@10 of ``x @ weights``; only positive scores are ranked."""
        out = np.zeros(self.requests)
        if not self.requests:
            return out
        s = self.x @ weights
        mine = s[self.graded]
        theirs = s[self.rival]
        ours = mine[self.pair_of]
        above = (theirs > ours) | ((theirs == ours) & self.rival_name_first)
        position = np.bincount(self.pair_of, weights=above, minlength=len(self.graded)).astype(np.int64)
        take = np.flatnonzero((mine > 0) & (position < RANK_DEPTH))
        take = take[np.lexsort((position[take], self.request[take]))]  # summed best first, as a sorted ranking
        dcg = np.bincount(self.request[take], weights=self.gain[take] * _DISCOUNT[position[take]],
                          minlength=self.requests)
        np.divide(dcg, self.ideal, out=out, where=self.ideal > 0)
        return out


_DISCOUNT = 1.0 / np.log2(np.arange(2, RANK_DEPTH + 2))


def ndcg(rows: Sequence[Rows], weights: np.ndarray) -> np.ndarray:
    """Per-request nDCG@10 (graded gain, ``Rows.gain``) of ``x @ weights`` within each request's candidates.

    Ties break by tool name, as in discovery; only positive scores are ranked; the
    ideal ranking is the candidates' gains sorted best first (trec_eval's). To judge
    many weight vectors on the same rows, build :class:`Judged` once instead.
    """
    return Judged.of(rows).ndcg(weights)


def verdict_of(test: Any, alpha: float) -> tuple[bool, dict[str, Any]]:
    """Keep when B (with the part) is better on average and the paired test says so at ``alpha``."""
    keep = bool(test.delta > 0 and test.p_randomization < alpha)
    return keep, {"without": round(test.mean_a, 4), "with": round(test.mean_b, 4), "wins": test.wins,
                  "losses": test.losses, "p": round(test.p_randomization, 4), "kept": keep}


def vector(columns: Sequence[str], weights: Mapping[str, float]) -> np.ndarray:
    """A weight per feature column (0 for columns ``weights`` does not name)."""
    return np.array([float(weights.get(c, 0.0)) for c in columns], dtype=np.float64)


def _best(table: np.ndarray, grid: Sequence[tuple[str, float]]) -> tuple[str, float]:
    """The (column, weight) of ``grid`` whose row of per-request nDCG@10 in ``table`` has the best mean.

    The first of equal means wins (the grid's order: columns, then weights ascending).
    """
    best, pick = -1.0, grid[0]
    for k, choice in enumerate(grid):
        score = float(table[k].mean()) if table.shape[1] else 0.0
        if score > best + 1e-12:
            best, pick = score, choice
    return pick


def judge_added(rows: Sequence[Rows], columns: Sequence[str], base: Mapping[str, float], choices: Sequence[str],
                opts: LearnOptions) -> tuple[bool, str, float, dict[str, Any]]:
    """Held-out nDCG@10 of ``base`` plus one feature (column and weight chosen on the other folds) against ``base``.

    Every (column, weight) of the grid is scored once on every request; each fold's
    choice is then the best mean over the other folds' requests.
    Returns (kept, column, weight chosen on all rows, report).
    """
    from tooldisc.evaluation.significance import paired_test

    ranked = [r for r in rows if r.y.any()]
    judged = Judged.of(ranked)
    fold = np.array([r.fold for r in ranked], dtype=np.int64)
    without = judged.ndcg(vector(columns, base))
    grid = [(col, w) for col in choices for w in WEIGHT_GRID]
    table = np.stack([judged.ndcg(vector(columns, {**base, col: w})) for col, w in grid])
    with_ = np.zeros(len(ranked))
    picks = []
    for f in range(opts.folds):
        test = fold == f
        col, w = _best(table[:, ~test], grid)
        picks.append([col, w])
        with_[test] = table[grid.index((col, w)), test]
    keep, info = verdict_of(paired_test(without, with_), opts.alpha)
    col, w = _best(table, grid)
    info.update({"measure": "nDCG@10", "weight": w, "fold_choices": picks})
    return keep, col, w, info


def _pairs(rows: Sequence[Rows], seed: int, per_positive: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Feature differences (a candidate − one of lower gain in the same request), both signs.

    A relevant tool is paired against acceptable and other candidates, an acceptable
    one against the others. Each is paired with at most ``per_positive`` candidates of
    lower gain, drawn with ``seed``, so one long candidate list cannot outweigh the rest.
    """
    rng = np.random.default_rng(seed)
    diffs = []
    for r in rows:
        for level in np.unique(r.gain[r.gain > 0])[::-1]:
            neg = np.flatnonzero(r.gain < level)
            if len(neg) > per_positive:
                neg = rng.choice(neg, size=per_positive, replace=False)
            for p in np.flatnonzero(r.gain == level):
                diffs.append(r.x[p] - r.x[neg])
    d = np.concatenate(diffs) if diffs else np.zeros((0, rows[0].x.shape[1] if rows else 0))
    return np.concatenate([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))]


def fit_ranker(rows: Sequence[Rows], use: np.ndarray, seed: int) -> np.ndarray:
    """Pairwise logistic regression (RankNet's loss) over the ``use`` columns, coefficients ≥ 0.

    A pair's label says which candidate is relevant; no intercept, since a ranking only
    compares. A feature whose coefficient comes out negative is dropped and the rest
    refitted, so every kept weight still means "more of this feature, more relevant"
    and the pipeline's rule "ranked only when a relevance feature is positive" keeps
    its meaning. Scaled to a largest coefficient of 1 (a ranking ignores scale).
    """
    from sklearn.linear_model import LogisticRegression

    x, y = _pairs(rows, seed)
    active = use.copy()
    coef = np.zeros(x.shape[1])
    while active.any():
        model = LogisticRegression(C=1.0, max_iter=2000, fit_intercept=False, random_state=seed).fit(x[:, active], y)
        c = model.coef_[0]
        if (c >= 0).all():
            coef[active] = c
            break
        active[np.flatnonzero(active)[c < 0]] = False
    top = coef.max(initial=0.0)
    return coef / top if top > 0 else coef


def judge_ranker(rows: Sequence[Rows], columns: Sequence[str], base: Mapping[str, float], use: Sequence[str],
                 opts: LearnOptions) -> tuple[np.ndarray | None, dict[str, Any]]:
    """Held-out nDCG@10 of learned weights over ``use`` against the ``base`` weights."""
    from tooldisc.evaluation.significance import paired_test

    mask = np.array([c in use for c in columns])
    ranked = [r for r in rows if r.y.any()]
    judged = Judged.of(ranked)
    fold = np.array([r.fold for r in ranked], dtype=np.int64)
    without = judged.ndcg(vector(columns, base))
    with_ = np.zeros(len(ranked))
    for f in range(opts.folds):
        test = fold == f
        coef = fit_ranker([r for r in ranked if r.fold != f], mask, opts.seed)
        with_[test] = judged.ndcg(coef)[test]
    keep, info = verdict_of(paired_test(without, with_), opts.alpha)
    coef = fit_ranker(ranked, mask, opts.seed)
    info.update({"measure": "nDCG@10", "features": [c for c in columns if c in use],
                 "coef": [round(float(c), 6) for c, m in zip(coef, mask, strict=True) if m]})
    return (coef if keep else None), info
