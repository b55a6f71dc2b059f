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

import numpy as np
from tooldisc.discovery.lexical import field_texts, normalized_column
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import WORD, gather_columns

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
    def build(cls, tools: Sequence[Tool], lo: int = 3, hi: int = 5,
              fields: Sequence[str] = ALL_FIELDS) -> NgramIndex:
        n = len(tools)
        texts = [field_texts(t) for t in tools]
        docs_text = normalized_column([" \n ".join(tt[f] for f in fields) for tt in texts])
        vocab: dict[str, int] = {}
        counts = np.zeros(n, dtype=np.int64)
        grams: list[str] = []
        for d, text in enumerate(docs_text):
            g = char_ngrams(WORD.findall(text), lo, hi)
            counts[d] = len(g)
            grams.extend(g)
        ids = np.fromiter((vocab.setdefault(g, len(vocab)) for g in grams), dtype=np.int64, count=len(grams))
        del grams
        v = len(vocab)
        if not len(ids):
            z64, z32, zf = np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32)
            return cls({}, np.zeros(0), np.zeros(0), z64, z32, zf, np.zeros(n + 1, np.int64), z32, zf, n, lo, hi)
        rows = np.repeat(np.arange(n, dtype=np.int64), counts)
        key = rows * v + ids  # tool-major
        del rows, ids
        key.sort()
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        tf = np.diff(np.r_[starts, len(key)]).astype(np.float64)
        cell = key[starts]
        del key, starts
        cell_row, cell_col = cell // v, cell % v
        df = np.bincount(cell_col, minlength=v).astype(np.float64)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        w = (1.0 + np.log(tf)) * idf[cell_col]
        norms = np.sqrt(np.bincount(cell_row, weights=w * w, minlength=n))
        w = (w / np.where(norms > 0, norms, 1.0)[cell_row]).astype(np.float32)
        row_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell_row, minlength=n), out=row_ptr[1:])
        by_col = np.argsort(cell_col, kind="stable")
        col_ptr = np.zeros(v + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=col_ptr[1:])
        return cls(vocab, idf, df, col_ptr, cell_row[by_col].astype(np.int32), w[by_col],
                   row_ptr, cell_col.astype(np.int32), w, n, lo, hi)

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

    def scores_rare(self, tokens: Sequence[str], max_df: int) -> np.ndarray:
        """A cheap lower bound of :meth:`scores` from the query's rarer n-grams only.

        Used to retrieve candidates in large catalogs: common n-grams have posting lists
        as long as the catalog and rank nothing on their own.
        """
        ids, w = self.query_vector(tokens)
        keep = self.df[ids] <= max_df
        return gather_columns(self.col_ptr, self.col_rows, self.col_data, ids[keep], w[keep], self.n_docs)

    def scores_subset(self, tokens: Sequence[str], indices: np.ndarray) -> np.ndarray:
        """Exact cosine for a few tools, through their rows (cost ∝ their n-grams)."""
        ids, w = self.query_vector(tokens)
        out = np.zeros(len(indices), dtype=np.float32)
        if not len(ids) or not len(indices):
            return out
        starts, ends = self.row_ptr[indices], self.row_ptr[indices + 1]
        lengths = ends - starts
        total = int(lengths.sum())
        if total == 0:
            return out
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
        cols = self.row_cols[offsets]
        pos = np.searchsorted(ids, cols)
        pos[pos >= len(ids)] = 0
        hit = ids[pos] == cols
        owner = np.repeat(np.arange(len(indices)), lengths)
        contrib = np.where(hit, self.row_data[offsets] * w[pos], 0.0)
        return np.bincount(owner, weights=contrib, minlength=len(indices)).astype(np.float32)
