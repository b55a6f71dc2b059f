"""Cross-fitting rows for ``tooldisc learn``: each request's candidates and features, as discovery computes them.

The rows come from the pipeline's own authorize and retrieve steps and the same
feature functions as the rank step (:data:`tooldisc.discovery.rank.features.FEATURES`),
and the offer features from :func:`tooldisc.discovery.learned.features.offer_features`,
so what ``learn`` fits on is exactly what discovery will apply the model to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tooldisc.discovery.learned.features import (
    content_ngram_best,
    offer_features,
    ranking_feature_names,
)


def ranking_rows(ix: Any, query: str, history: Sequence[str], n: int, relevant: Sequence[str] = (), *,
                 expansion: Any = None, affinity: Any = None, temperatures: Sequence[float] = ()
                 ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, bool]:
    """(feature names, candidate names, raw ranking features, offer features, history rules abstention out).

    Runs the pipeline's own authorize and retrieve steps (catalog's default context),
    so a tool the security filter removes is never a row, and the same feature
    functions as the rank step. ``expansion`` / ``affinity`` are indexes learned on the
    other folds, used in place of the index's (cross-fitting); the affinity feature
    comes once per temperature in ``temperatures``, as ``affinity@T`` columns.
    Candidates are the best ``n`` by the config's weights (the learned features at
    weight 1), the best ``n`` by expansions alone, and every retrieved ``relevant`` tool.
    """
    import dataclasses

    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.discovery.rank.features import FEATURES, affinity_feature

    engine = Discoverer.over(dataclasses.replace(ix, expansion=expansion, affinity=affinity))
    ix = engine.index
    ret = engine.retrieved(query, history=history)
    req = ret.authorized.request
    idx = ret.indices
    names = ranking_feature_names(ix, expansion is not None)
    cols = [FEATURES[name](ix, ret).astype(np.float64) for name in names]
    if affinity is not None:
        evidence = affinity.evidence(query)  # once; each temperature only re-does the softmax
        for t in temperatures:
            names.append(f"affinity@{t:g}")
            cols.append(affinity_feature(ix, ret, t, evidence).astype(np.float64))
    x = np.stack(cols, axis=1) if len(idx) else np.zeros((0, len(names)))
    weights = np.array([ix.config.weight(f) if f in FEATURES and ix.config.weight(f) else 1.0 for f in names])
    keep = _top(x @ weights, n)
    exp = x[:, names.index("expansion")] if expansion is not None else None
    if exp is not None:
        keep = np.union1d(keep, _top(exp, n))
    tool_names = np.asarray(ix.security.names, dtype=object)[idx]
    if len(relevant):
        keep = np.union1d(keep, np.flatnonzero(np.isin(tool_names, np.asarray(relevant, dtype=object))))
    best_bm25 = float(ret.lexical[idx].max(initial=0.0))
    offer = offer_features(req.tokens, ix.lexical, best_bm25,
                           content_ngram_best(ix, req.tokens, idx, ret.method == "indexed", ret.ngram),
                           float(exp.max(initial=0.0)) if exp is not None else 0.0)
    history_hit = "history" in names and bool(x[:, names.index("history")].max(initial=0.0) > 0)
    return names, tool_names[keep], x[keep], offer, history_hit


def _top(values: np.ndarray, n: int) -> np.ndarray:
    positive = np.flatnonzero(values > 0)
    if len(positive) > n:
        positive = positive[np.argpartition(-values[positive], n - 1)[:n]]
    return np.sort(positive)
