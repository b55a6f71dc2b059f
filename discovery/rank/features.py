"""Ranking features: each maps (index record, retrieved tools) to one value per retrieved tool.

A feature is a small pure function chosen once by name; the rank step sums
``weight · feature`` for the features whose weight is non-zero, and keeps each
weighted contribution so an offer can say why a tool ranked where it did. Relevance
features are scaled to [0, 1] so their weights are comparable across catalogs.
Every feature is one :class:`RankingFeature` record in :data:`REGISTRY`; every list of
feature names is derived from it: :data:`FEATURES` (the rank step's sum, in this order),
:data:`TIE_BREAKERS`, the config's ``weights`` keys (:data:`tooldisc.discovery.config.FEATURE_NAMES`),
the names a learned file's ranker may hold
(:data:`tooldisc.discovery.learned.features.RANKER_FEATURES`) and the features ``learn`` fits a
ranker over (:func:`tooldisc.discovery.learned.features.ranking_feature_names`). A new feature
is one function and one record here, plus its tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from tooldisc.discovery.security import side_effect_code

if TYPE_CHECKING:
    from tooldisc.discovery.stages import Retrieved

# The index record (:class:`tooldisc.discovery.indexes.index.Index`), named without importing it: the index
# module reads the ranker config, whose ``weights`` keys are derived from :data:`REGISTRY`, so an
# import of it here, even for types, would close an import circle.
Index: TypeAlias = Any

Feature = Callable[["Index", "Retrieved"], np.ndarray]

# The side effect a query of each mutation class is asking for (DESIGN §4 names).
WANTED_SIDE_EFFECT = {"READ": "none", "UNKNOWN": "none", "WRITE": "write", "DESTRUCTIVE": "delete",
                      "EXPORT": "export", "EXECUTE": "execute"}


def bm25(ix: Index, state: Retrieved) -> np.ndarray:
    """Field-weighted BM25, divided by the best authorized tool's (so the top is 1)."""
    raw = state.lexical[state.indices]
    top = float(raw.max()) if len(raw) else 0.0
    return raw / top if top > 0 else raw


def ngram(ix: Index, state: Retrieved) -> np.ndarray:
    """Character n-gram TF-IDF cosine: typos and Persian inflection."""
    return state.ngram[state.indices]


def alias(ix: Index, state: Retrieved) -> np.ndarray:
    """Share of a curated alias or keyword phrase present in the query."""
    return ix.alias.scores(state.authorized.request.tokens)[state.indices]


def embedding(ix: Index, state: Retrieved) -> np.ndarray:
    """Multilingual sentence-embedding cosine (optional extra), min-max scaled per query.

    Raw cosines of this model sit in a narrow band (about 0.75–0.95) for every query,
    so unscaled they would add nearly the same amount to every tool.
    """
    sim = ix.embedding.similarity(state.authorized.request.query, state.indices)
    if not len(sim):
        return sim
    lo, hi = float(sim.min()), float(sim.max())
    return (sim - lo) / (hi - lo) if hi > lo else np.zeros_like(sim)


def prior(ix: Index, state: Retrieved) -> np.ndarray:
    """A write query prefers write tools of the right entity (and so on for each class).

    Gated by lexical relevance, so it reorders relevant tools and never lifts an
    unrelated one; authorization has already removed what the query may not see.
    """
    relevance = np.maximum(bm25(ix, state), ngram(ix, state) if state.ngram is not None else 0.0)
    return wanted_side_effect(ix, state.indices, state.authorized.mutation) * relevance


def wanted_side_effect(ix: Index, indices: np.ndarray, mutation: str) -> np.ndarray:
    """Whether each tool's side effect is the one a query of this mutation class asks for."""
    return ix.security.side_effect[indices] == side_effect_code(WANTED_SIDE_EFFECT[mutation])


def core(ix: Index, state: Retrieved) -> np.ndarray:
    """1 for ``is_core`` tools: with a tiny weight it only breaks ties."""
    return ix.is_core[state.indices].astype(np.float32)


def history(ix: Index, state: Retrieved) -> np.ndarray:
    """Decaying, capped boost for tools that matched earlier user turns.

    Each turn's lexical scores are scaled to a maximum of 1 so a long earlier turn
    cannot dominate; turn ``i`` back is multiplied by ``decay**i``; the sum is capped.
    """
    h = ix.config.history
    turns = [t for t in state.history if t][-h.turns:] if h.turns else []
    out = np.zeros(len(state.indices), dtype=np.float32)
    for age, text in enumerate(reversed(turns), start=1):
        s = ix.lexical.scores(text)[state.indices]
        top = float(s.max()) if len(s) else 0.0
        if top > 0:
            out += (h.decay ** (age - 1)) * (s / top)
    return np.minimum(out, h.cap)


