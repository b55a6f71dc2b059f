"""The dense reference of the candidate estimate the kernels compute (discovery/kernels/ ``candidates_*``).

Production computes the estimate only over the tools a query reaches, inside the candidate
kernels; this oracle computes it for every tool, from the index's postings, with the same
products summed in the same order, so the candidate sets it implies are the kernels' bit for bit.
"""

from __future__ import annotations

import numpy as np

from tooldisc.discovery.indexes.ngrams import NgramIndex
from tooldisc.discovery.indexes.sparse import ranges


def rare_estimate(ix: NgramIndex, max_df: int, qv: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The estimate of every tool's n-gram cosine from the query's rarer n-grams (float64, 0 where none reaches).

    ``qv``: the query's (sorted n-gram ids, weights). Each token's share is taken once per tool
    (``1 + ln`` of its count there), so an n-gram found in two different tokens of a tool counts
    twice: an estimate, never a score.
    """
    ids, w = qv
    keep = ix.df[ids] <= max_df
    if not keep.any():
        return np.zeros(ix.n_docs)
    ids, w = ids[keep], w[keep]
    starts, ends = ix.gram_ptr[ids], ix.gram_ptr[ids + 1]
    at = ranges(starts, ends - starts)
    share = np.repeat(w * ix.idf[ids], ends - starts) * ix.count_table[ix.gram_counts[at]]
    per_token = np.bincount(ix.gram_tokens[at], weights=share, minlength=len(ix.token_ptr) - 1)
    utok = np.flatnonzero(per_token > 0)
    starts = ix.token_ptr[utok]
    lengths = ix.token_ptr[utok + 1] - starts
    at = ranges(starts, lengths)
    sums = np.bincount(ix.token_tools[at], weights=(1.0 + np.log(ix.token_counts[at].astype(np.float64))) * np.repeat(per_token[utok], lengths),
                       minlength=ix.n_docs)
    sums /= ix.divisors
    return sums
