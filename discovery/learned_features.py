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

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from tooldisc.discovery.fields import terms_of_tokens
from tooldisc.discovery.lexical import LexicalIndex

RANKER_FEATURES: frozenset[str] = frozenset(
    {"bm25", "ngram", "alias", "embedding", "prior", "history", "core", "expansion"})
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


def ranking_feature_names(engine: Any, expansion: bool) -> list[str]:
    """The ranking features a learned ranker is fitted over: those this engine computes."""
    names = ["bm25"]
    if engine.ngram_index is not None:
        names += ["ngram", "prior"]
    if engine.alias_index is not None:
        names.append("alias")
    if engine.embedding_index is not None:
        names.append("embedding")
    if engine.config.history_turns:
        names.append("history")
    if expansion:
        names.append("expansion")
    return names


def content_ngram_best(engine: Any, tokens: Sequence[str], indices: np.ndarray) -> float:
    """Best n-gram cosine of the query's content words (stop words dropped) over ``indices``."""
    from tooldisc.discovery.fields import stopwords

    if engine.ngram_index is None or not len(indices):
        return 0.0
    stop = stopwords()
    content = [t for t in tokens if t not in stop]
    if not content:
        return 0.0
    return float(engine.ngram_index.scores_subset(content, indices).max(initial=0.0))


def ranking_rows(engine: Any, query: str, history: Sequence[str], expansion: Any, n: int,
                 relevant: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(candidate names, raw ranking features, offer features, history rules abstention out).

    Runs the pipeline's authorize and retrieve steps (default context), so a tool the
    security filter removes is never a row. Candidates are the best ``n`` by the config's
    weights (the expansion feature at weight 1), the best ``n`` by expansions alone, and
    every retrieved ``relevant`` tool.
    """
    from tooldisc.discovery.features import FEATURES
    from tooldisc.discovery.pipeline import authorize, retrieve

    req = engine._request(query, None, None, history)
    ret = retrieve(authorize(req, engine), engine)
    idx = ret.indices
    names = ranking_feature_names(engine, expansion is not None)
    cols = []
    exp = None
    for name in names:
        if name == "expansion":
            exp = expansion.scores(req.tokens)[idx].astype(np.float64)
            cols.append(exp)
        else:
            cols.append(FEATURES[name](engine, ret).astype(np.float64))
    x = np.stack(cols, axis=1) if len(idx) else np.zeros((0, len(names)))
    weights = np.array([engine.config.weight(f) if f != "expansion" else 1.0 for f in names])
    score = x @ weights
    keep = _top(score, n)
    if exp is not None:
        keep = np.union1d(keep, _top(exp, n))
    tool_names = np.asarray(engine.security.names, dtype=object)[idx]
    if len(relevant):
        keep = np.union1d(keep, np.flatnonzero(np.isin(tool_names, np.asarray(relevant, dtype=object))))
    best_bm25 = float(ret.lexical[idx].max(initial=0.0))
    offer = offer_features(req.tokens, engine.lexical, best_bm25, content_ngram_best(engine, req.tokens, idx),
                           float(exp.max(initial=0.0)) if exp is not None else 0.0)
    history_hit = "history" in names and bool(x[:, names.index("history")].max(initial=0.0) > 0)
    return tool_names[keep], x[keep], offer, history_hit


def _top(values: np.ndarray, n: int) -> np.ndarray:
    positive = np.flatnonzero(values > 0)
    if len(positive) > n:
        positive = positive[np.argpartition(-values[positive], n - 1)[:n]]
    return np.sort(positive)


@lru_cache(maxsize=1)
def default_abstention() -> Any:
    """The abstention model shipped with tooldisc, fitted on its own gold sets (see docs/learning.md)."""
    from tooldisc.discovery.learned import parse_abstention

    text = resources.files("tooldisc.discovery").joinpath("data/abstention.json").read_text("utf-8")
    return parse_abstention(json.loads(text), "abstention.json")
