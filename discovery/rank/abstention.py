"""When an offer is empty: the evidence that some authorized tool fits the query.

An offer is empty when every relevance signal's best value is below its floor
(DESIGN §5 no-match), measured over the retrieved tools only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tooldisc.discovery.learned.features import (
    ABSTENTION_FEATURES_ORDER,
    content_ngram_best,
    content_word_cosines,
    offer_features,
)

if TYPE_CHECKING:
    from tooldisc.discovery.config import AbstainSection
    from tooldisc.discovery.indexes.index import Index
    from tooldisc.discovery.stages import Retrieved


def content_ngram(ret: Retrieved, ix: Index, best_bm25: float, content: np.ndarray | None = None) -> float:
    """Best n-gram cosine of the query's content words (stop words dropped) over the retrieved tools.

    The evidence that *some* tool fits: "thanks, that's all for today" shares n-grams
    of its filler words with many descriptions, which says nothing about a tool.
    When ``best_bm25`` (the retrieved tools' best BM25F) already rules abstention out,
    the extra pass is skipped and the ranking feature's best cosine stands in.
    ``content``: :func:`content_cosines` of the retrieved tools, when the caller has them.
    """
    if not needs_content(ret, ix, best_bm25):
        return float(ret.ngram[ret.indices].max(initial=0.0)) if ret.ngram is not None else 0.0
    if content is None:
        content = content_cosines(ret, ix, ret.indices)
    return float(content.max(initial=0.0))


def needs_content(ret: Retrieved, ix: Index, best_bm25: float) -> bool:
    """Whether :func:`content_ngram` reads the content words' cosines (else the ranking feature's stands in)."""
    floors = ix.config.abstain
    return bool(len(ret.indices)) and bool(floors.min_ngram) and best_bm25 < floors.min_bm25


def content_cosines(ret: Retrieved, ix: Index, indices: np.ndarray) -> np.ndarray:
    """N-gram cosine of the query's content words (stop words dropped) with each of ``indices`` (retrieved tools).

    One pass serves both the floor (:func:`content_ngram`) and the abstention model's
    feature (:func:`~tooldisc.discovery.learned.features.content_word_cosines` over what
    retrieval already holds).
    """
    return content_word_cosines(ix, ret.authorized.request.tokens, indices, ret.method == "indexed", ret.ngram,
                                ret.ngram_counts, ret.content_vector)


def abstain_reason(signals: dict[str, float], abstain: AbstainSection) -> str | None:
    """Abstain when every signal's best value is below its floor (DESIGN §5 no-match).

    Earlier turns that point at a tool rule abstention out: a short follow-up ("do it",
    "and its details") names nothing itself, yet the conversation does.
    """
    if signals.get("history", 0.0) > 0:
        return None
    floors = {"bm25": abstain.min_bm25, "ngram": abstain.min_ngram, "embedding": abstain.min_embedding}
    measured = [s for s in signals if s in floors]
    if not any(floors[s] > 0 for s in measured):
        return None
    if all(signals[s] < floors[s] for s in measured):
        shown = ", ".join(f"{s} {signals[s]:.3f} < {floors[s]:g}" for s in sorted(measured))
        return f"abstained: no tool fits ({shown})"
    return None


def no_tool_probability(ret: Retrieved, ix: Index, best_bm25: float, expansion_top: float = 0.0,
                        content_all: np.ndarray | None = None) -> float:
    """The calibrated P(no authorized tool fits the request), from the index's abstention model.

    The features (:mod:`.learned_features`) read the query, the catalog vocabulary and
    the retrieved tools' best lexical, content-word n-gram and expansion evidence —
    never the ranking weights — so the shipped default model holds under any ranker.
    ``expansion_top`` is the retrieved tools' best expansion feature (0 without one);
    ``content_all``: :func:`content_cosines` of every retrieved tool, when the floor already read them.
    """
    tokens = ret.authorized.request.tokens
    content = content_ngram_best(ix, tokens, ret.indices, ret.method == "indexed", ret.ngram, content_all,
                                 ret.ngram_counts, ret.content_vector)
    x = offer_features(tokens, ix.lexical, best_bm25, content, expansion_top)
    model = ix.abstention.model
    columns = [ABSTENTION_FEATURES_ORDER.index(n) for n in model.features]
    return float(model.probability(x[columns][None, :])[0])


def model_reason(signals: dict[str, float], ix: Index) -> str | None:
    """Abstain when P(no tool fits) reaches the model's threshold, unless earlier turns point at a tool."""
    if signals.get("history", 0.0) > 0:
        return None
    p, threshold = signals["no_tool"], ix.abstention.threshold
    if p >= threshold:
        return f"abstained: no tool fits (P(no tool) {p:.3f} ≥ {threshold:.3f})"
    return None