def expansion(ix: Index, state: Retrieved) -> np.ndarray:
    """How much of the query a tool's learned expansions explain (0 without a learned file).

    Catalog-wide IDF over the query's IDF mass (:mod:`.expansion_index`), so a tool no
    labelled request has reached yet is not pushed down by one weak match elsewhere.
    """
    if ix.expansion is None:
        return np.zeros(len(state.indices), dtype=np.float32)
    return ix.expansion.scores(state.authorized.request.tokens, state.indices)


def affinity(ix: Index, state: Retrieved) -> np.ndarray:
    """Learned phrase weights' softmax over the retrieved tools (0 without them in the learned file).

    Gated like ``prior``: it reorders tools that a text feature already finds relevant
    and never lifts one that no query word reaches.
    """
    return affinity_feature(ix, state)


def affinity_feature(ix: Index, state: Retrieved, temperature: float | None = None,
                     evidence: np.ndarray | None = None) -> np.ndarray:
    """:func:`affinity` at a given softmax temperature (``learn`` chooses it on held-out folds)."""
    if ix.affinity is None or not len(state.indices):
        return np.zeros(len(state.indices), dtype=np.float32)
    p = ix.affinity.scores(state.authorized.request.query, state.indices, temperature, evidence)
    relevant = (state.lexical[state.indices] > 0) | (state.ngram[state.indices] > 0 if state.ngram is not None else False)
    return (p * relevant).astype(np.float32)


@dataclass(frozen=True)
class RankingFeature:
    """One ranking feature: the record every list of feature names is derived from.

    ``learned_when``: whether ``learn`` fits a ranker weight for it, given the index and the
    learned parts present (``"expansion"``, ``"affinity"``); None: never learned (a
    tie-breaker keeps the config's weight). ``learn_position``: its place among the learned
    features (learned files list a ranker's features in that order, so it is part of the
    file's bytes). ``tie_breaker``: it only orders tools another feature found relevant.
    ``default_weight``: the weight when no config names it (the shipped weights are data, in
    ``discovery/data/default.yaml``).
    """

    name: str
    compute: Feature
    learned_when: Callable[[Any, frozenset[str]], bool] | None = None
    learn_position: int | None = None
    tie_breaker: bool = False
    default_weight: float = 0.0


def _always(ix: Any, parts: frozenset[str]) -> bool:
    return True


def _with_ngrams(ix: Any, parts: frozenset[str]) -> bool:
    return ix.ngram is not None


def _with_aliases(ix: Any, parts: frozenset[str]) -> bool:
    return ix.alias is not None


def _with_embeddings(ix: Any, parts: frozenset[str]) -> bool:
    return ix.embedding is not None


def _with_history(ix: Any, parts: frozenset[str]) -> bool:
    return bool(ix.config.history.turns)


def _with_expansions(ix: Any, parts: frozenset[str]) -> bool:
    return "expansion" in parts


def _with_affinity(ix: Any, parts: frozenset[str]) -> bool:
    return "affinity" in parts


# The rank step sums the weighted features in this order (float64 sums: the order is part of
# every score's bits); ``learn_position`` orders them in a learned ranker (``prior`` follows
# ``ngram`` there, whose retrieval it needs).
REGISTRY: tuple[RankingFeature, ...] = (
    RankingFeature("bm25", bm25, _always, 0),
    RankingFeature("ngram", ngram, _with_ngrams, 1),
    RankingFeature("alias", alias, _with_aliases, 3),
    RankingFeature("embedding", embedding, _with_embeddings, 4),
    RankingFeature("prior", prior, _with_ngrams, 2),
    RankingFeature("history", history, _with_history, 5),
    RankingFeature("core", core, tie_breaker=True),
    RankingFeature("expansion", expansion, _with_expansions, 6),
    RankingFeature("affinity", affinity, _with_affinity, 7),
)

# Features that may only order tools another feature already found relevant.
TIE_BREAKERS: frozenset[str] = frozenset(f.name for f in REGISTRY if f.tie_breaker)

FEATURES: dict[str, Feature] = {f.name: f.compute for f in REGISTRY}

# The features ``learn`` may fit a ranker weight for, in a learned ranker's order.
LEARNABLE: tuple[RankingFeature, ...] = tuple(sorted(
    (f for f in REGISTRY if f.learned_when is not None and f.learn_position is not None),
    key=lambda f: f.learn_position or 0))
