"""Character n-gram TF-IDF: the feature that forgives typos and Persian inflection.

``فاکتورها`` and ``فاکتور``, or ``invocie`` and ``invoice``, share most of their
character n-grams even when they share no token. A tool's vector follows
scikit-learn's ``TfidfVectorizer(analyzer="char_wb", sublinear_tf=True)``: word-bounded
n-grams of its tokens, ``1 + ln(tf)`` times the smooth IDF, L2-normalised.

The tools × n-grams matrix is not stored for large catalogs. A tool's n-gram counts are its tokens'
n-gram counts summed (``C = T·G``: T is tools × tokens, G tokens × n-grams), so the
index keeps T (by tool and by token), G (by n-gram), each tool's vector norm and each
n-gram's IDF — a tenth of the cells of C at 100,000 tools — and computes the exact
cosine of the tools a query needs. N-grams are numbered in sorted order of their key:
each character is coded by its rank in the catalog's alphabet and an n-gram packs its
codes into one integer (a Python int when they do not fit in 63 bits). A catalog small
enough to be ranked whole also keeps C's weights by n-gram (:attr:`NgramIndex.columns`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from tooldisc.discovery.indexes.sparse import ranges, stable_argsort
from tooldisc.discovery.kernels import B1, F4, F8, I1, I8, NUMPY, U1, U4, Kernels
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text.columns import RawTokens, release_memory, token_ids
from tooldisc.discovery.text.fields import TextColumns, as_columns
from tooldisc.memory import gc_paused

ALL_FIELDS = ("name", "aliases", "keywords", "capability", "description", "examples")
SHORT_FIELDS = ("name", "aliases", "keywords", "capability")

_BLOCK = 8192  # tools per block when scoring many tools (bounds temporary memory)
_NORM_BLOCK = 2048  # tools per block of C = T·G while building
# Bytes of C's blocks kept from the first pass (document frequencies) for the second
# (norms) instead of multiplied again: all of C at 10,000 tools (~25 MB), a fifth at
# 100,000, where more would raise the build's peak.
_KEEP_BYTES = 24 << 20



def char_ngrams(tokens: Sequence[str], lo: int = 3, hi: int = 5) -> list[str]:
    """Word-bounded character n-grams (``char_wb``): each token padded with spaces."""
    out: list[str] = []
    for tok in tokens:
        padded = f" {tok} "
        n_chars = len(padded)
        for n in range(lo, min(hi, n_chars) + 1):
            out.extend([padded[i:i + n] for i in range(n_chars - n + 1)])
    return out


def _code_points(tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of every token padded with spaces, concatenated, and each padded length."""
    text = "".join(f" {t} " for t in tokens)
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) + 2
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32), lengths


