"""The clauses part of ``tooldisc learn``: the weight of per-clause ranking, judged on held-out folds.

Whether a log's requests ask for several things at once is a property of the traffic
(an agent planning multi-step tasks, against a chat assistant answering one question
with some context), so the clauses step's weight is learned rather than guessed: on
single-task traffic a context sentence ("I'm visiting Tokyo.") ranked on its own only
adds noise, on multi-step traffic each clause names a tool the whole request ranks
too low. For every sampled request that splits into clauses, the whole ranking and
each clause's ranking are computed once with the engine's own pipeline steps and
fused at every weight of :data:`WEIGHTS`; for each fold the weight is chosen on the
other folds, and the held-out nDCG@10 at that weight is compared with the step off
(paired randomization test, as ``tooldisc compare``). Requests with one clause are
the same either way, so they are left out of the test (a paired difference of zero
changes neither the mean difference's sign nor its randomization p).

The rankings are those of the config without the other learned parts (their
cross-fitted features are candidate rows, not whole rankings); a kept weight is
therefore judged on the plain ranking and applied on top of whatever else is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tooldisc.evaluation.learn.data import Example
    from tooldisc.evaluation.learn.options import LearnOptions

WEIGHTS = (0.0, 0.2, 0.35, 0.5, 0.65, 0.8)
DEPTH = 10


def judge_clauses(engine: Any, examples: Sequence[Example], fold_of: np.ndarray, matched: Sequence[int],
                  opts: LearnOptions) -> tuple[float | None, dict[str, Any]]:
    """(the weight to store, or None when not kept; the report entry)."""
    from tooldisc.evaluation.learn.ranking import verdict_of
    from tooldisc.evaluation.significance import paired_test

    rng = np.random.default_rng(opts.seed + 2)
    sample = sorted(rng.choice(np.asarray(matched), size=min(opts.sample, len(matched)), replace=False).tolist())
    tops, relevant, folds = [], [], []
    known = engine.index.security.name_to_idx
    for i in sample:
        top = _tops(engine, examples[i])
        if top is not None:
            tops.append(top)
            relevant.append((frozenset(n for n in examples[i].relevant if n in known),
                             frozenset(n for n in examples[i].acceptable if n in known)))
            folds.append(int(fold_of[i]))
    info: dict[str, Any] = {"requests": len(sample), "split": len(tops)}
    if len(tops) < 2:
        return None, {**info, "kept": False}
    v = _ndcg(tops, relevant)
    f = np.array(folds)
    held = np.zeros(len(v))
    for fold in np.unique(f):
        train = f != fold
        w = int(np.argmax(v[train].mean(axis=0))) if train.any() else 0
        held[~train] = v[~train, w]
    keep, out = verdict_of(paired_test(v[:, 0], held), opts.alpha)
    weight = WEIGHTS[int(np.argmax(v.mean(axis=0)))]
    keep = keep and weight > 0.0
    return (weight if keep else None), {**info, **out, "kept": keep, "weight": weight,
                                        "measure": "nDCG@10 of requests with several clauses"}


def _tops(engine: Any, example: Example) -> list[list[str]] | None:
    """The top :data:`DEPTH` tool names of one request at each of :data:`WEIGHTS`, or None
    when it has a single clause (the same ranking at every weight)."""
    from tooldisc.discovery.rank.clauses import fused_order, split_clauses

    ix = engine.index
    cfg = ix.config.clauses
    texts = split_clauses(example.query, cfg.min_tokens, cfg.max_clauses)
    if len(texts) < 2:
        return None
    whole = engine.ranked(example.query, None, DEPTH, example.history)  # ranked DEPTH deep, as discover at K=DEPTH
    if not len(whole.order):
        return None
    parts = engine.clause_rankings(whole, texts)
    names = ix.security.names
    return [[names[i] for i in (whole.order if w == 0.0 else fused_order(whole, parts, w, DEPTH, ix)[0])[:DEPTH]]
            for w in WEIGHTS]


def _ndcg(tops: list[list[str]], relevant: list[tuple[frozenset[str], frozenset[str]]]) -> np.ndarray:
    """nDCG@:data:`DEPTH` (requests × weights) by :mod:`tooldisc.metrics` (relevant tools primary, acceptable
    ones acceptable); a request none of whose tools is in the catalog scores 0 at every weight."""
    from tooldisc.metrics import Judgment, compute

    judgments = [Judgment(str(q), primary=p, acceptable=a) for q, (p, a) in enumerate(relevant)]
    out = np.zeros((len(tops), len(WEIGHTS)))
    for w in range(len(WEIGHTS)):
        for row in compute(f"nDCG@{DEPTH}", judgments, {str(q): top[w] for q, top in enumerate(tops)}):
            out[int(row.qid), w] = row.value
    return out
