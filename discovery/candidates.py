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
                     qv: Any = None, mutation: str | None = None, allowed: np.ndarray | None = None) -> np.ndarray:
    """At most N authorized tools (``retrieval.candidates``): the best by a cheap estimate of the fused score.

    Half of N are the best by BM25F alone, so a strong lexical match is never lost; the
    rest are the best by the estimate — the config's BM25F and n-gram weights applied to
    exact BM25F and to an n-gram cosine over the query's n-grams found in at most 1/4 of
    tools (common ones add about the same to every tool and cost the most to gather),
    plus the mutation prior. The result is sorted catalog indices.

    Only tools some query term or rare n-gram reaches are looked at (the estimate is 0
    everywhere else), so the cost follows the query's posting lists, not the catalog.
    ``allowed`` is the authorized set as a mask over the catalog (built here when absent).
    """
    cfg = ix.config
    n = cfg.retrieval.candidates
    if allowed is None:
        allowed = np.zeros(ix.size, dtype=bool)
        allowed[authorized] = True
    if ix.ngram is None:
        hit = np.flatnonzero(lexical > 0)
        hit = hit[allowed[hit]]
        return np.sort(top_positive(hit, lexical[hit], n))
    rare = ix.ngram.rare_estimate(tokens, max(2 * n, ix.size // 4), qv)
    reach = lexical > 0
    reach |= rare > 0
    reach &= allowed
    reached = np.flatnonzero(reach)  # ascending: the estimate is 0 outside
    del reach
    lex = lexical[reached]
    hit = np.flatnonzero(lex > 0)  # authorized tools with a positive BM25F
    lexical_half = top_positive(reached[hit], lex[hit], n // 2)
    top = float(lex.max(initial=0.0))
    lexn = lex / top if top > 0 else lex
    rare = rare[reached]
    estimate = cfg.weight("bm25") * lexn + cfg.weight("ngram") * rare
    if cfg.weight("prior") and mutation is not None:  # the prior feature, on the estimated relevance
        estimate += cfg.weight("prior") * wanted_side_effect(ix, reached, mutation) * np.maximum(lexn, rare)
    by_estimate = top_positive(reached, estimate, n, ordered=True)
    taken = set(lexical_half.tolist())  # at most N/2 ints: a set beats np.isin's sort
    fill = by_estimate[[i not in taken for i in by_estimate.tolist()]][: n - len(lexical_half)]
    return np.sort(np.concatenate([lexical_half, fill]))


def top_positive(indices: np.ndarray, values: np.ndarray, n: int, ordered: bool = False) -> np.ndarray:
    """``indices`` of the (at most) n largest positive ``values``; best first when ``ordered``.

    ``indices`` ascending: ties are broken by the lower index.
    """
    positive = np.flatnonzero(values > 0)
    if len(positive) > n:
        positive = positive[np.argpartition(-values[positive], n - 1)[:n]]
    if ordered:
        positive = positive[np.lexsort((positive, -values[positive]))]
    return indices[positive]
