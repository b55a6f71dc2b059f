"""Candidate retrieval for large authorized sets: at most N tools for the full ranker.

The retrieve step calls this when an authorized set reaches ``retrieval.min_tools``;
it only ever chooses among authorized indices, so the security filter still decides
what can be offered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tooldisc.discovery.kernels import top_positive
from tooldisc.discovery.rank.features import WANTED_SIDE_EFFECT
from tooldisc.discovery.security import side_effect_code

if TYPE_CHECKING:
    from tooldisc.discovery.indexes.index import Index


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
    ng = ix.ngram
    ids, w = qv if qv is not None else ng.query_vector(tokens)
    keep = ng.df[ids] <= max(2 * n, ix.size // 4)  # the rare n-grams
    ids = ids[keep]
    wq = w[keep] * ng.idf[ids]
    w_prior = cfg.weight("prior") if mutation is not None else 0.0
    wanted = side_effect_code(WANTED_SIDE_EFFECT[mutation]) if mutation is not None else -1
    return ng.loops["candidates"](lexical, allowed, ids, wq, ng.gram_ptr, ng.gram_tokens, ng.gram_counts,
                                  ng.count_table, ng.token_ptr, ng.token_tools, ng.token_counts, ng.divisors,
                                  ix.security.side_effect, wanted, cfg.weight("bm25"), cfg.weight("ngram"),
                                  w_prior, n)
