"""The features learned models read, computed the same way when fitting and when serving.

The ranker reads the ranking features (:data:`RANKER_FEATURES`: the pipeline's
features plus ``expansion``). Abstention reads offer features
(:data:`ABSTENTION_FEATURES`) that do not depend on the ranker's weights, so the
default abstention model stays valid whatever ranker a learned file brings:

- ``bm25_top``: log(1 + best raw BM25F over the retrieved tools);
- ``ngram_content``: best n-gram cosine of the query's content words (stop words dropped);
- ``known``: share of the query's content terms that occur anywhere in the catalog;
- ``idf_known``: the same share weighted by IDF (a known rare word counts more);
- ``unknown``: log(1 + number of content terms the catalog never uses);
- ``expansion_top``: best expansions score (0 without expansions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tooldisc.discovery.indexes.lexical import LexicalIndex
from tooldisc.discovery.rank.features import LEARNABLE, REGISTRY
from tooldisc.discovery.text.fields import terms_of_tokens

# The names a learned file's ranker may hold: every registered ranking feature.
RANKER_FEATURES: frozenset[str] = frozenset(f.name for f in REGISTRY)
ABSTENTION_FEATURES_ORDER: tuple[str, ...] = (
    "bm25_top", "ngram_content", "known", "idf_known", "unknown", "expansion_top")
ABSTENTION_FEATURES: frozenset[str] = frozenset(ABSTENTION_FEATURES_ORDER)


def vocabulary_shares(tokens: Sequence[str], lexical: LexicalIndex) -> tuple[float, float, float]:
    """(known, idf_known, unknown) of the query's content terms against the catalog vocabulary."""
    found = terms_of_tokens(list(tokens), lexical.stem)
    if not found:
        return 0.0, 0.0, 0.0
    n = lexical.n_docs
    log_n = float(np.log(n + 1)) if n > 0 else 1.0
    known = unknown = 0
    weight_known = weight_all = 0.0
    for term in found:
        j = lexical.vocab.get(term)
        df = int(lexical.indptr[j + 1] - lexical.indptr[j]) if j is not None else 0
        w = float(np.log((n + 1) / (df + 1))) / log_n if df else 1.0
        weight_all += w
        if df:
            known += 1
            weight_known += w
        else:
            unknown += 1
    return known / len(found), weight_known / weight_all if weight_all else 0.0, float(np.log1p(unknown))


def offer_features(tokens: Sequence[str], lexical: LexicalIndex, best_bm25: float, content_ngram: float,
                   expansion_top: float = 0.0) -> np.ndarray:
    """The abstention features of one request, in :data:`ABSTENTION_FEATURES_ORDER`."""
    known, idf_known, unknown = vocabulary_shares(tokens, lexical)
    return np.array([np.log1p(max(best_bm25, 0.0)), content_ngram, known, idf_known, unknown, expansion_top],
                    dtype=np.float64)


def select(values: np.ndarray, names: Sequence[str], wanted: Sequence[str]) -> np.ndarray:
    """Columns of ``values`` (named ``names``) in the order a model lists its features."""
    pos = {n: i for i, n in enumerate(names)}
    return values[..., [pos[w] for w in wanted]]


def ranking_feature_names(ix: Any, expansion: bool, affinity: bool = False) -> list[str]:
    """The ranking features a learned ranker is fitted over: those this index computes (and the
    learned parts given), in a learned ranker's order (:data:`~.features.LEARNABLE`)."""
    parts = frozenset(name for name, present in (("expansion", expansion), ("affinity", affinity)) if present)
    return [f.name for f in LEARNABLE if f.learned_when is not None and f.learned_when(ix, parts)]


CONTENT_POOL = 20


def content_words(tokens: Sequence[str]) -> list[str]:
    """The query's tokens minus stop words: what says which tool, not how it is asked."""
    from tooldisc.discovery.text.fields import stopwords

    stop = stopwords()
    return [t for t in tokens if t not in stop]


def content_word_cosines(ix: Any, tokens: Sequence[str], indices: np.ndarray, few: bool = False,
                         all_words: np.ndarray | None = None, shared: Any = None, vector: Any = None) -> np.ndarray:
    """N-gram cosine of the query's content words with each of ``indices`` (float32).

    ``all_words``: the n-gram cosine of every tool for all the query's words, which these
    are, bit for bit, when no word is a stop word. ``few``: the indices are candidates of
    indexed retrieval, whose rows are cheaper than the n-gram columns; ``shared``: the
    retrieve step's n-gram counts of them (``Retrieved.ngram_counts``), read instead of
    the index when they cover these tools; ``vector``: the content words' n-gram vector
    (``Retrieved.content_vector``), when the retrieve step read it.
    """
    if ix.ngram is None or not len(indices):
        return np.zeros(len(indices), dtype=np.float32)
    words = content_words(tokens)
    if not words:
        return np.zeros(len(indices), dtype=np.float32)
    if all_words is not None and len(words) == len(tokens):
        return all_words[indices]
    if few:
        return ix.ngram.scores_subset(words, indices, vector, shared=shared)
    return ix.ngram.scores_of(words, indices, vector)


def content_ngram_best(ix: Any, tokens: Sequence[str], indices: np.ndarray, few: bool = False,
                       all_words: np.ndarray | None = None, content: np.ndarray | None = None,
                       shared: Any = None, vector: Any = None) -> float:
    """Best n-gram cosine of the query's content words (stop words dropped) over ``indices``.

    Arguments as :func:`content_word_cosines`; with ``few`` only the ``CONTENT_POOL``
    best by ``all_words`` are read, which keeps this second n-gram pass a fifth of the
    first. ``content``: :func:`content_word_cosines` of ``indices``, already computed (the
    abstention floor's pass): the best is read from it, with the same pool.
    """
    if ix.ngram is None or not len(indices):
        return 0.0
    words = content_words(tokens)
    if not words:
        return 0.0
    if all_words is not None and len(words) == len(tokens):
        return float(all_words[indices].max(initial=0.0))
    pool = None
    if few and all_words is not None and len(indices) > CONTENT_POOL:
        pool = np.argpartition(-all_words[indices], CONTENT_POOL - 1)[:CONTENT_POOL]
    if content is None:
        content = content_word_cosines(ix, tokens, indices if pool is None else np.sort(indices[pool]), few,
                                       all_words, shared, vector)
    elif pool is not None:  # each tool's cosine does not depend on the others read with it
        content = content[pool]
    return float(content.max(initial=0.0))
