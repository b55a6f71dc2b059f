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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter

import numpy as np

from tooldisc.discovery.indexes.lexical import LexicalIndex
from tooldisc.discovery.indexes.sparse import gather_columns, stable_argsort
from tooldisc.discovery.kernels import F8, I8, bind, rows_numpy
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text.fields import TextColumns, terms_of_tokens

FIELD = "expansions"


@dataclass(frozen=True)
class ExpansionIndex:
    """BM25 weights of expansion phrases with catalog-wide IDF, and IDF for the query mass."""

    index: LexicalIndex  # single-field BM25 over the expansions text, IDF replaced by the catalog-wide one
    main: LexicalIndex  # the authored-text index, for document frequencies of other query terms
    idf: Mapping[str, float]  # catalog-wide IDF of every expansion term
    n_docs: int
    keys: np.ndarray  # cell_keys of ``index``: the retrieved tools' cells are looked up, not gathered
    cells: Callable[..., np.ndarray] = rows_numpy  # the cell reads' form (the index's ``Kernels.rows``)

    @classmethod
    def build(cls, tools: Sequence[Tool], texts: Mapping[str, str], main: LexicalIndex, k1: float, b: float,
              stem: bool = True, cells: Callable[..., np.ndarray] = rows_numpy) -> ExpansionIndex:
        """``texts`` maps tool name → expansions text; ``tools`` are the catalog's, in order.

        The expansions are an extra column (:class:`~.fields.TextColumns`): indexed, never
        part of a tool record. ``cells``: the form of the cell reads (every form, the same bits).
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
        return cls(rescaled, main, idf, n, cell_keys(local.indptr, local.rows, n), cells)

    @cached_property
    def _cells(self) -> Callable[..., np.ndarray]:
        """The cell reads' form for these arrays, chosen once (:meth:`.kernels.Kernels.bind`)."""
        return bind(self.cells, self.keys, self.index.data, self.n_docs, I8, F8, I8)

    def mass(self, tokens: Sequence[str]) -> float:
        """Σ catalog-wide IDF of the query's terms (a term found nowhere has the largest IDF)."""
        return self._mass_of(terms_of_tokens(list(tokens), self.index.stem))

    def _mass_of(self, found: Sequence[str]) -> float:
        total = 0.0
        for term in found:
            w = self.idf.get(term)
            if w is None:
                j = self.main.vocab.get(term)
                w = _idf(self.n_docs, int(self.main.indptr[j + 1] - self.main.indptr[j]) if j is not None else 0)
            total += w
        return total

    def scores(self, tokens: Sequence[str], indices: np.ndarray | None = None) -> np.ndarray:
        """The tools' expansions BM25 over the query's IDF mass (float32, ≈ [0, 1]).

        Every tool's (dense), or only those of ``indices`` (ascending: the retrieved tools),
        whose cells are looked up in the query terms' columns instead of summing whole
        columns; the same values bit for bit (:func:`~.kernels.rows_numpy`).
        """
        if indices is None:
            raw = self.index.scores(list(tokens))
            m = self.mass(tokens)
        else:
            found = terms_of_tokens(list(tokens), self.index.stem)
            counts: dict[int, int] = {}
            for term in found:  # the query's known terms and their counts, as LexicalIndex.query_terms
                j = self.index.vocab.get(term)
                if j is not None:
                    counts[j] = counts.get(j, 0) + 1
            raw = self._cells(self.keys, self.index.data, self.n_docs,
                            np.fromiter(counts, dtype=np.int64, count=len(counts)),
                            np.fromiter(counts.values(), dtype=np.float64, count=len(counts)),
                            indices).astype(np.float32)
            m = self._mass_of(found)
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
        main_keys = cell_keys(main.indptr, main.rows, n).astype(np.int64, copy=False)
        keys = cell_main[known] * n + local.rows[known]
        at = np.minimum(np.searchsorted(main_keys, keys), len(main_keys) - 1)
        shared = main_keys[at] == keys
        union -= np.bincount(np.repeat(np.arange(len(local_df)), local_df)[known][shared], minlength=len(local_df))
    return union.tolist()


