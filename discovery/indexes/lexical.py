"""BM25F over a tool's weighted fields, precomputed into one sparse matrix.

All the work happens at index time (the bm25s lesson): each (tool, term) cell holds
its final BM25 contribution, so a query only sums a few columns. Fields are combined
BM25F-style — weighted, length-normalised term frequencies summed across fields
before one saturation — with Lucene's IDF ``log(1 + (N - df + 0.5) / (df + 0.5))``.
The searchable text comes from :mod:`.fields`, the tokens from :mod:`.columns`,
the layout and its gather from :mod:`.sparse`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from tooldisc.discovery.indexes.sparse import BLOCK_TOOLS, csc, ranges, term_cells, term_df
from tooldisc.discovery.kernels import F8, I8, NUMPY, Kernels
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text.columns import RawTokens, release_memory, token_ids
from tooldisc.discovery.text.fields import (
    TextColumns,
    as_columns,
    stopwords,
    terms,
    terms_of_tokens,
    terms_of_words,
)
from tooldisc.memory import gc_paused


@dataclass(frozen=True)
class LexicalIndex:
    """Term-major (CSC) arrays of precomputed BM25F weights."""

    vocab: Mapping[str, int]
    indptr: np.ndarray
    rows: np.ndarray
    data: np.ndarray
    n_docs: int
    stem: bool = True  # terms are Snowball stems (see :mod:`.fields`); queries must agree
    kernels: Kernels = NUMPY  # the query loops' backend (:mod:`.kernels`), chosen when the index is built

    @classmethod
    def build(cls, tools: TextColumns | Sequence[Tool], field_weights: Mapping[str, float], k1: float, b: float,
              stem: bool = True) -> LexicalIndex:
        """Token ids per field column, then (term, tool) cells aggregated block by block.

        Each distinct sentence of a field is tokenised once and each distinct raw token is
        mapped to its term once; occurrences only ever exist as int32 arrays. Term ids are
        assigned as before (fields in order, a field's new tokens in sorted order), and a
        cell's weighted frequency adds the same float32 field norms in the same order
        (field, then position), so every weight is bit-identical to the per-tool formula.
        """
        with gc_paused():
            columns = as_columns(tools)
            table = RawTokens()
            builder = LexicalBuilder(len(columns), k1, b, stem)
            for field, weight in field_weights.items():
                if weight > 0:  # one column alive at a time
                    builder.add(weight, *token_ids(columns.pieces(field), table), table)
            return builder.finish()

    @property
    def matrix(self) -> Any:
        """The BM25F weights as a ``scipy.sparse.csc_array`` (tools × terms, columns in vocabulary order)."""
        return csc(self.indptr, self.rows, self.data, self.n_docs)

    def query_terms(self, text: str | list[str]) -> dict[int, int]:
        """Known term ids of ``text`` (or of already-tokenised text) with their counts."""
        out: dict[int, int] = {}
        for tok in terms(text, self.stem) if isinstance(text, str) else terms_of_tokens(text, self.stem):
            j = self.vocab.get(tok)
            if j is not None:
                out[j] = out.get(j, 0) + 1
        return out

    def scores(self, text: str | list[str]) -> np.ndarray:
        """BM25F score of every tool for ``text`` or its tokens (dense, float32)."""
        qt = self.query_terms(text)
        ids = np.fromiter(qt.keys(), dtype=np.int64, count=len(qt))
        counts = np.fromiter(qt.values(), dtype=np.float64, count=len(qt))
        return self._gather(self.indptr, self.rows, self.data, ids, counts, self.n_docs)

    @cached_property
    def _gather(self) -> Callable[..., np.ndarray]:
        """The gather's form for these arrays, chosen once (:meth:`.kernels.Kernels.bind`)."""
        return self.kernels.bind("gather", self.indptr, self.rows, self.data, I8, F8, self.n_docs)

    def matched_terms(self, text: str, doc: int) -> list[str]:
        """Query terms that occur in tool ``doc`` (for ``--explain``)."""
        inverse = {j: t for t, j in self.vocab.items()}
        hits = []
        for j in self.query_terms(text):
            s, e = self.indptr[j], self.indptr[j + 1]
            if doc in self.rows[s:e]:
                hits.append(inverse[j])
        return sorted(hits)


_STOP, _UNSEEN = -1, -2  # raw_term marks: a stop word, a token no field has shown yet
_STOP16 = 0xFFFF  # the stop mark in uint16 term ids


_COUNT_TOOLS = 8192  # tools per segment sum in _segment_counts


def _segment_counts(flags: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """``flags[ptr[t]:ptr[t + 1]].sum()`` of each tool t (int64); ``flags`` ends in a False sentinel.

    ``reduceat`` casts its whole input to the sum's type first: over a whole field that is an
    int64 copy of every occurrence's flag (32 MB for the descriptions of 100k tools, the build's
    peak). Over a block of tools it is that block's.
    """
    n = len(ptr) - 1
    out = np.zeros(n, dtype=np.int64)
    for lo in range(0, n, _COUNT_TOOLS):
        hi = min(lo + _COUNT_TOOLS, n)
        s, e = int(ptr[lo]), int(ptr[hi])
        sums = np.add.reduceat(flags[s:e + 1], ptr[lo:hi] - s, dtype=np.int64)
        sums[-1] -= int(flags[e])  # the last segment runs to the slice's end, one flag past the block
        sums[ptr[lo:hi] == ptr[lo + 1:hi + 1]] = 0  # reduceat gives an empty segment its start element
        out[lo:hi] = sums
    return out


class LexicalBuilder:
    """Takes a field's raw token ids at a time (in config field order), then builds the :class:`LexicalIndex`.

    :func:`tooldisc.discovery.indexes.index.build_index` feeds it and the n-gram builder the
    same token ids, so each field is tokenised once for both.
    """

    def __init__(self, n_tools: int, k1: float, b: float, stem: bool):
        self.n, self.k1, self.b, self.stem = n_tools, k1, b, stem
        self.stop = stopwords()
        self.vocab: dict[str, int] = {}
        self.raw_term = np.zeros(0, dtype=np.int32)  # raw token id → term id; _STOP, _UNSEEN
        self.kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per field: term ids, tool offsets, norms

    def add(self, weight: float, ids: np.ndarray, ptr: np.ndarray, table: RawTokens) -> None:
        """One field at BM25F weight ``weight``: ``ids[ptr[t]:ptr[t+1]]`` are tool t's raw token ids."""
        if not len(ids):  # an empty field adds no cell (and no term)
            return
        n, b, vocab = self.n, self.b, self.vocab
        if len(table) > len(self.raw_term):
            self.raw_term = np.concatenate([self.raw_term, np.full(len(table) - len(self.raw_term), _UNSEEN, np.int32)])
        raw_term = self.raw_term
        present = np.zeros(len(raw_term), dtype=bool)
        present[ids] = True
        new = np.flatnonzero(present & (raw_term == _UNSEEN)).tolist()
        del present
        if new:
            names = table.names()
            words = sorted(names[i] for i in new)
            del names
            kept = [w for w in words if w not in self.stop]
            for w, term in zip(kept, terms_of_words(kept, self.stem), strict=True):
                raw_term[table[w]] = vocab.setdefault(term, len(vocab))
            for w in words:
                if w in self.stop:
                    raw_term[table[w]] = _STOP
        # Term ids as uint16 while the vocabulary fits (half the bytes of the field's occurrences).
        small = len(vocab) < _STOP16
        lookup = np.where(raw_term < 0, _STOP16, raw_term).astype(np.uint16) if small else raw_term
        term_ids = lookup[ids]
        del lookup
        # Kept tokens per tool by a segment sum over the flags, block by block (see _segment_counts).
        keep = np.zeros(len(term_ids) + 1, dtype=bool)  # a False sentinel: every segment start is in range
        if small:
            np.less(term_ids, _STOP16, out=keep[:-1])
        else:
            np.greater_equal(term_ids, 0, out=keep[:-1])
        per_tool = _segment_counts(keep, ptr)
        term_ids = term_ids[keep[:-1]]
        del keep
        if not len(term_ids):
            return
        lens = per_tool.astype(np.float64)
        with np.errstate(divide="ignore"):  # b = 1 and an empty field: that tool has no cell
            norm = weight / (1.0 - b + b * lens / (lens.sum() / n))  # the mean (np.mean adds the same way), without its overhead
        # 4-byte offsets while they fit: every field's are kept until the cells are built
        offsets = np.zeros(n + 1, dtype=np.int32 if len(term_ids) < 2**31 else np.int64)
        np.cumsum(per_tool, out=offsets[1:])
        self.kept.append((term_ids, offsets, norm.astype(np.float32)))

    def finish(self) -> LexicalIndex:
        n, k1, kept, vocab = self.n, self.k1, self.kept, self.vocab
        self.kept = []
        n_terms = len(vocab)
        if not kept:
            return LexicalIndex({}, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n, self.stem)
        # Two passes over tool blocks (document frequencies, then cells) instead of keeping
        # every block's cells until the column sizes are known: a second sort is cheaper
        # than 12 bytes per cell of peak memory.
        blocks = [(lo, min(lo + BLOCK_TOOLS, n)) for lo in range(0, n, BLOCK_TOOLS)]
        # One block: both passes read the same cells (computed once, as the n-gram build does).
        whole = term_cells(kept, 0, n, n_terms) if len(blocks) == 1 else None
        df_int = np.zeros(n_terms, dtype=np.int64)
        for lo, hi in blocks:
            df_int += whole[0] if whole else term_df(kept, lo, hi, n_terms)
        release_memory(n)
        df = df_int.astype(np.float64)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df_int, out=indptr[1:])
        del df_int
        rows = np.empty(int(indptr[-1]), dtype=np.int32)
        weights = np.empty(int(indptr[-1]), dtype=np.float32)
        fill = indptr[:-1].copy()
        for lo, hi in blocks:
            counts, cell_doc, tfw = whole or term_cells(kept, lo, hi, n_terms)
            whole = None
            pos = ranges(fill, counts)
            cell_term = np.repeat(np.arange(n_terms, dtype=np.int32), counts)
            rows[pos] = cell_doc
            weights[pos] = (idf[cell_term] * tfw / (k1 + tfw)).astype(np.float32)
            fill += counts
            del pos, cell_term, cell_doc, tfw  # each block's temporaries are reused by the next (no trim between)
        release_memory(n)
        return LexicalIndex(vocab, indptr, rows, weights, n, self.stem)
