"""The sparse-index machinery every index shares: term-major (CSC) arrays and their gather.

An index is a tools × terms matrix kept as three arrays in compressed-column form —
``indptr`` (per term), ``rows`` (tool of each cell, ascending within a term) and
``data`` — so a query sums a few columns (:func:`gather_columns`) with no Python
loop over terms. :func:`csc` exposes the same arrays as a ``scipy.sparse`` matrix
without copying. The build helpers (:func:`ranges`, :func:`stable_argsort`,
:func:`term_cells`, :func:`term_df`) turn token streams into cells block by block.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def gather_columns(col_ptr: np.ndarray, col_rows: np.ndarray, col_data: np.ndarray, ids: np.ndarray,
                   weights: np.ndarray, n_rows: int) -> np.ndarray:
    """Σⱼ weightⱼ · column ⱼ of a CSC layout, as a dense float32 vector, in a few numpy calls.

    The inner loop of every sparse scorer: no Python loop over query terms.
    """
    starts = col_ptr[ids]
    lengths = col_ptr[ids + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(n_rows, dtype=np.float32)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
    return np.bincount(
        col_rows[offsets], weights=col_data[offsets] * np.repeat(weights, lengths), minlength=n_rows
    ).astype(np.float32)


def csc(indptr: np.ndarray, rows: np.ndarray, data: np.ndarray, n_rows: int) -> Any:
    """The arrays as a ``scipy.sparse.csc_array`` of shape (n_rows, terms), sharing memory."""
    from scipy import sparse

    return sparse.csc_array((data, rows, indptr), shape=(n_rows, len(indptr) - 1), copy=False)


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])`` without a loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    # int32 positions when they fit: these arrays are as long as the occurrences they index
    dtype = np.int32 if int(starts.max(initial=0)) + total < 2**31 else np.int64
    out = np.repeat((starts - np.cumsum(lengths) + lengths).astype(dtype), lengths)
    out += np.arange(total, dtype=dtype)
    return out




def stable_argsort(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """Stable argsort of small non-negative ints by LSD radix passes over 16-bit digits.

    NumPy sorts ``uint16`` stably by radix (linear); wider ints go to timsort.
    """
    if n_keys <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while n_keys > 1 << shift:
        digit = ((keys[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order




BLOCK_TOOLS = 4096


def term_df(fields: list[tuple[np.ndarray, np.ndarray, np.ndarray]], lo: int, hi: int, n_terms: int) -> np.ndarray:
    """Cells per term (document frequency) over tools ``lo:hi``: :func:`term_cells` ``[0]`` by a plain sort.

    Counting distinct (tool, term) pairs needs no order among a cell's occurrences, so the
    packed pairs are sorted by value (numpy's vectorised sort) instead of a stable argsort and gathers.
    """
    size = hi - lo
    dtype = np.int64 if size * n_terms >= 2**32 else np.uint32
    parts = []
    for term_ids, offsets, _ in fields:
        lens = np.diff(offsets[lo:hi + 1])
        key = np.repeat(np.arange(size, dtype=dtype), lens)
        key *= n_terms
        # a field's term ids are uint16 while the vocabulary it saw fitted, else int32 (never negative
        # here: stop words are dropped); added in the key's own type, which holds every packed pair
        key += term_ids[offsets[lo]:offsets[hi]].astype(dtype, copy=False)
        parts.append(key)
    keys = np.concatenate(parts) if len(parts) != 1 else parts[0]
    del parts
    keys.sort()
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    return np.bincount(keys[first] % n_terms, minlength=n_terms)


def term_cells(fields: list[tuple[np.ndarray, np.ndarray, np.ndarray]], lo: int, hi: int,
               n_terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells per term, tool of each cell, Σ field norm) for tools ``lo:hi``, cells in (term, tool) order.

    Occurrences are laid out tool-major with fields in order inside a tool, so the stable
    sort by term leaves each cell's occurrences in (field, position) order: the float64
    sum adds the same values in the same order as a per-tool loop.
    """
    size = hi - lo
    per_field = [np.diff(offsets[lo:hi + 1]) for _, offsets, _ in fields]
    per_tool = np.sum(per_field, axis=0)
    start = np.zeros(size, dtype=np.int64)
    np.cumsum(per_tool[:-1], out=start[1:])
    total = int(per_tool.sum())
    terms_ = np.empty(total, dtype=np.int32)
    vals = np.empty(total, dtype=np.float32)
    for (term_ids, offsets, norm), lens in zip(fields, per_field, strict=True):
        pos = ranges(start, lens)
        terms_[pos] = term_ids[offsets[lo]:offsets[hi]]
        vals[pos] = np.repeat(norm[lo:hi], lens)
        start += lens
    docs = np.repeat(np.arange(lo, hi, dtype=np.int32), per_tool)
    order = stable_argsort(terms_, n_terms)
    terms_, docs, vals = terms_[order], docs[order], vals[order]
    del order
    new = np.ones(total, dtype=bool)
    np.not_equal(terms_[1:], terms_[:-1], out=new[1:])
    new[1:] |= docs[1:] != docs[:-1]
    starts = np.flatnonzero(new)
    del new
    counts = np.bincount(terms_[starts], minlength=n_terms)
    tfw = np.add.reduceat(vals.astype(np.float64), starts) if total else np.zeros(0)
    return counts, docs[starts], tfw
