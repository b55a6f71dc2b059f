"""Research run (not a shipped part): request words × tool-name parts, learned across tools under CV.

Usage: python benchmarks/learn_name_parts.py [--select ndcg|mrr]

Why: on hesabix dev the other folds hold no request for the tool of 98 of 264 matched requests
(``benchmarks/learn_ceiling.py``), so per-tool learning (expansions, phrase weights) cannot reach
them. An association between a request word and a *part* of a tool's name (``list``, ``get``,
``search``, ``invoice``, …) pools the evidence of every tool that shares the part, so it can
speak for tools with no traffic of their own.

How: the rows are ``learn``'s cross-fitted candidates of all 282 dev requests (its seeded folds,
expansions off). For each held-out fold, a pairwise logistic regression over (word, name part)
indicators is fitted on the other folds (graded pairs: relevant over acceptable over the rest;
only words that at least 3 distinct training requests contain, the expansions' k); the
feature's weight is chosen on inner folds of the training folds by ``--select``; held-out
graded nDCG@10 and MRR are compared with the default weights by ``tooldisc compare``'s paired
test. Measured 2026-12-02 (see docs/learning.md).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
GRID = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)
PAIRS_PER_POSITIVE = 20


def _words(query: str) -> list[str]:
    from tooldisc.discovery.text import tokenize
    from tooldisc.discovery.text.fields import stopwords

    stop = stopwords()
    return sorted({t for t in tokenize(query) if t not in stop and not any(c.isdigit() for c in t)})


def _indicators(row, words: list[str], vocab: set[str]) -> list[list[tuple[str, str]]]:
    """Per candidate: the (request word, name part) pairs it has."""
    kept = [w for w in words if w in vocab]
    return [[(w, p) for w in kept for p in str(name).split("_")] for name in row.names]


def _fit(train: list, words: dict, seed: int):
    """A scorer for rows: the summed weights of each candidate's (word, name part) pairs."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression

    df = Counter(w for r in train for w in words[r.example])
    vocab = {w for w, c in df.items() if c >= 3}
    index: dict[tuple[str, str], int] = {}
    mats = []
    for r in train:
        ii, jj = [], []
        for k, pairs in enumerate(_indicators(r, words[r.example], vocab)):
            for f in pairs:
                ii.append(k)
                jj.append(index.setdefault(f, len(index)))
        mats.append((ii, jj))
    rng = np.random.default_rng(seed)
    blocks, labels = [], []
    for r, (ii, jj) in zip(train, mats, strict=True):
        m = sp.csr_matrix((np.ones(len(ii)), (ii, jj)), shape=(len(r.names), len(index)))
        for level in np.unique(r.gain[r.gain > 0])[::-1]:
            neg = np.flatnonzero(r.gain < level)
            if len(neg) > PAIRS_PER_POSITIVE:
                neg = rng.choice(neg, PAIRS_PER_POSITIVE, replace=False)
            for p in np.flatnonzero(r.gain == level):
                d = m[np.full(len(neg), p)] - m[neg]
                blocks += [d, -d]
                labels += [1] * d.shape[0] + [0] * d.shape[0]
    if not index or not blocks:
        return lambda r: np.zeros(len(r.names))
    coef = LogisticRegression(C=0.1, fit_intercept=False, max_iter=2000).fit(sp.vstack(blocks).tocsr(), labels).coef_[0]

    def score(r) -> np.ndarray:
        return np.array([sum(coef[index[f]] for f in pairs if f in index)
                         for pairs in _indicators(r, words[r.example], vocab)])

    return score


def _with(rows: list, score) -> list:
    return [replace(r, x=np.hstack([r.x, score(r)[:, None]]), tie=r.tie, gain=r.gain) for r in rows]


def _mrr(rows: list, w: np.ndarray) -> np.ndarray:
    out = []
    for r in rows:
        s = r.x @ w
        o = np.lexsort((r.tie, -s))
        o = o[s[o] > 0][:10]
        out.append(next((1.0 / (i + 1) for i, k in enumerate(o) if r.y[k]), 0.0))
    return np.array(out)


def main(argv: list[str] | None = None) -> None:
    import learn_quality as lq

    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.learn.fit import LearnOptions, _cross_fit
    from tooldisc.evaluation.learn.ranking import ndcg, vector
    from tooldisc.evaluation.significance import paired_test
    from tooldisc.gold.loader import load_gold

    ap = argparse.ArgumentParser()
    ap.add_argument("--select", choices=("ndcg", "mrr"), default="ndcg", help="what the weight is chosen by")
    args = ap.parse_args(argv)
    catalog = load_catalog(lq.SHARED / "hesabix/catalog.json")
    gold = load_gold(lq.SHARED / "hesabix/gold.dev.json")
    examples = lq._examples_from_gold(gold.queries)
    opts = LearnOptions(expansions=False, affinity=False)
    engine = Discoverer(catalog)
    rng = np.random.default_rng(opts.seed)  # learn's own fold assignment
    matched = [i for i, e in enumerate(examples) if not e.no_tool]
    no_tool = [i for i, e in enumerate(examples) if e.no_tool]
    fold_of = np.empty(len(examples), dtype=np.int64)
    for group in (matched, no_tool):
        perm = rng.permutation(len(group))
        fold_of[np.asarray(group)[perm]] = np.arange(len(group)) % opts.folds
    fit = _cross_fit(engine, examples, [set()] * len(examples), fold_of, matched, no_tool, opts, None)
    rows = [r for r in fit.rows if r.y.any()]
    base = vector(fit.columns, {c: engine.config.weight(c) for c in fit.columns})
    words = {r.example: _words(examples[r.example].query) for r in rows}

    def judge(rs: list, w: float) -> float:
        full = np.r_[base, w]
        return float((ndcg(rs, full) if args.select == "ndcg" else _mrr(rs, full)).mean())

    a_n, b_n, a_m, b_m = [], [], [], []
    for f in range(opts.folds):
        train = [r for r in rows if r.fold != f]
        test = [r for r in rows if r.fold == f]
        inner = []
        for g in sorted({r.fold for r in train}):
            inner += _with([r for r in train if r.fold == g], _fit([r for r in train if r.fold != g], words, opts.seed))
        w = max(GRID, key=lambda v: judge(inner, v))
        held = _with(test, _fit(train, words, opts.seed))
        a_n.append(ndcg(test, base))
        b_n.append(ndcg(held, np.r_[base, w]))
        a_m.append(_mrr(test, base))
        b_m.append(_mrr(held, np.r_[base, w]))
        print(f"fold {f}: weight {w}", flush=True)
    for name, a, b in (("nDCG@10 (graded)", a_n, b_n), ("MRR", a_m, b_m)):
        t = paired_test(np.concatenate(a), np.concatenate(b))
        print(f"{name:<17} {t.mean_a:.4f} -> {t.mean_b:.4f}  wins {t.wins} losses {t.losses}  p {t.p_randomization:.4f}")


if __name__ == "__main__":
    main()
