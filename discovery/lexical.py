"""BM25F over a tool's weighted fields, precomputed into one sparse matrix.

All the work happens at index time (the bm25s lesson): each (tool, term) cell holds
its final BM25 contribution, so a query only sums a few columns. Fields are combined
BM25F-style — weighted, length-normalised term frequencies summed across fields
before one saturation — with Lucene's IDF ``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import split_name, tokenize


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    text = resources.files("tooldisc.discovery").joinpath("data/stopwords.txt").read_text("utf-8")
    words = [w for line in text.splitlines() if not line.startswith("#") for w in tokenize(line)]
    return frozenset(words)


def field_texts(tool: Tool) -> dict[str, str]:
    """The searchable text of each field of a tool (DESIGN §5)."""
    params = tool.parameters or {}
    props = params.get("properties") if isinstance(params, Mapping) else None
    param_names = " ".join(split_name(p) for p in props) if isinstance(props, Mapping) else ""
    return {
        "name": split_name(tool.name),
        "aliases": " \n ".join(tool.aliases),
        "keywords": " \n ".join(tool.keywords),
        "capability": split_name(tool.capability or ""),
        "domains": " ".join(split_name(d) for d in tool.domains),
        "description": tool.description,
        "examples": " \n ".join(tool.examples),
        "parameters": param_names,
    }


def terms(text: str) -> list[str]:
    """Tokens minus stop words, English plurals folded: what documents and queries match on."""
    return terms_of_tokens(tokenize(text))


def terms_of_tokens(tokens: list[str]) -> list[str]:
    stop = stopwords()
    return [_singular(t) for t in tokens if t not in stop]


def _singular(token: str) -> str:
    """``invoices`` → ``invoice``, ``categories`` → ``category``; other tokens unchanged."""
    if len(token) <= 3 or not token.isascii() or not token.endswith("s") or token.endswith("ss"):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "xes", "sses")):
        return token[:-2]
    return token[:-1]


@dataclass(frozen=True)
class LexicalIndex:
    """Term-major (CSC) arrays of precomputed BM25F weights."""

    vocab: Mapping[str, int]
    indptr: np.ndarray
    rows: np.ndarray
    data: np.ndarray
    n_docs: int

    @classmethod
    def build(cls, tools: Sequence[Tool], field_weights: Mapping[str, float], k1: float, b: float) -> LexicalIndex:
        from scipy import sparse

        n = len(tools)
        vocab: dict[str, int] = {}
        total = None
        texts = [field_texts(t) for t in tools]
        df_seen = None
        for field, weight in field_weights.items():
            if weight <= 0:
                continue
            rows: list[int] = []
            cols: list[int] = []
            lengths = np.zeros(n, dtype=np.float64)
            for d, tt in enumerate(texts):
                toks = terms(tt.get(field, ""))
                lengths[d] = len(toks)
                for tok in toks:
                    rows.append(d)
                    cols.append(vocab.setdefault(tok, len(vocab)))
            if not rows:
                continue
            tf = sparse.csr_matrix(
                (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(n, max(len(vocab), 1))
            )
            tf.sum_duplicates()
            avg = lengths.mean() or 1.0
            norm = weight / (1.0 - b + b * lengths / avg)
            scaled = sparse.diags(norm) @ tf
            seen = tf.copy()
            seen.data[:] = 1.0
            if total is None:
                total, df_seen = scaled, seen
            else:
                total = _resize(total, len(vocab)) + scaled
                df_seen = _resize(df_seen, len(vocab)) + seen
        if total is None:
            empty = np.zeros(1, dtype=np.int64)
            return cls({}, empty, np.zeros(0, np.int32), np.zeros(0, np.float32), n)
        total = _resize(total, len(vocab)).tocsc()
        df_seen = _resize(df_seen, len(vocab)).tocsc()
        df_seen.data[:] = 1.0
        df = np.asarray(df_seen.sum(axis=0)).ravel()
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        total.sort_indices()
        col_of = np.repeat(np.arange(total.shape[1]), np.diff(total.indptr))
        tfw = total.data
        weights = idf[col_of] * tfw / (k1 + tfw)
        return cls(vocab, total.indptr.astype(np.int64), total.indices.astype(np.int32),
                   weights.astype(np.float32), n)

    def query_terms(self, text: str | list[str]) -> dict[int, int]:
        """Known term ids of ``text`` (or of already-tokenised text) with their counts."""
        out: dict[int, int] = {}
        for tok in terms(text) if isinstance(text, str) else terms_of_tokens(text):
            j = self.vocab.get(tok)
            if j is not None:
                out[j] = out.get(j, 0) + 1
        return out

    def scores(self, text: str | list[str]) -> np.ndarray:
        """BM25F score of every tool for ``text`` or its tokens (dense, float32)."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        for j, count in self.query_terms(text).items():
            s, e = self.indptr[j], self.indptr[j + 1]
            out[self.rows[s:e]] += self.data[s:e] * count
        return out

    def matched_terms(self, text: str, doc: int) -> list[str]:
        """Query terms that occur in tool ``doc`` (for ``--explain``)."""
        inverse = {j: t for t, j in self.vocab.items()}
        hits = []
        for j in self.query_terms(text):
            s, e = self.indptr[j], self.indptr[j + 1]
            if doc in self.rows[s:e]:
                hits.append(inverse[j])
        return sorted(hits)


def _resize(m, n_cols: int):
    if m.shape[1] == n_cols:
        return m
    m = m.tocsr()
    m.resize((m.shape[0], n_cols))
    return m
