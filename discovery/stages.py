"""The typed stage outputs of the discovery pipeline (authorize → retrieve → rank → cut).

Each step of :data:`tooldisc.discovery.pipeline.STEPS` takes one of these and the
frozen :class:`~tooldisc.discovery.indexes.index.Index`, and returns the next; later stages
hold the earlier ones, so nothing downstream can see a tool the authorize step did
not pass (``Authorized.indices``). Kept apart from the steps so ranking features,
abstention and candidate retrieval can name these types without importing the
pipeline that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tooldisc.discovery.model import Context


@dataclass(frozen=True)
class Request:
    query: str
    context: Context
    k: int | str
    history: tuple[str, ...]
    tokens: tuple[str, ...]  # normalised once, shared by the classifier and the ranker
    mutation_cap: str | None = None  # a caller's mutation class that may only narrow the query's
    depth: int | None = None  # how many ranked tools the cut can use (None: all, for explain)
    exhaustive: bool = False  # rank every authorized tool even when the set is large (measuring the index)


@dataclass(frozen=True)
class Authorized:
    request: Request
    mutation: str
    indices: np.ndarray  # the authorized set; nothing outside it may be ranked


@dataclass(frozen=True)
class Retrieved:
    authorized: Authorized
    indices: np.ndarray  # a subset of authorized.indices
    lexical: np.ndarray  # BM25F score of every catalog tool (read only through indices)
    ngram: np.ndarray | None  # n-gram cosine of every catalog tool, when that feature is on
    method: str
    history: tuple[str, ...]
    fallback_reason: str | None = None  # why indexed retrieval was not used for a large set
    # the candidates' counts of the query's n-grams (indexed retrieval; ngrams.SharedCounts), so the
    # content words' cosines of the same request read them instead of the index
    ngram_counts: Any = None
    # the query's content words' n-gram vector (ids, weights), read in the same pass as the query's own;
    # None when every token is a content word or none is (their cosines are then the feature's, or 0)
    content_vector: Any = None


@dataclass(frozen=True)
class Ranked:
    retrieved: Retrieved
    order: np.ndarray  # catalog indices, best first, positive scores only
    scores: np.ndarray
    contributions: dict[str, np.ndarray]
    signals: dict[str, float]  # best raw value of each relevance signal, for abstention
