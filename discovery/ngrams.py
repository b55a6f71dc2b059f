"""Character n-gram TF-IDF: the feature that forgives typos and Persian inflection.

``فاکتورها`` and ``فاکتور``, or ``invocie`` and ``invoice``, share most of their
character n-grams even when they share no token. Tool vectors (sublinear TF, smooth
IDF, L2-normalised — scikit-learn's ``TfidfVectorizer(analyzer="char_wb")``
convention) are built once; a query costs one pass over its own n-grams.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tooldisc.discovery.lexical import field_texts
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import gather_columns, tokenize

NGRAM_FIELDS = ("name", "aliases", "keywords", "capability", "description", "examples")


def char_ngrams(tokens: Sequence[str], lo: int = 3, hi: int = 5) -> list[str]:
    """Word-bounded character n-grams (``char_wb``): each token padded with spaces."""
    out: list[str] = []
    for tok in tokens:
        padded = f" {tok} "
        n_chars = len(padded)
        for n in range(lo, hi + 1):
            if n > n_chars:
                break
            out.extend(padded[i:i + n] for i in range(n_chars - n + 1))
    return out


def tool_text(tool: Tool) -> str:
    texts = field_texts(tool)
    return " \n ".join(texts[f] for f in NGRAM_FIELDS)


@dataclass(frozen=True)
class NgramIndex:
    """Tool-major (CSR) and term-major (CSC) arrays of L2-normalised TF-IDF weights."""

    vocab: dict[str, int]
    idf: np.ndarray
    col_ptr: np.ndarray
    col_rows: np.ndarray
    col_data: np.ndarray
    n_docs: int
    lo: int = 3
    hi: int = 5

    @classmethod
    def build(cls, tools: Sequence[Tool], lo: int = 3, hi: int = 5) -> NgramIndex:
        n = len(tools)
        vocab: dict[str, int] = {}
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        for d, tool in enumerate(tools):
            ids = [vocab.setdefault(g, len(vocab)) for g in char_ngrams(tokenize(tool_text(tool)), lo, hi)]
            if ids:
                cols.append(np.asarray(ids, dtype=np.int64))
                rows.append(np.full(len(ids), d, dtype=np.int64))
        v = len(vocab)
        if not cols:
            return cls({}, np.zeros(0), np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n, lo, hi)
        col = np.concatenate(cols)
        row = np.concatenate(rows)
        key = col * n + row
        key.sort()
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        counts = np.diff(np.r_[starts, len(key)]).astype(np.float64)
        cell = key[starts]
        cell_col, cell_row = cell // n, cell % n
        df = np.bincount(cell_col, minlength=v).astype(np.float64)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        w = (1.0 + np.log(counts)) * idf[cell_col]
        norms = np.sqrt(np.bincount(cell_row, weights=w * w, minlength=n))
        w = w / np.where(norms > 0, norms, 1.0)[cell_row]
        col_ptr = np.zeros(v + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=col_ptr[1:])
        return cls(vocab, idf, col_ptr, cell_row.astype(np.int32), w.astype(np.float32), n, lo, hi)

    def query_vector(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(n-gram ids, L2-normalised TF-IDF weights) of the query's known n-grams."""
        counts: dict[int, int] = {}
        for g in char_ngrams(tokens, self.lo, self.hi):
            j = self.vocab.get(g)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        if not counts:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        w = (1.0 + np.log(tf)) * self.idf[ids]
        # Normalise over all the query's n-grams, known or not, so unknown text lowers similarity.
        total = len(char_ngrams(tokens, self.lo, self.hi))
        unknown = max(total - int(tf.sum()), 0)
        norm = np.sqrt((w * w).sum() + unknown * float(self.idf.max(initial=1.0)) ** 2)
        return ids, (w / norm).astype(np.float32) if norm > 0 else w.astype(np.float32)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Cosine similarity of the query with every tool (dense, float32)."""
        ids, w = self.query_vector(tokens)
        return gather_columns(self.col_ptr, self.col_rows, self.col_data, ids, w, self.n_docs)
