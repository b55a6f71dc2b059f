"""Ranking features: each maps (engine, query state) to one value per retrieved tool.

A feature is a small pure function chosen once by name; the rank step sums
``weight · feature`` for the features whose weight is non-zero, and keeps each
weighted contribution so an offer can say why a tool ranked where it did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tooldisc.discovery.pipeline import Discoverer, Retrieved

Feature = Callable[["Discoverer", "Retrieved"], np.ndarray]


def bm25(engine: Discoverer, state: Retrieved) -> np.ndarray:
    """Field-weighted BM25 of the query."""
    return state.lexical[state.indices]


def core(engine: Discoverer, state: Retrieved) -> np.ndarray:
    """1 for ``is_core`` tools: with a tiny weight it only breaks ties."""
    return engine.is_core[state.indices].astype(np.float32)


def history(engine: Discoverer, state: Retrieved) -> np.ndarray:
    """Decaying, capped boost for tools that matched earlier user turns.

    Each turn's lexical scores are scaled to a maximum of 1 so a long earlier turn
    cannot dominate; turn ``i`` back is multiplied by ``decay**i``; the sum is capped.
    """
    cfg = engine.config
    turns = [t for t in state.history if t][-cfg.history_turns:] if cfg.history_turns else []
    out = np.zeros(len(state.indices), dtype=np.float32)
    for age, text in enumerate(reversed(turns), start=1):
        s = engine.lexical.scores(text)[state.indices]
        top = float(s.max()) if len(s) else 0.0
        if top > 0:
            out += (cfg.history_decay ** (age - 1)) * (s / top)
    return np.minimum(out, cfg.history_cap)


# Features that may only order tools another feature already found relevant.
TIE_BREAKERS: frozenset[str] = frozenset({"core"})

FEATURES: dict[str, Feature] = {
    "bm25": bm25,
    "core": core,
    "history": history,
}
