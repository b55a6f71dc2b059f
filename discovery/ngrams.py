"""Character n-gram TF-IDF: the feature that forgives typos and Persian inflection.

``فاکتورها`` and ``فاکتور``, or ``invocie`` and ``invoice``, share most of their
character n-grams even when they share no token. Tool vectors (sublinear TF, smooth
IDF, L2-normalised — scikit-learn's ``TfidfVectorizer(analyzer="char_wb")``
convention) are built once, in a term-major layout for scoring every tool and a
tool-major layout for scoring a few retrieved candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tooldisc.discovery.columns import RawTokens, gc_paused, token_ids
from tooldisc.discovery.fields import TextColumns, as_columns
from tooldisc.discovery.model import Tool
from tooldisc.discovery.sparse import csc, gather_columns

ALL_FIELDS = ("name", "aliases", "keywords", "capability", "description", "examples")
SHORT_FIELDS = ("name", "aliases", "keywords", "capability")


def char_ngrams(tokens: Sequence[str], lo: int = 3, hi: int = 5) -> list[str]:
    """Word-bounded character n-grams (``char_wb``): each token padded with spaces."""
    out: list[str] = []
    for tok in tokens:
        padded = f" {tok} "
        n_chars = len(padded)
        for n in range(lo, min(hi, n_chars) + 1):
            out.extend([padded[i:i + n] for i in range(n_chars - n + 1)])
    return out


_BLOCK_ROWS = 16384


def _first_seen(streams: list[tuple[np.ndarray, np.ndarray]], n: int, n_raw: int) -> np.ndarray:
    """Raw token ids in order of first occurrence in the tool-major stream (tool, field, position)."""
    lens = [np.diff(ptr) for _, ptr in streams]
    tool_start = np.zeros(n + 1, dtype=np.int64)
    if lens:
        np.cumsum(np.sum(lens, axis=0), out=tool_start[1:])
    first = np.full(n_raw, np.iinfo(np.int64).max, dtype=np.int64)
    before = tool_start[:-1].copy()  # stream position of each tool's current field
    for (ids, ptr), field_lens in zip(streams, lens, strict=True):
        uniq, idx = np.unique(ids, return_index=True)
        tool = np.searchsorted(ptr, idx, side="right") - 1
        pos = before[tool] + (idx - ptr[tool])
        first[uniq] = np.minimum(first[uniq], pos)
        before += field_lens
    seen = np.flatnonzero(first != np.iinfo(np.int64).max)
    return seen[np.argsort(first[seen])]


@dataclass(frozen=True)
class NgramIndex:
    """L2-normalised TF-IDF weights in CSC (by n-gram) and CSR (by tool) layouts."""

    vocab: dict[str, int]
    idf: np.ndarray
    df: np.ndarray
    col_ptr: np.ndarray
    col_rows: np.ndarray
    col_data: np.ndarray
    row_ptr: np.ndarray
    row_cols: np.ndarray
    row_data: np.ndarray
    n_docs: int
    lo: int = 3
    hi: int = 5

    @classmethod
    def build(cls, tools: TextColumns | Sequence[Tool], lo: int = 3, hi: int = 5,
              fields: Sequence[str] = ALL_FIELDS) -> NgramIndex:
        """Tool × n-gram counts as (tool × token counts) @ (token × n-gram counts).

        Each distinct token's n-grams are generated once (not once per occurrence), and
        the counts matrix comes from one sparse product, so no Python object exists per
        n-gram occurrence. N-gram ids are numbered in first-occurrence order over the
        tools' token streams, as a per-tool loop would number them; TF-IDF and the L2
        norms use the same float64 operations in the same order.
        """
        with gc_paused():
            return cls._build(as_columns(tools), lo, hi, fields)

    @classmethod
    def _build(cls, columns: TextColumns, lo: int, hi: int, fields: Sequence[str]) -> NgramIndex:
        from scipy import sparse

        n = len(columns)
        table = RawTokens()
        streams = [token_ids(columns.column(f), table) for f in fields]  # one column alive at a time
        n_raw = len(table)
        order = _first_seen(streams, n, n_raw)
        names = table.names()
        del table
        vocab: dict[str, int] = {}
        gram_ids: list[int] = []
        per_token = np.zeros(len(order), dtype=np.int64)
        for k, raw in enumerate(order.tolist()):
            grams = char_ngrams((names[raw],), lo, hi)
            per_token[k] = len(grams)
            gram_ids.extend([vocab.setdefault(g, len(vocab)) for g in grams])
        del names
        v = len(vocab)
        token_grams = sparse.csr_matrix(
            (np.ones(len(gram_ids), np.float32), (np.repeat(order, per_token), np.asarray(gram_ids, np.int64))),
            shape=(n_raw, max(v, 1)))
        del gram_ids
        doc_rows = np.concatenate([np.zeros(0, np.int32)]
                                  + [np.repeat(np.arange(n, dtype=np.int32), np.diff(ptr)) for _, ptr in streams])
        doc_cols = np.concatenate([np.zeros(0, np.int32)] + [ids for ids, _ in streams])
        del streams
        doc_tokens = sparse.csr_matrix((np.ones(len(doc_rows), np.float32), (doc_rows, doc_cols)), shape=(n, n_raw))
        del doc_rows, doc_cols
        tf = doc_tokens @ token_grams  # exact integer counts in float32
        del doc_tokens, token_grams
        tf.sort_indices()
        if not tf.nnz:
            z64, z32, zf = np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32)
            return cls({}, np.zeros(0), np.zeros(0), z64, z32, zf, np.zeros(n + 1, np.int64), z32, zf, n, lo, hi)
        row_ptr = tf.indptr.astype(np.int64)
        row_cols = tf.indices.astype(np.int32, copy=False)
        df = np.bincount(row_cols, minlength=v).astype(np.float64)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        row_data = tf.data  # overwritten in place: counts → normalised weights
        for r0 in range(0, n, _BLOCK_ROWS):
            r1 = min(r0 + _BLOCK_ROWS, n)
            s, e = int(row_ptr[r0]), int(row_ptr[r1])
            cell_row = np.repeat(np.arange(r1 - r0), np.diff(row_ptr[r0:r1 + 1]))
            w = (1.0 + np.log(row_data[s:e].astype(np.float64))) * idf[row_cols[s:e]]
            norms = np.sqrt(np.bincount(cell_row, weights=w * w, minlength=r1 - r0))
            row_data[s:e] = (w / np.where(norms > 0, norms, 1.0)[cell_row]).astype(np.float32)
        tf.indices = row_cols
        by_col = tf.tocsc()  # a stable counting sort: rows stay ascending within each column
        del tf
        return cls(vocab, idf, df, by_col.indptr.astype(np.int64), by_col.indices.astype(np.int32, copy=False),
                   by_col.data, row_ptr, row_cols, row_data, n, lo, hi)

    @property
    def matrix(self) -> Any:
        """The L2-normalised TF-IDF weights as a ``scipy.sparse.csc_array`` (tools × n-grams)."""
        return csc(self.col_ptr, self.col_rows, self.col_data, self.n_docs)

    def query_vector(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(sorted n-gram ids, L2-normalised TF-IDF weights) of the query's known n-grams.

        Unknown n-grams count in the norm (at the largest IDF), so text the catalog has
        never seen lowers the similarity instead of vanishing.
        """
        grams = char_ngrams(tokens, self.lo, self.hi)
        counts: dict[int, int] = {}
        for g in grams:
            j = self.vocab.get(g)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        if not counts:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids = np.fromiter(sorted(counts), dtype=np.int64, count=len(counts))
        tf = np.fromiter((counts[j] for j in ids.tolist()), dtype=np.float64, count=len(counts))
        w = (1.0 + np.log(tf)) * self.idf[ids]
        unknown = max(len(grams) - int(tf.sum()), 0)
        norm = np.sqrt((w * w).sum() + unknown * float(self.idf.max(initial=1.0)) ** 2)
        return ids, (w / norm if norm > 0 else w).astype(np.float32)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Cosine similarity of the query with every tool (dense, float32)."""
        ids, w = self.query_vector(tokens)
        return gather_columns(self.col_ptr, self.col_rows, self.col_data, ids, w, self.n_docs)

    def scores_rare(self, tokens: Sequence[str], max_df: int,
                    qv: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """A cheap lower bound of :meth:`scores` from the query's rarer n-grams only.

        Used to retrieve candidates in large catalogs: common n-grams have posting lists
        as long as the catalog and rank nothing on their own.
        """
        ids, w = qv if qv is not None else self.query_vector(tokens)
        keep = self.df[ids] <= max_df
        return gather_columns(self.col_ptr, self.col_rows, self.col_data, ids[keep], w[keep], self.n_docs)

    def scores_subset(self, tokens: Sequence[str], indices: np.ndarray,
                      qv: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Exact cosine for a few tools, through their rows (cost ∝ their n-grams).

        The query is spread into a dense weight vector over the n-gram vocabulary so
        each of the candidates' n-grams costs one gather, not a search.
        """
        ids, w = qv if qv is not None else self.query_vector(tokens)
        out = np.zeros(len(indices), dtype=np.float32)
        if not len(ids) or not len(indices):
            return out
        starts, ends = self.row_ptr[indices], self.row_ptr[indices + 1]
        lengths = ends - starts
        total = int(lengths.sum())
        if total == 0:
            return out
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
        dense = np.zeros(len(self.idf), dtype=np.float32)
        dense[ids] = w
        contrib = self.row_data[offsets] * dense[self.row_cols[offsets]]
        owner = np.repeat(np.arange(len(indices)), lengths)
        return np.bincount(owner, weights=contrib, minlength=len(indices)).astype(np.float32)
