"""The expansions field: BM25 over each tool's learned phrases, as a feature of its own.

Expansions are indexed apart from the authored text (never in a tool record, its
definition hash or its policy) and scored as their own feature with their own weight.
Two choices keep them from hurting tools that have none — new tools, or tools no
labelled request has reached yet:

- the IDF of a term is the catalog-wide one (document frequency over the authored
  text *and* the expansions), so a word common in descriptions ("get", "information")
  stays cheap even when few tools have expansions;
- the score is divided by the query's IDF mass (the sum of its terms' IDF), not by the
  best tool's score: it says how much of the query the tool's past requests explain,
  so one weak match is never stretched to 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tooldisc.discovery.fields import TextColumns, terms_of_tokens
from tooldisc.discovery.lexical import LexicalIndex
from tooldisc.discovery.model import Tool
from tooldisc.discovery.sparse import gather_columns

FIELD = "expansions"


@dataclass(frozen=True)
class ExpansionIndex:
    """BM25 weights of expansion phrases with catalog-wide IDF, and IDF for the query mass."""

    index: LexicalIndex  # single-field BM25 over the expansions text, IDF replaced by the catalog-wide one
    main: LexicalIndex  # the authored-text index, for document frequencies of other query terms
    idf: Mapping[str, float]  # catalog-wide IDF of every expansion term
    n_docs: int

    @classmethod
    def build(cls, tools: Sequence[Tool], texts: Mapping[str, str], main: LexicalIndex, k1: float, b: float,
              stem: bool = True) -> ExpansionIndex:
        """``texts`` maps tool name → expansions text; ``tools`` are the catalog's, in order.

        The expansions are an extra column (:class:`~.fields.TextColumns`): indexed, never
        part of a tool record.
        """
        column = [texts.get(t.name, "") for t in tools]
        local = LexicalIndex.build(TextColumns(tools, {FIELD: column}), {FIELD: 1.0}, k1, b, stem)
        n = len(tools)
        union = _union_df(local, main)
        local_df = np.diff(local.indptr).tolist()
        idf: dict[str, float] = {}
        factor = np.empty(len(local_df), dtype=np.float64)
        for (term, j), df_all, df in zip(local.vocab.items(), union, local_df, strict=True):  # j = 0, 1, ...
            idf[term] = global_idf = _idf(n, df_all)
            factor[j] = global_idf / _idf(n, df)
        data = local.data.astype(np.float64)
        data *= np.repeat(factor, local_df)
        rescaled = LexicalIndex(local.vocab, local.indptr, local.rows, data.astype(np.float32), n, stem)
        return cls(rescaled, main, idf, n)

    def mass(self, tokens: Sequence[str]) -> float:
        """Σ catalog-wide IDF of the query's terms (a term found nowhere has the largest IDF)."""
        total = 0.0
        for term in terms_of_tokens(list(tokens), self.index.stem):
            w = self.idf.get(term)
            if w is None:
                j = self.main.vocab.get(term)
                w = _idf(self.n_docs, int(self.main.indptr[j + 1] - self.main.indptr[j]) if j is not None else 0)
            total += w
        return total

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Every tool's expansions BM25 over the query's IDF mass (dense float32, ≈ [0, 1])."""
        raw = self.index.scores(list(tokens))
        m = self.mass(tokens)
        return raw / np.float32(m) if m > 0 else raw


def expansion_texts(expansions: Mapping[str, Sequence[tuple[str, int]]]) -> dict[str, str]:
    """Tool → the text its expansions column indexes: each phrase ⌊√count⌋ times.

    Repetition carries how many requests shared a phrase into BM25 term frequency,
    damped so that one very common phrase does not swamp the rest.
    """
    memo: dict[tuple[tuple[str, int], ...], str] = {}  # tools with the same phrases share one text
    out: dict[str, str] = {}
    for tool, ps in expansions.items():
        text = memo.get(ps)
        if text is None:
            text = memo[ps] = " \n ".join([q for p, c in ps for q in (p,) * max(1, math.isqrt(c))])
        out[tool] = text
    return out


def _union_df(local: LexicalIndex, main: LexicalIndex) -> list[int]:
    """Per expansion term (in term-id order), the tools that have it in their expansions or authored text.

    Each cell of the expansions index is looked up among the authored index's cells as a
    ``term · n + tool`` key: both layouts list a term's tools in ascending order, so the
    authored keys are sorted and one ``searchsorted`` finds every cell they share.
    """
    n = max(local.n_docs, 1)
    local_df = np.diff(local.indptr)
    main_of = np.fromiter((main.vocab.get(t, -1) for t in local.vocab), dtype=np.int64, count=len(local.vocab))
    main_df = np.diff(main.indptr)
    union = local_df + np.where(main_of >= 0, main_df[np.maximum(main_of, 0)] if len(main_df) else 0, 0)
    cell_main = np.repeat(main_of, local_df)
    known = cell_main >= 0
    if known.any():
        main_keys = np.repeat(np.arange(len(main_df), dtype=np.int64), main_df) * n + main.rows
        keys = cell_main[known] * n + local.rows[known]
        at = np.minimum(np.searchsorted(main_keys, keys), len(main_keys) - 1)
        shared = main_keys[at] == keys
        union -= np.bincount(np.repeat(np.arange(len(local_df)), local_df)[known][shared], minlength=len(local_df))
    return union.tolist()


def _idf(n: int, df: int) -> float:
    """Lucene's BM25 IDF, as :mod:`.lexical` uses."""
    return float(np.log1p((n - df + 0.5) / (df + 0.5)))


