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

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tooldisc.evaluation.learn import LearnOptions
    from tooldisc.evaluation.learn_data import Example

WEIGHTS = (0.0, 0.2, 0.35, 0.5, 0.65, 0.8)
DEPTH = 10


def judge_clauses(engine: Any, examples: Sequence[Example], fold_of: np.ndarray, matched: Sequence[int],
                  opts: LearnOptions) -> tuple[float | None, dict[str, Any]]:
    """(the weight to store, or None when not kept; the report entry)."""
    from tooldisc.evaluation.learn_ranking import verdict_of
    from tooldisc.evaluation.significance import paired_test

    rng = np.random.default_rng(opts.seed + 2)
    sample = sorted(rng.choice(np.asarray(matched), size=min(opts.sample, len(matched)), replace=False).tolist())
    values, folds = [], []
    for i in sample:
        row = _values(engine, examples[i])
        if row is not None:
            values.append(row)
            folds.append(int(fold_of[i]))
    info: dict[str, Any] = {"requests": len(sample), "split": len(values)}
    if len(values) < 2:
        return None, {**info, "kept": False}
    v = np.array(values)
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


def _values(engine: Any, example: Example) -> list[float] | None:
    """nDCG@10 of one request at each of :data:`WEIGHTS`, or None when it has a single clause."""
    from tooldisc.discovery.clauses import fuse, split_clauses
    from tooldisc.discovery.pipeline import authorize, rank, retrieve
    from tooldisc.discovery.stages import Authorized
    from tooldisc.discovery.text import tokenize

    ix = engine.index
    cfg = ix.config.clauses
    texts = split_clauses(example.query, cfg.min_tokens, cfg.max_clauses)
    if len(texts) < 2:
        return None
    req = replace(engine._request(example.query, None, DEPTH, example.history), depth=DEPTH)
    whole = rank(retrieve(authorize(req, ix), ix), ix)
    if not len(whole.order):
        return None
    auth = whole.retrieved.authorized
    parts = [rank(retrieve(Authorized(replace(req, query=t, tokens=tuple(tokenize(t)), history=()),
                                      auth.mutation, auth.indices), ix), ix) for t in texts]
    relevant = {ix.security.name_to_idx[n] for n in example.relevant if n in ix.security.name_to_idx}
    out = []
    for w in WEIGHTS:
        if w == 0.0:
            order = whole.order
        else:
            idx, val = fuse(whole, parts, w, DEPTH)
            order = idx[np.lexsort((ix.name_rank[idx], -val))]
        out.append(_ndcg(order[:DEPTH].tolist(), relevant))
    return out


def _ndcg(top: list[int], relevant: set[int]) -> float:
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(p + 2) for p, i in enumerate(top) if i in relevant)
    ideal = sum(1.0 / math.log2(p + 2) for p in range(min(len(relevant), DEPTH)))
    return dcg / ideal