def _windows(codes: np.ndarray, lengths: np.ndarray, lo: int, hi: int, bits: int,
             dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(packed key, token) of every n-gram of every padded token; ``codes`` are alphabet codes."""
    start = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=start[1:])
    keys, owners = [], []
    for n in range(lo, hi + 1):
        fits = np.flatnonzero(lengths >= n)
        per = lengths[fits] - n + 1
        at = ranges(start[fits], per).astype(np.int64)
        key = codes[at].astype(dtype)
        for i in range(1, n):
            key = (key << bits) | codes[at + i].astype(dtype)
        keys.append(key)
        owners.append(np.repeat(fits, per))
    if not keys:
        return np.zeros(0, dtype=dtype), np.zeros(0, dtype=np.int64)
    return np.concatenate(keys), np.concatenate(owners)


class NgramBuilder:
    """Takes a field's raw token ids at a time, then builds the :class:`NgramIndex`.

    Fed the same token ids as the lexical index (see :func:`tooldisc.discovery.indexes.index.build_index`),
    so each field is tokenised once for both. The build keeps its temporaries to a few
    arrays as long as the token occurrences and blocks of tools, never the tools × n-grams matrix.
    """

    def __init__(self, n_tools: int, lo: int, hi: int, columns: bool = False):
        """``columns``: also keep the weights by n-gram (see :attr:`NgramIndex.columns`)."""
        self.n, self.lo, self.hi, self.columns = n_tools, lo, hi, columns
        self.fields: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, ids: np.ndarray, ptr: np.ndarray) -> None:
        """One field's raw token ids (``ids[ptr[t]:ptr[t+1]]`` belong to tool t)."""
        if len(ids):  # an empty field holds no n-gram
            # kept until finish: 2 bytes an occurrence while the ids fit (the tokeniser's int32 array is freed)
            self.fields.append((ids.astype(np.uint16) if int(ids.max()) < 1 << 16 else ids, ptr))

    def finish(self, names: Sequence[str]) -> NgramIndex:
        """``names[i]`` is raw token id i's text."""
        fields, self.fields = self.fields, []
        seen = np.zeros(len(names), dtype=bool)
        for ids, _ in fields:
            seen[ids] = True
        used = np.flatnonzero(seen)  # compact token ids, in raw id order
        del seen
        grams = _token_grams([names[i] for i in used.tolist()], self.lo, self.hi)
        release_memory(self.n)  # the windows' sort temporaries, before T's cells are sorted
        compact = np.zeros(len(names), dtype=np.int32)
        compact[used] = np.arange(len(used), dtype=np.int32)
        tool_ptr, tool_tokens, tool_counts = _tool_tokens(fields, compact, self.n, len(used))
        del fields, compact
        # T by token: each token's tools, ascending (a stable sort of the tool-major cells)
        by_tok = stable_argsort(tool_tokens, len(used))  # radix passes: several times a stable timsort's speed
        token_ptr = _ptr(tool_tokens[by_tok], len(used))
        token_tools = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(tool_ptr))[by_tok]
        token_counts = tool_counts[by_tok]
        del by_tok
        release_memory(self.n)
        df, norms, whole = _df_and_norms(self.n, tool_ptr, tool_tokens, tool_counts, grams)
        idf = np.log((1.0 + self.n) / (1.0 + df.astype(np.float64))) + 1.0
        g_ptr, g_gram, g_count = grams.by_token
        by_gram = stable_argsort(g_gram, len(grams.keys))  # G by n-gram (CSC): each n-gram's tokens, ascending
        gram_ptr = _ptr(g_gram[by_gram], len(grams.keys))
        gram_tokens = np.repeat(np.arange(len(used), dtype=np.int32), np.diff(g_ptr))[by_gram]
        gram_counts = g_count[by_gram]
        del by_gram
        release_memory(self.n)
        return NgramIndex(grams.keys, grams.alphabet, grams.bits, idf, df, norms, tool_ptr, tool_tokens,
                          tool_counts, token_ptr, token_tools, token_counts,
                          gram_ptr, gram_tokens, gram_counts, self.n, self.lo, self.hi,
                          _weight_columns(tool_ptr, tool_tokens, tool_counts, grams, idf, norms, whole)
                          if self.columns else None)


