"""BM25F over a tool's weighted fields, precomputed into one sparse matrix.

All the work happens at index time (the bm25s lesson): each (tool, term) cell holds
its final BM25 contribution, so a query only sums a few columns. Fields are combined
BM25F-style — weighted, length-normalised term frequencies summed across fields
before one saturation — with Lucene's IDF ``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import gather_columns, normalize, split_name, tokenize

_SEP = "\x1e"
_TOKEN_OR_SEP = re.compile(r"\w+|\x1e", re.UNICODE)


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


def normalized_column(texts: Sequence[str]) -> list[str]:
    """:func:`normalize` many texts in one pass (``_`` folded to a space, as in tokenize)."""
    joined = _SEP.join(t.replace(_SEP, " ") for t in texts)
    parts = normalize(joined).replace("_", " ").split(_SEP)
    if len(parts) != len(texts):  # NFKC never merges the separator; guard anyway
        return [normalize(t).replace("_", " ") for t in texts]
    return parts


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
        """Tokenise each field column once, then aggregate (term, tool) cells with numpy sorts.

        A field's texts are normalised as one joined string (one C-level pass instead of
        one call per tool), and each distinct raw token is mapped to its term id once.
        """
        n = len(tools)
        vocab: dict[str, int] = {}
        texts = [field_texts(t) for t in tools]
        doc_parts: list[np.ndarray] = []
        term_parts: list[np.ndarray] = []
        val_parts: list[np.ndarray] = []
        stop = stopwords()
        for field, weight in field_weights.items():
            if weight <= 0:
                continue
            # One regex pass over the whole normalised column; "\x1e" tokens mark tool boundaries.
            tokens = _TOKEN_OR_SEP.findall(_SEP.join(normalized_column([tt.get(field, "") for tt in texts])))
            term_of = {tok: (-1 if tok in stop else vocab.setdefault(_singular(tok), len(vocab)))
                       for tok in sorted(set(tokens)) if tok != _SEP}
            term_of[_SEP] = -2
            ids = np.fromiter((term_of[t] for t in tokens), dtype=np.int32, count=len(tokens))
            del tokens
            doc_of = np.cumsum(ids == -2, dtype=np.int64).astype(np.int32)
            keep = ids >= 0
            ids, docs = ids[keep], doc_of[keep]
            if not len(ids):
                continue
            lens = np.bincount(docs, minlength=n).astype(np.float64)
            norm = weight / (1.0 - b + b * lens / lens.mean())
            doc_parts.append(docs)
            term_parts.append(ids)
            val_parts.append(norm[docs].astype(np.float32))
        n_terms = len(vocab)
        if not doc_parts:
            return cls({}, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n)
        docs = np.concatenate(doc_parts)
        key = np.concatenate(term_parts).astype(np.int64) * max(n, 1) + docs
        vals = np.concatenate(val_parts)
        del doc_parts, term_parts, val_parts, docs
        order = np.argsort(key, kind="stable")
        key = key[order]
        vals = vals[order]
        del order
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        tfw = np.add.reduceat(vals.astype(np.float64), starts)
        cell = key[starts]
        del key, vals
        cell_term, cell_doc = cell // max(n, 1), (cell % max(n, 1)).astype(np.int32)
        df = np.bincount(cell_term, minlength=n_terms).astype(np.float64)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        weights = (idf[cell_term] * tfw / (k1 + tfw)).astype(np.float32)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=indptr[1:])
        return cls(vocab, indptr, cell_doc, weights, n)

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
        qt = self.query_terms(text)
        ids = np.fromiter(qt.keys(), dtype=np.int64, count=len(qt))
        counts = np.fromiter(qt.values(), dtype=np.float64, count=len(qt))
        return gather_columns(self.indptr, self.rows, self.data, ids, counts, self.n_docs)

    def matched_terms(self, text: str, doc: int) -> list[str]:
        """Query terms that occur in tool ``doc`` (for ``--explain``)."""
        inverse = {j: t for t, j in self.vocab.items()}
        hits = []
        for j in self.query_terms(text):
            s, e = self.indptr[j], self.indptr[j + 1]
            if doc in self.rows[s:e]:
                hits.append(inverse[j])
        return sorted(hits)
