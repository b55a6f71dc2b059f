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
        data = local.data.astype(np.float64)
        idf: dict[str, float] = {}
        for term, j in local.vocab.items():
            lo, hi = int(local.indptr[j]), int(local.indptr[j + 1])
            rows = local.rows[lo:hi]
            m = main.vocab.get(term)
            if m is not None:
                rows = np.union1d(rows, main.rows[main.indptr[m]:main.indptr[m + 1]])
            global_idf = _idf(n, len(rows))
            idf[term] = global_idf
            data[lo:hi] *= global_idf / _idf(n, hi - lo)
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
    return {tool: " \n ".join(p for p, c in ps for _ in range(max(1, math.isqrt(c)))) for tool, ps in expansions.items()}


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
        position = {t.name: i for i, t in enumerate(tools)}
        cells: dict[str, list[tuple[int, float]]] = {}
        for name, phrase_weights in weights.items():
            i = position.get(name)
            if i is None:
                continue
            for phrase, w in phrase_weights.items():
                cells.setdefault(phrase, []).append((i, float(w)))
        vocab = {p: j for j, p in enumerate(sorted(cells))}
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        rows, data = [], []
        for p, j in vocab.items():
            col = sorted(cells[p])
            rows.extend(r for r, _ in col)
            data.extend(w for _, w in col)
            indptr[j + 1] = indptr[j] + len(col)
        return cls(vocab, indptr, np.asarray(rows, dtype=np.int64), np.asarray(data, dtype=np.float64),
                   len(tools), temperature)

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