def _weight_columns(tool_ptr: np.ndarray, tool_tokens: np.ndarray, tool_counts: np.ndarray, grams: _Grams,
                    idf: np.ndarray, norms: np.ndarray, whole: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """C's float32 weights by n-gram (CSC: ptr, tools ascending, weights), computed as the
    factored scorer computes them, so :meth:`NgramIndex.scores` gives the same bits either way.

    ``whole``: C already computed (:func:`_df_and_norms`), else it is computed here."""
    if whole is None:
        from scipy import sparse

        g_ptr, g_gram, g_count = grams.by_token
        g = sparse.csr_matrix((g_count.astype(np.float64), g_gram, g_ptr), shape=(len(g_ptr) - 1, len(grams.keys)))
        t = sparse.csr_matrix((tool_counts.astype(np.float64), tool_tokens, tool_ptr),
                              shape=(len(tool_ptr) - 1, g.shape[0]))
        whole = t @ g
    # C by n-gram, each n-gram's tools ascending: a stable sort of the tool-major cells by n-gram
    # (what ``tocsc`` gives, without a second scipy matrix); exact integer counts, float32 or float64 alike
    v = whole.shape[1]
    order = stable_argsort(whole.indices, v)
    grams_of = whole.indices[order]
    tools = np.repeat(np.arange(whole.shape[0], dtype=np.int32), np.diff(whole.indptr))[order]
    weight = _sublinear_counts(whole.data[order]) * idf[grams_of] / norms[tools]
    return _ptr(grams_of, v), tools, weight.astype(np.float32)


@dataclass(frozen=True)
class _Grams:
    keys: np.ndarray  # sorted packed keys
    alphabet: dict[str, int]
    bits: int
    by_token: tuple[np.ndarray, np.ndarray, np.ndarray]  # G by token: ptr, n-gram ids (int32), counts


def _token_grams(tokens: list[str], lo: int, hi: int) -> _Grams:
    """The n-gram vocabulary (packed keys) and G, each distinct token's n-gram counts."""
    cps, lengths = _code_points(tokens)
    alphabet_cps, codes = np.unique(cps, return_inverse=True)
    del cps
    alphabet = {chr(c): i + 1 for i, c in enumerate(alphabet_cps.tolist())}
    bits = max(1, len(alphabet).bit_length())
    dtype: Any = np.int64 if bits * hi <= 63 else object
    keys, owner = _windows((codes + 1).astype(np.uint32), lengths, lo, hi, bits, dtype)
    del codes
    vocab, at = np.unique(keys, return_inverse=True)  # one sort (a search per window cost more)
    del keys
    v = max(len(vocab), 1)
    cell = owner * v
    del owner
    cell += at.reshape(-1)
    del at
    cell, count = np.unique(cell, return_counts=True)  # by token, then n-gram
    g_ptr = _ptr(cell // v, len(tokens))
    return _Grams(vocab, alphabet, bits, (g_ptr, (cell % v).astype(np.int32), _small(count)))


def _tool_tokens(fields: list[tuple[np.ndarray, np.ndarray]], compact: np.ndarray, n: int,
                 n_tokens: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T by tool (CSR): each tool's distinct tokens, ascending, and how often it holds each."""
    total = sum(len(ids) for ids, _ in fields)
    keys = np.empty(total, dtype=np.int64)
    at = 0
    part = keys[:0]
    for ids, ptr in fields:
        part = keys[at:at + len(ids)]
        part[:] = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        part *= n_tokens
        part += compact[ids]
        at += len(ids)
    del part  # a view: it would keep the occurrences alive after the distinct cells are taken
    keys.sort()
    # each distinct cell's first occurrence, with an end mark: the distinct keys are taken (and the
    # occurrences freed) before the run lengths exist, so no three arrays as long as the cells coexist
    new = np.ones(len(keys) + 1, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=new[1:-1])
    keys = keys[new[:-1]]
    counts = _small(np.diff(np.flatnonzero(new)))
    del new
    tool_ptr = _ptr(keys // max(n_tokens, 1), n)
    return tool_ptr, (keys % max(n_tokens, 1)).astype(np.int32), counts


def _ptr(sorted_owner: np.ndarray, n: int) -> np.ndarray:
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(sorted_owner, minlength=n), out=ptr[1:])
    return ptr


def _small(counts: np.ndarray) -> np.ndarray:
    top = int(counts.max(initial=0))
    return counts.astype(np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.uint32)


class _Csr:
    """A CSR block of ``C = T·G`` as the build reads it: what it used of scipy's matrix (``data`` is replaced
    by a narrower copy when the block is kept for the second pass)."""

    __slots__ = ("data", "indices", "indptr", "shape")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, shape: tuple[int, int]):
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, shape

    @property
    def nnz(self) -> int:
        return len(self.indices)


def _df_and_norms(n: int, tool_ptr: np.ndarray, tool_tokens: np.ndarray, tool_counts: np.ndarray,
                  grams: _Grams) -> tuple[np.ndarray, np.ndarray, Any]:
    """Document frequency of each n-gram, L2 norm of each tool's TF-IDF vector, and C when it is one block.

    Two passes over blocks of tools of ``C = T·G`` (the IDF needs every tool's counts
    before any norm): no more than one small block of C exists at a time. A catalog of
    one block computes C once (returned, float32 counts as a CSR matrix, else None).
    """
    from tooldisc.discovery.kernels import product as sparse_product

    g_ptr, g_gram, g_count = grams.by_token
    v = len(grams.keys)
    g_values = g_count.astype(np.float32)

    def product(lo: int, hi: int) -> _Csr:
        s, e = int(tool_ptr[lo]), int(tool_ptr[hi])
        # exact integer counts in float32, each row's cells in scipy's order (the norms add them in it)
        return _Csr(*sparse_product(tool_ptr[lo:hi + 1] - s, tool_tokens[s:e], tool_counts[s:e].astype(np.float32),
                                    g_ptr, g_gram, g_values, v), (hi - lo, v))

    whole = product(0, n) if n <= _NORM_BLOCK else None  # one block: both passes read the same product
    kept: dict[int, Any] = {}  # blocks of the first pass the second reads again, within _KEEP_BYTES

    def blocks() -> Any:
        for lo in range(0, n, _NORM_BLOCK):
            hi = min(lo + _NORM_BLOCK, n)
            c = whole if whole is not None else kept.pop(lo, None)
            yield lo, hi, c if c is not None else product(lo, hi)

    df = np.zeros(v, dtype=np.int64)
    room = _KEEP_BYTES
    for lo, _, c in blocks():
        df += np.bincount(c.indices, minlength=v)
        if whole is None and 5 * c.nnz <= room:  # int32 n-gram ids and (almost always) uint8 counts
            c.data = _small(c.data.astype(np.int64))
            room -= c.data.nbytes + c.indices.nbytes
            kept[lo] = c
    c = None  # the last block, unless kept
    release_memory(n)
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    norms = np.zeros(n, dtype=np.float64)
    for lo, hi, c in blocks():
        w = _sublinear_counts(c.data)
        w *= idf[c.indices]
        w *= w
        norms[lo:hi] = np.sqrt(np.bincount(np.repeat(np.arange(hi - lo), np.diff(c.indptr)), weights=w,
                                           minlength=hi - lo))
    release_memory(n)
    return df.astype(np.int32), norms, whole


def _sublinear(counts: np.ndarray) -> np.ndarray:
    return 1.0 + np.log(counts.astype(np.float64))


@lru_cache(maxsize=1)
def _sublinear_table() -> np.ndarray:
    return _sublinear(np.arange(1, 256))


def _sublinear_counts(counts: np.ndarray) -> np.ndarray:
    """``1 + ln(count)`` of exact positive integer counts (any dtype), by table lookup while every count is below 256.

    Counts are almost all 1: a gather from the 255 values beats a logarithm per cell,
    and gives the same float64 bits (the table is the same function). uint8 counts are
    below 256 by their type: they index a table padded at 0 directly, with no intp copy
    of what may be a million cells.
    """
    if counts.dtype == np.uint8:
        return np.concatenate([[0.0], _sublinear_table()])[counts]
    at = counts.astype(np.intp)
    if not len(at) or int(at.max()) >= 256:
        return _sublinear(counts)
    at -= 1
    return _sublinear_table().take(at)


@dataclass(frozen=True)
class SharedCounts:
    """The n-gram counts some tools share with a query, and the TF-IDF weights they give those tools.

    The retrieve step keeps them for its candidates, so the content words of the same request
    (a subset of its n-grams) are scored over those tools without reading the index again.
    ``row`` indexes :attr:`indices`, ``col`` the n-grams :attr:`ids` (ascending within a row:
    the order the weights are summed in); ``count`` holds exact counts (float64), ``weight``
    each count's tool-side weight as the reference vectors hold it (float32), computed once
    for every query vector read over these counts.
    """

    indices: np.ndarray  # the tools counted
    ids: np.ndarray  # the query's n-gram ids, sorted
    row: np.ndarray
    col: np.ndarray
    count: np.ndarray
    weight: np.ndarray

    def slots(self, indices: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Where the tools ``indices`` and the n-grams ``ids`` (sorted) sit among these, or None
        unless all are here (``indices`` found in ascending :attr:`indices`, ``ids`` in :attr:`ids`)."""
        rows = np.searchsorted(self.indices, indices)
        cols = np.searchsorted(self.ids, ids)
        if (len(rows) and (rows[-1] >= len(self.indices) or not np.array_equal(self.indices[rows], indices))) or (
                len(cols) and (cols[-1] >= len(self.ids) or not np.array_equal(self.ids[cols], ids))):
            return None
        return rows, cols


@dataclass(frozen=True)
class NgramIndex:
    """Token-factored n-gram TF-IDF (see the module docstring for the layout)."""

    keys: np.ndarray  # packed n-gram keys, sorted: n-gram id = position
    alphabet: dict[str, int]  # character → code (1..A)
    bits: int  # bits per character code in a key
    idf: np.ndarray
    df: np.ndarray
    norms: np.ndarray  # L2 norm of each tool's TF-IDF vector (0 for a tool without n-grams)
    tool_ptr: np.ndarray  # T by tool: tokens of tool t are tool_tokens[tool_ptr[t]:tool_ptr[t+1]]
    tool_tokens: np.ndarray
    tool_counts: np.ndarray
    token_ptr: np.ndarray  # T by token: tools holding token k, ascending
    token_tools: np.ndarray
    token_counts: np.ndarray
    gram_ptr: np.ndarray  # G by n-gram: tokens holding n-gram g, ascending
    gram_tokens: np.ndarray
    gram_counts: np.ndarray
    n_docs: int
    lo: int = 3
    hi: int = 5
    # C's weights by n-gram (ptr, tools, float32), kept for catalogs small enough to rank
    # whole: scoring every tool then sums a few columns instead of expanding every tool's tokens.
    columns: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    kernels: Kernels = NUMPY  # the query loops' backend (:mod:`.kernels`), chosen when the index is built

    @classmethod
    def build(cls, tools: TextColumns | Sequence[Tool], lo: int = 3, hi: int = 5,
              fields: Sequence[str] = ALL_FIELDS, columns: bool = False) -> NgramIndex:
        """The index over ``fields`` of every tool (tools or prepared columns)."""
        with gc_paused():
            prepared = as_columns(tools)
            table = RawTokens()
            builder = NgramBuilder(len(prepared), lo, hi, columns)
            for f in dict.fromkeys(fields):
                builder.add(*token_ids(prepared.pieces(f), table))  # one column alive at a time
            return builder.finish(table.names())

    # --- what the index holds, for oracles and operators ----------------------------

    def grams(self) -> list[str]:
        """Each n-gram's text, in id order."""
        chars = {code: ch for ch, code in self.alphabet.items()}
        mask = (1 << self.bits) - 1
        out = []
        for key in self.keys.tolist():
            text = []
            while key:
                text.append(chars[key & mask])
                key >>= self.bits
            out.append("".join(reversed(text)))
        return out

    @property
    def vocab(self) -> dict[str, int]:
        """N-gram → id (built on request; the index itself keeps only packed keys)."""
        return {g: i for i, g in enumerate(self.grams())}

    @property
    def matrix(self) -> Any:
        """The L2-normalised TF-IDF weights as a ``scipy.sparse.csc_array`` (tools × n-grams)."""
        from scipy import sparse

        t = sparse.csr_array((self.tool_counts.astype(np.float64), self.tool_tokens, self.tool_ptr),
                             shape=(self.n_docs, len(self.token_ptr) - 1))
        g = sparse.csc_array((self.gram_counts.astype(np.float64), self.gram_tokens, self.gram_ptr),
                             shape=(len(self.token_ptr) - 1, len(self.keys)))
        c = (t @ g.tocsr()).tocsr()
        c.sort_indices()
        rows = np.repeat(np.arange(self.n_docs), np.diff(c.indptr))
        c.data = (((1.0 + np.log(c.data)) * self.idf[c.indices]) / self.norms[rows]).astype(np.float32)
        return sparse.csc_array(c)

    # --- queries -------------------------------------------------------------------

    @cached_property
    def idf_max(self) -> float:
        return float(self.idf.max(initial=1.0))

    @cached_property
    def count_table(self) -> np.ndarray:
        """``1 + ln(c)`` at index c for every count G and T hold (index 0 unused): the kernels' logarithms.

        The same function as :func:`_sublinear_counts` (one logarithm per value), so a weight read
        from here has the bits of one computed from the count."""
        top = max(int(self.gram_counts.max(initial=0)), int(self.token_counts.max(initial=0)), 255)
        return np.concatenate([[0.0], _sublinear(np.arange(1, top + 1))])

    @cached_property
    def divisors(self) -> np.ndarray:
        """The norms with 1 for a tool without n-grams (whose sums are 0): a division with no mask."""
        return np.where(self.norms > 0, self.norms, 1.0)

    @cached_property
    def alphabet_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """The alphabet as (sorted code points, their codes): what the kernels look characters up in."""
        items = sorted((ord(ch), code) for ch, code in self.alphabet.items())
        return (np.array([p for p, _ in items], dtype=np.uint32), np.array([c for _, c in items], dtype=np.int64))

    @cached_property
    def loops(self) -> dict[str, Any]:
        """The query loops' forms for these arrays, chosen once (:meth:`.kernels.Kernels.bind`).

        The query's arrays have these dtypes by construction: code points uint32, lengths, ids and
        indices int64, weights float32 (the BM25F scores too), the estimate's weights float64, masks bool.
        """
        k, text = self.kernels, self.alphabet_codes
        forms = {
            "query_grams": k.bind("query_grams", U4, I8, *text, self.keys, self.bits, self.lo, self.hi, U1),
            "shared": k.bind("shared", self.tool_ptr, self.tool_tokens, self.tool_counts, self.gram_ptr,
                             self.gram_tokens, self.gram_counts, len(self.token_ptr) - 1, I8, I8, self.count_table,
                             self.idf, self.norms, F4),
            "candidates": k.bind("candidates", F4, B1, I8, F8, self.gram_ptr, self.gram_tokens, self.gram_counts,
                                 self.count_table, self.token_ptr, self.token_tools, self.token_counts,
                                 self.divisors, I1, int, float, float, float, int),
        }
        if self.columns is not None:
            forms["gather"] = k.bind("gather", *self.columns, I8, F4, self.n_docs)
        return forms

    def query_vector(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(sorted n-gram ids, L2-normalised TF-IDF weights) of the query's known n-grams.

        Unknown n-grams count in the norm (at the largest IDF), so text the catalog has
        never seen lowers the similarity instead of vanishing.
        """
        return self.query_vectors(tokens, np.zeros(len(tokens), dtype=np.uint8))[0]

    def query_vectors(self, tokens: Sequence[str], part: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                              tuple[np.ndarray, np.ndarray]]:
        """:meth:`query_vector` of ``tokens`` and of the tokens ``part`` marks (a query's content words), in one pass.

        The second has the bits ``query_vector`` gives those tokens alone: the same counts and totals."""
        points, lengths = _code_points(tokens)
        ids, tf, total, tf_part, total_part = self.loops["query_grams"](
            points, lengths, *self.alphabet_codes, self.keys, self.bits, self.lo, self.hi, part)
        inside = np.flatnonzero(tf_part) if len(tf_part) else tf_part
        return self._weights(ids, tf, total), self._weights(ids[inside], tf_part[inside], total_part)

    def _weights(self, ids: np.ndarray, tf: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
        """A query's known n-grams' L2-normalised TF-IDF weights (``total``: all its n-grams, known or not)."""
        if not len(ids):
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        w = (1.0 + np.log(tf.astype(np.float64))) * self.idf[ids]
        norm = np.sqrt((w * w).sum() + (total - int(tf.sum())) * self.idf_max ** 2)
        return ids, (w / norm if norm > 0 else w).astype(np.float32)

    def scores_subset(self, tokens: Sequence[str], indices: np.ndarray,
                      qv: tuple[np.ndarray, np.ndarray] | None = None,
                      shared: SharedCounts | None = None) -> np.ndarray:
        """Exact cosine of the query with the tools ``indices`` (float32, in that order).

        The counts a tool shares with the query are summed from its tokens — only those
        tokens that hold one of the query's n-grams are expanded — and weights are
        computed exactly as the reference vectors are (float64, cast to float32) and
        summed per tool in n-gram order. ``shared``: counts this request already read for
        more tools and n-grams (:meth:`shared_counts`), used when they cover these: every
        tool they hold is summed with this query's weights, 0 at n-grams it lacks (a product
        of 0 adds exactly nothing to a sum of non-negative terms, so each tool's sum has the
        bits of the sum over its own n-grams alone).
        """
        ids, w = qv if qv is not None else self.query_vector(tokens)
        indices = np.asarray(indices, dtype=np.int64)
        at = shared.slots(indices, ids) if shared is not None else None
        if shared is None or at is None:
            return self.cosines(self.shared_counts(indices, ids), w)
        rows, cols = at
        wide = np.zeros(len(shared.ids), dtype=np.float32)
        wide[cols] = w
        return self.cosines(shared, wide)[rows]

    def shared_counts(self, indices: np.ndarray, ids: np.ndarray) -> SharedCounts:
        """The counts of the n-grams ``ids`` (a query's, sorted) in each of the tools ``indices``, weighted."""
        return self.shared_cosines(indices, ids, np.zeros(len(ids), dtype=np.float32))[0]

    def shared_cosines(self, indices: np.ndarray, ids: np.ndarray, w: np.ndarray) -> tuple[SharedCounts, np.ndarray]:
        """:meth:`shared_counts` and, from the same pass, :meth:`cosines` of them with the query weights ``w``."""
        indices = np.asarray(indices, dtype=np.int64)
        found: list[tuple[np.ndarray, ...]] = []
        table, n_big, cos = self.count_table, 0, []
        for lo in range(0, len(indices), _BLOCK):  # blocks bound the temporaries when scoring many tools
            row, col, count, weight, big, part = self.loops["shared"](
                self.tool_ptr, self.tool_tokens, self.tool_counts, self.gram_ptr, self.gram_tokens, self.gram_counts,
                len(self.token_ptr) - 1, indices[lo:lo + _BLOCK], ids, table, self.idf, self.norms, w)
            cos.append(part)
            if len(row):
                found.append((row + lo if lo else row, col, count, weight))
                n_big += big
        if not found:
            row, col, count, weight = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.float32)
        elif len(found) == 1:
            row, col, count, weight = found[0]
        else:
            row, col, count, weight = (np.concatenate(part) for part in zip(*found, strict=True))
        shared = SharedCounts(indices, ids, row, col, count, weight)
        if n_big:  # counts past the table: the logarithm itself (the table holds its values below)
            big = np.flatnonzero(count >= len(table))
            weight[big] = ((1.0 + np.log(count[big])) * self.idf[ids][col[big]]
                           / self.norms[indices[row[big]]]).astype(np.float32)
            return shared, self.cosines(shared, w)
        return shared, cos[0] if len(cos) == 1 else np.concatenate(cos) if cos else np.zeros(0, np.float32)

    def cosines(self, shared: SharedCounts, w: np.ndarray) -> np.ndarray:
        """Exact cosine of each tool ``shared`` counted with query weights ``w`` over ``shared.ids``:
        per tool, float32 weights summed in float64 in n-gram order."""
        return np.bincount(shared.row, weights=shared.weight * w[shared.col],
                           minlength=len(shared.indices)).astype(np.float32)

    def scores(self, tokens: Sequence[str], qv: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Cosine similarity of the query with every tool (dense, float32); ``qv``: its vector, when known."""
        if self.columns is None:
            return self.scores_subset(tokens, np.arange(self.n_docs), qv)
        ids, w = qv if qv is not None else self.query_vector(tokens)
        return self.loops["gather"](*self.columns, ids, w, self.n_docs)

    def scores_of(self, tokens: Sequence[str], indices: np.ndarray,
                  qv: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """``scores(tokens)[indices]`` by the cheaper layout: kept columns score every tool in a few
        column sums; the factored index computes only these tools' rows (same bits either way)."""
        if self.columns is not None or len(indices) == self.n_docs:
            return self.scores(tokens, qv)[indices]
        return self.scores_subset(tokens, indices, qv)