@dataclass(frozen=True)
class AffinityIndex:
    """Learned phrase weights per tool (a linear SVM, each tool against the rest), phrase-major.

    A query's phrases (:func:`tooldisc.discovery.phrases.phrases`) select columns; a tool's
    evidence is the sum of its weights over them, divided by √(phrases found) so long
    queries do not win by length; the feature is the softmax of that evidence over the
    retrieved tools at ``temperature`` — near 1 for the one tool the phrases point at.
    """

    vocab: Mapping[str, int]
    indptr: np.ndarray
    rows: np.ndarray  # tool indices
    data: np.ndarray  # weights
    n_docs: int
    temperature: float

    @classmethod
    def build(cls, tools: Sequence[Tool], weights: Mapping[str, Mapping[str, float]],
              temperature: float) -> AffinityIndex:
        """Cells in (phrase, tool) order from one array per distinct weights mapping.

        Tools that share a mapping (variants of one tool) share its phrase codes and
        weights, so the Python work follows the distinct mappings, not the tools.
        """
        position = {t.name: i for i, t in enumerate(tools)}
        present = [(position[name], w) for name, w in weights.items() if name in position]
        distinct = {id(w): w for _, w in present}
        vocab = {p: j for j, p in enumerate(sorted({p for w in distinct.values() for p in w}))}
        coded = {key: (np.fromiter(map(vocab.__getitem__, w), dtype=np.int64, count=len(w)),
                       np.fromiter(map(float, w.values()), dtype=np.float64, count=len(w)))
                 for key, w in distinct.items()}
        parts = [coded[id(w)] for _, w in present]
        cols = np.concatenate([c for c, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
        data = np.concatenate([d for _, d in parts]) if parts else np.zeros(0, dtype=np.float64)
        rows = np.repeat(np.fromiter((i for i, _ in present), dtype=np.int64, count=len(present)),
                         [len(c) for c, _ in parts]).astype(np.int64)
        order = np.lexsort((rows, cols))  # by phrase, then tool (a tool holds a phrase once)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=len(vocab)), out=indptr[1:])
        return cls(vocab, indptr, rows[order], data[order], len(tools), temperature)

    def evidence(self, query: str) -> np.ndarray:
        """Every tool's summed phrase weights for ``query``, over √(phrases found)."""
        from tooldisc.discovery.phrases import phrases

        ids = np.fromiter(sorted(self.vocab[p] for p in phrases(query) if p in self.vocab), dtype=np.int64)
        if not len(ids):
            return np.zeros(self.n_docs, dtype=np.float64)
        summed = gather_columns(self.indptr, self.rows, self.data, ids, np.ones(len(ids)), self.n_docs)
        return summed.astype(np.float64) / np.sqrt(len(ids))

    def scores(self, query: str, indices: np.ndarray, temperature: float | None = None,
               evidence: np.ndarray | None = None) -> np.ndarray:
        """Softmax of the evidence over ``indices`` (all zero when no phrase of the query is known).

        ``evidence``: :meth:`evidence` of this query, when the caller already has it.
        """
        z = (self.evidence(query) if evidence is None else evidence)[indices]
        if not len(z) or not z.any():
            return np.zeros(len(indices), dtype=np.float64)
        z = (z - z.max()) / (temperature or self.temperature)
        e = np.exp(z)
        return e / e.sum()
