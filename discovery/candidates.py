"""Candidate retrieval for large authorized sets: at most N tools for the full ranker.

The retrieve step calls this when an authorized set reaches ``retrieval.min_tools``;
it only ever chooses among authorized indices, so the security filter still decides
what can be offered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tooldisc.discovery.features import wanted_side_effect

if TYPE_CHECKING:
    from tooldisc.discovery.index import Index


def index_candidates(authorized: np.ndarray, tokens: list[str], lexical: np.ndarray, ix: Index,
                      qv: Any = None, mutation: str | None = None) -> np.ndarray:
    """At most N authorized tools (``retrieval.candidates``): the best by a cheap estimate of the fused score.

    Half of N are the best by BM25F alone, so a strong lexical match is never lost; the
    rest are the best by the estimate — the config's BM25F and n-gram weights applied to
    exact BM25F and to an n-gram cosine over the query's n-grams found in at most 1/4 of
    tools (common ones add about the same to every tool and cost the most to gather),
    plus the mutation prior. The result is sorted catalog indices.
    """
    cfg = ix.config
    n = cfg.retrieval.candidates
    lex = lexical[authorized]
    if ix.ngram is None:
        return np.sort(top_positive(authorized, lex, n))
    lexical_half = top_positive(authorized, lex, n // 2)
    rare = ix.ngram.scores_rare(tokens, max(2 * n, ix.size // 4), qv)[authorized]
    top = float(lex.max(initial=0.0))
    lexn = lex / top if top > 0 else lex
    estimate = cfg.weight("bm25") * lexn + cfg.weight("ngram") * rare
    if cfg.weight("prior") and mutation is not None:  # the prior feature, on the estimated relevance
        estimate += cfg.weight("prior") * wanted_side_effect(ix, authorized, mutation) * np.maximum(lexn, rare)
    by_estimate = top_positive(authorized, estimate, n, ordered=True)
    fill = by_estimate[~np.isin(by_estimate, lexical_half)][: n - len(lexical_half)]
    return np.sort(np.concatenate([lexical_half, fill]))


def top_positive(indices: np.ndarray, values: np.ndarray, n: int, ordered: bool = False) -> np.ndarray:
    """``indices`` of the (at most) n largest positive ``values``; best first when ``ordered``."""
    positive = np.flatnonzero(values > 0)
    if len(positive) > n:
        positive = positive[np.argpartition(-values[positive], n - 1)[:n]]
    if ordered:
        positive = positive[np.lexsort((positive, -values[positive]))]
    return indices[positive]
