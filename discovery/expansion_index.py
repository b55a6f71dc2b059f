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