def cell_keys(indptr: np.ndarray, rows: np.ndarray, n_rows: int) -> np.ndarray:
    """Each cell of a CSC layout as ``column · n_rows + row``: ascending, so one ``searchsorted`` finds any cell.

    uint32 while every key fits (4 bytes a cell beside the 8 of rows and data), else int64.
    """
    n_cols = len(indptr) - 1
    dtype = np.uint32 if n_cols * max(n_rows, 1) < 2**32 else np.int64
    keys = np.repeat(np.arange(n_cols, dtype=np.int64), np.diff(indptr)) * n_rows + rows
    return keys.astype(dtype)


def _idf(n: int, df: int) -> float:
    """Lucene's BM25 IDF, as :mod:`.lexical` uses."""
    return float(np.log1p((n - df + 0.5) / (df + 0.5)))


@dataclass(frozen=True)
class AffinityIndex:
    """Learned phrase weights per tool (a linear SVM, each tool against the rest), phrase-major.

    A query's phrases (:func:`tooldisc.discovery.text.phrases.phrases`) select columns; a tool's
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
    keys: np.ndarray  # cell_keys of the arrays above
    cells: Callable[..., np.ndarray] = rows_numpy  # the cell reads' form (the index's ``Kernels.rows``)

    @classmethod
    def build(cls, tools: Sequence[Tool], weights: Mapping[str, Mapping[str, float]],
              temperature: float, cells: Callable[..., np.ndarray] = rows_numpy) -> AffinityIndex:
        """Cells in (phrase, tool) order from one array per distinct weights mapping.

        Tools that share a mapping (variants of one tool) share its phrase codes and
        weights, so the Python work follows the distinct mappings, not the tools.
        """
        position = {t.name: i for i, t in enumerate(tools)}
        present = sorted(((position[name], w) for name, w in weights.items() if name in position),
                         key=itemgetter(0))  # catalog order: each phrase's tools come out ascending
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
        order = stable_argsort(cols, len(vocab))  # by phrase; tools stay ascending within one
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=len(vocab)), out=indptr[1:])
        rows = rows[order]
        return cls(vocab, indptr, rows, data[order], len(tools), temperature, cell_keys(indptr, rows, len(tools)),
                   cells)

    @cached_property
    def _cells(self) -> Callable[..., np.ndarray]:
        """The cell reads' form for these arrays, chosen once (:meth:`.kernels.Kernels.bind`)."""
        return bind(self.cells, self.keys, self.data, self.n_docs, I8, F8, I8)

    def evidence(self, query: str, indices: np.ndarray | None = None) -> np.ndarray:
        """Every tool's summed phrase weights for ``query``, over √(phrases found); or those of ``indices`` (ascending)."""
        from tooldisc.discovery.text.phrases import phrases

        ids = sorted(self.vocab[p] for p in phrases(query) if p in self.vocab)
        if not ids:
            return np.zeros(self.n_docs if indices is None else len(indices), dtype=np.float64)
        if indices is None:
            summed = gather_columns(self.indptr, self.rows, self.data, np.asarray(ids, dtype=np.int64),
                                    np.ones(len(ids)), self.n_docs)
        else:
            summed = self._cells(self.keys, self.data, self.n_docs, np.asarray(ids, dtype=np.int64),
                                np.ones(len(ids)), indices).astype(np.float32)
        return summed.astype(np.float64) / np.sqrt(len(ids))

    def scores(self, query: str, indices: np.ndarray, temperature: float | None = None,
               evidence: np.ndarray | None = None) -> np.ndarray:
        """Softmax of the evidence over ``indices`` (all zero when no phrase of the query is known).

        ``evidence``: :meth:`evidence` of this query, when the caller already has it.
        """
        z = self.evidence(query, indices) if evidence is None else evidence[indices]
        if not len(z) or not z.any():
            return np.zeros(len(indices), dtype=np.float64)
        z = (z - z.max()) / (temperature or self.temperature)
        e = np.exp(z)
        return e / e.sum()
