"""The query's hot loops, each written twice: numpy (always, here) and a loop numba compiles (:mod:`.loops`).

A query at 10,000 tools used to be hundreds of small numpy calls, each paying call
overhead on a few hundred values. With the ``fast`` extra (numba) each job below runs
as one compiled loop instead. Both forms of a job take the same arguments and return
the same bits: every float sum runs in one defined order (sequential, the order
``np.bincount`` and scipy's sparse products use), no fastmath, and nothing
transcendental is computed in compiled code (``1 + ln(count)`` comes from a table the
numpy code built). :class:`Kernels` holds one form of each job; an index carries the
one it was built with, so callers never branch on the backend.

The loops are compiled in one of two ways, with the same bits. Ahead of time
(:mod:`.aot`, ``tooldisc kernels build``): an extension module built from the very functions
of :mod:`.loops`, loaded when the index is built, and numba is never imported. Otherwise by numba's
JIT: ``numba`` is imported only when a compiled loop is first called (the first query that
needs it, never an index build); ``import tooldisc`` never imports it. The JIT's functions are
cached on disk (``cache=True``: beside :mod:`.loops`, or numba's per-user cache directory when
the package is read-only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from tooldisc.discovery.kernels import aot as kernels_aot
from tooldisc.discovery.kernels.aot import CONTIGUOUS_ALIGNED, SCALARS, argument_key
from tooldisc.params import Options, checked

BACKENDS = ("auto", "numpy", "numba")
BACKEND = Options(BACKENDS)  # the rulebook's constraint on every ``backend`` parameter


# --- Σⱼ weightⱼ · column ⱼ (BM25F scores, n-gram columns) -------------------------------------

def gather_numpy(col_ptr: np.ndarray, col_rows: np.ndarray, col_data: np.ndarray, ids: np.ndarray,
                 weights: np.ndarray, n_rows: int) -> np.ndarray:
    """Σⱼ weightⱼ · column ⱼ of a CSC layout as a dense float32 vector (float64 sums in column order)."""
    from tooldisc.discovery.indexes.sparse import gather_columns

    return gather_columns(col_ptr, col_rows, col_data, ids, weights, n_rows)


# --- candidate retrieval: rare n-gram estimate, fused score estimate, the two top lists ---------

def candidates_numpy(lexical: np.ndarray, allowed: np.ndarray, ids: np.ndarray, wq: np.ndarray,
                     gram_ptr: np.ndarray, gram_tokens: np.ndarray, gram_counts: np.ndarray,
                     table: np.ndarray, token_ptr: np.ndarray, token_tools: np.ndarray,
                     token_counts: np.ndarray, divisors: np.ndarray, side_effect: np.ndarray, wanted: int,
                     w_bm25: float, w_ngram: float, w_prior: float, n: int) -> np.ndarray:
    """Sorted catalog indices of at most ``n`` allowed tools (see :func:`~.candidates.index_candidates`).

    ``ids``/``wq``: the query's rare n-grams and their weight × IDF; ``table[c]`` = 1 + ln c for
    every count G and T hold (``token_counts``: T by token's, a byte a cell where a float64
    weight would be eight: these postings are the longest the query reads); ``wanted``: the mutation prior's
    tools (``w_prior`` 0 turns it off).
    """
    size = len(lexical)
    rare = np.zeros(size)
    if len(ids):
        from tooldisc.discovery.indexes.sparse import ranges

        starts, ends = gram_ptr[ids], gram_ptr[ids + 1]
        at = ranges(starts, ends - starts)
        share = np.repeat(wq, ends - starts) * table[gram_counts[at]]
        per_token = np.bincount(gram_tokens[at], weights=share, minlength=len(token_ptr) - 1)
        utok = np.flatnonzero(per_token > 0)
        starts = token_ptr[utok]
        lengths = token_ptr[utok + 1] - starts
        at = ranges(starts, lengths)
        rare = np.bincount(token_tools[at], weights=table[token_counts[at]] * np.repeat(per_token[utok], lengths),
                           minlength=size)
        rare /= divisors
    reach = lexical > 0
    reach |= rare > 0
    reach &= allowed
    reached = np.flatnonzero(reach)  # ascending: the estimate is 0 outside
    del reach
    lex = lexical[reached]
    hit = np.flatnonzero(lex > 0)
    lexical_half = top_positive(reached[hit], lex[hit], n // 2)
    top = float(lex.max(initial=0.0))
    lexn = lex / np.float32(top) if top > 0 else lex
    rare = rare[reached]
    estimate = (np.float32(w_bm25) * lexn).astype(np.float64) + w_ngram * rare
    if w_prior:
        estimate += (w_prior * (side_effect[reached] == wanted)) * np.maximum(lexn.astype(np.float64), rare)
    by_estimate = top_positive(reached, estimate, n, ordered=True)
    taken = set(lexical_half.tolist())  # at most N/2 ints: a set beats np.isin's sort
    fill = by_estimate[[i not in taken for i in by_estimate.tolist()]][: n - len(lexical_half)]
    return np.sort(np.concatenate([lexical_half, fill]))


def top_positive(indices: np.ndarray, values: np.ndarray, n: int, ordered: bool = False) -> np.ndarray:
    """``indices`` (ascending) of the (at most) n largest positive ``values``; best first when ``ordered``.

    Ties are broken by the lower index, at the cut too (``argpartition`` alone picks any of them).
    """
    if n <= 0:
        return indices[:0]
    positive = np.flatnonzero(values > 0)
    if len(positive) > n:
        v = values[positive]
        kth = np.partition(v, len(v) - n)[len(v) - n]  # the n-th largest
        above = positive[v > kth]
        positive = np.concatenate([above, positive[v == kth][: n - len(above)]])
        if not ordered:
            positive.sort()
    if ordered:
        positive = positive[np.lexsort((positive, -values[positive]))]
    return indices[positive]


# --- the n-gram counts some tools share with a query -----------------------------------------

def shared_numpy(tool_ptr: np.ndarray, tool_tokens: np.ndarray, tool_counts: np.ndarray,
                 gram_ptr: np.ndarray, gram_tokens: np.ndarray, gram_counts: np.ndarray, n_tokens: int,
                 indices: np.ndarray, ids: np.ndarray, table: np.ndarray, idf: np.ndarray, norms: np.ndarray,
                 w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """(row in ``indices``, slot in ``ids``, count, weight, how many weights are NaN, cosines) of every
    n-gram of ``ids`` (sorted) a tool holds.

    Rows ascending, slots ascending within a row; counts exact (float64). A tool's count of
    n-gram g is Σ over its tokens k of (k's count in the tool) × (g's count in k): the second
    factor is read beside each token in g's postings (``gram_counts``), never searched for.
    ``n_tokens``: how many tokens the index holds (the loop form keeps a chain head per token).
    The weight is the count's TF-IDF weight as the reference vectors hold it, float32 of
    ``table[count] · idf[g] / norms[tool]`` (``table[c]`` = 1 + ln c); NaN for a count past
    the table, which the caller computes with a logarithm (nothing transcendental here).
    The cosines: each tool's weights times the query's ``w`` (float32 products, summed in float64 in
    slot order, as ``np.bincount`` sums them), one float32 per tool of ``indices`` (NaN where a weight is).
    """
    from tooldisc.discovery.indexes.sparse import ranges

    nq = len(ids)
    if not nq or not len(indices):
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.float32), 0,
                np.zeros(len(indices), np.float32))
    starts, lengths = gram_ptr[ids], gram_ptr[ids + 1] - gram_ptr[ids]
    at = ranges(starts, lengths)
    order = np.argsort(gram_tokens[at], kind="stable")  # the hits by token (slots ascending within one)
    hit_token = gram_tokens[at][order]
    hit_slot = np.repeat(np.arange(nq), lengths)[order]
    hit_count = gram_counts[at][order]
    s, e = tool_ptr[indices], tool_ptr[indices + 1]
    cells = ranges(s, e - s)
    tok = tool_tokens[cells]
    first = np.searchsorted(hit_token, tok)
    last = np.searchsorted(hit_token, tok, side="right")
    keep = np.flatnonzero(last > first)  # the tools' tokens holding a query n-gram
    if not len(keep):
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.float32), 0,
                np.zeros(len(indices), np.float32))
    per = last[keep] - first[keep]
    hit = ranges(first[keep], per)
    owner = np.repeat(np.repeat(np.arange(len(indices)), e - s)[keep], per)
    key = owner * nq + hit_slot[hit]
    val = np.repeat(tool_counts[cells[keep]].astype(np.float64), per) * hit_count[hit]
    c = np.bincount(key, weights=val, minlength=len(indices) * nq)
    nz = np.flatnonzero(c > 0)
    row, col, count = nz // nq, nz % nq, c[nz]
    big = count >= len(table)
    at = count.astype(np.intp)
    at[big] = 0
    weight = (table[at] * idf[ids[col]] / norms[indices[row]]).astype(np.float32)
    n_big = int(big.sum())
    if n_big:
        weight[big] = np.nan
    cos = np.bincount(row, weights=weight * w[col], minlength=len(indices)).astype(np.float32)
    return row, col, count, weight, n_big, cos


# --- a query's n-grams: packed keys looked up in the index's sorted keys --------------------

def query_grams_numpy(points: np.ndarray, lengths: np.ndarray, alphabet: np.ndarray, codes: np.ndarray,
                      keys: np.ndarray, bits: int, lo: int, hi: int,
                      part: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, int]:
    """(sorted distinct n-gram ids, their counts, number of n-grams, their counts in ``part``,
    number of n-grams in ``part``) of padded tokens.

    ``points``: the code points of every token padded with spaces, concatenated (``lengths``
    each); ``alphabet`` (sorted code points) and ``codes`` give each known character's code.
    An n-gram with a character the catalog never used is unknown, as is one whose key is
    not in ``keys``; both count in the total. ``part`` marks some tokens (a query's content
    words): their own counts come out of the same pass, so the vector of those words alone
    needs no second one. Keys are packed in Python: a query has a few dozen n-grams, where
    a loop beats a dozen small numpy calls.
    """
    at = np.searchsorted(alphabet, points)
    at[at == len(alphabet)] = 0
    code = np.where(alphabet[at] == points, codes[at], 0).tolist() if len(alphabet) else [0] * len(points)
    found: list[int] = []
    marked: list[bool] = []
    total = total_part = 0
    start = 0
    for n_chars, inside in zip(lengths.tolist(), part.tolist(), strict=True):
        padded = code[start:start + n_chars]
        start += n_chars
        before = len(found)
        for n in range(lo, min(hi, n_chars) + 1):
            total += n_chars - n + 1
            total_part += (n_chars - n + 1) if inside else 0
        for i in range(n_chars - lo + 1):  # each start's key grows one character at a time up to hi
            key = 0
            for length, c in enumerate(padded[i:i + hi], start=1):
                if not c:  # a character the catalog never used: this and every longer n-gram is unknown
                    break
                key = (key << bits) | c
                if length >= lo:
                    found.append(key)
        marked.extend([bool(inside)] * (len(found) - before))
    if not found or not len(keys):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), total, np.zeros(0, np.int64), total_part
    wanted = np.array(found, dtype=keys.dtype)
    pos = keys.searchsorted(wanted)
    pos[pos == len(keys)] = 0
    hit = keys[pos] == wanted
    known = pos[hit]
    order = np.argsort(known, kind="stable")  # distinct ids and their counts, without np.unique's overhead
    known = known[order]
    inside = np.asarray(marked, dtype=np.int64)[hit][order]
    edge = np.ones(len(known) + 1, dtype=bool)
    np.not_equal(known[1:], known[:-1], out=edge[1:-1])
    bounds = np.flatnonzero(edge)
    in_part = np.add.reduceat(inside, bounds[:-1]) if len(known) else np.zeros(0, np.int64)
    return known[bounds[:-1]].astype(np.int64), np.diff(bounds).astype(np.int64), total, in_part, total_part


# --- Σⱼ weightⱼ · cell (column ⱼ, row) at a few rows (the learned features' cell reads) -------
# The expansion and phrase-weight features read only the retrieved tools' cells of the query's
# columns. Their layouts keep each cell as one ascending key ``column · n_rows + row``
# (:func:`tooldisc.discovery.indexes.expansion.cell_keys`), so a cell is found by searching keys.

def rows_numpy(keys: np.ndarray, data: np.ndarray, n_rows: int, ids: np.ndarray, weights: np.ndarray,
               indices: np.ndarray) -> np.ndarray:
    """Σⱼ weightⱼ · cell (idsⱼ, row) for each row of ``indices`` (ascending), float64, columns in ``ids`` order.

    One ``searchsorted`` for every (column, row) pair; a missing cell adds an exact 0, as
    the dense gather's ``bincount`` does, so the sums are its sums bit for bit.
    """
    out = np.zeros(len(indices), dtype=np.float64)
    if not len(ids) or not len(indices) or not len(keys):
        return out
    wanted = (ids[:, None] * n_rows + indices[None, :]).astype(keys.dtype)
    pos = np.searchsorted(keys, wanted)
    np.minimum(pos, len(keys) - 1, out=pos)
    vals = data[pos].astype(np.float64)
    vals *= weights[:, None]
    vals[keys[pos] != wanted] = 0.0
    for row in vals:  # column by column, as bincount adds them
        out += row
    return out


# --- the index build's sparse product ----------------------------------------------------------

def product_numpy(a_ptr: np.ndarray, a_idx: np.ndarray, a_val: np.ndarray, b_ptr: np.ndarray, b_idx: np.ndarray,
                  b_val: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR ``A·B`` (``A`` rows × ``len(b_ptr) - 1``, ``B`` × ``n_cols``) as scipy computes it: (indptr, indices,
    data), each row's cells in the order scipy's product leaves them (unsorted)."""
    from scipy import sparse

    a = sparse.csr_matrix((a_val, a_idx, a_ptr), shape=(len(a_ptr) - 1, len(b_ptr) - 1))
    c = a @ sparse.csr_matrix((b_val, b_idx, b_ptr), shape=(len(b_ptr) - 1, n_cols))
    return c.indptr, c.indices, c.data


def product(a_ptr: np.ndarray, a_idx: np.ndarray, a_val: np.ndarray, b_ptr: np.ndarray, b_idx: np.ndarray,
            b_val: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`product_numpy`, through the compiled module's :func:`.loops.product_loop` when one is
    loaded (then scipy.sparse is never imported: a fifth of a one-shot's cold start), with the index
    dtypes scipy gives (int32 while the cells fit). Never the JIT: compiling it would cost a build
    more than scipy's import."""
    compiled = _aot_export("product_loop", (a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_cols))
    if compiled is None:
        return product_numpy(a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_cols)
    ptr, idx, val = compiled(a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, n_cols)
    index = np.int32 if max(len(idx), n_cols, len(a_ptr), len(b_ptr)) <= np.iinfo(np.int32).max else np.int64
    return ptr.astype(index), idx.astype(index), val


def _aot_export(loop: str, args: tuple[object, ...]) -> Callable[..., Any] | None:
    """The compiled module's export of ``loop`` for exactly these argument types, or None."""
    return _aot_table(loop).get(argument_key(args))


@cache
def _aot_table(loop: str) -> dict[tuple[Any, ...], Callable[..., Any]]:
    """``loop``'s exports by argument key, read once a process (empty without the module)."""
    module = _aot_module()
    return {} if module is None else kernels_aot.dispatch_table(module, loop)


@lru_cache(maxsize=1)
def _aot_module() -> ModuleType | None:
    """The compiled module matching these sources (:func:`.aot.load`, None without numba: its key reads
    numba's installed version), loaded once a process."""
    return kernels_aot.load()


# --- the backends ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Kernels:
    """One form of each job; every field has the signature of its ``*_numpy`` twin."""

    name: str
    gather: Callable[..., np.ndarray]
    candidates: Callable[..., np.ndarray]
    shared: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]]
    query_grams: Callable[..., tuple[np.ndarray, np.ndarray, int, np.ndarray, int]]
    rows: Callable[..., np.ndarray]  # the learned features' cell reads
    form: str = "numpy"  # how the numba loops were loaded: "aot" (a compiled module, :mod:`.aot`) or "jit"

    def bind(self, job: str, *template: object) -> Callable[..., Any]:
        """The form of ``job`` for an index's calls, chosen once instead of on every call.

        ``template`` has one entry per argument: the index's own arrays and scalars (fixed for
        its life: their types are read here), and, for what a query supplies, its dtype
        (``np.dtype``) or scalar type (``int``, ``float``). The compiled module's export for
        exactly those types is returned, guarded by a check of the query's arguments only
        (another dtype or layout goes to the JIT form, as an unbound call would); the JIT and
        numpy forms are returned as they are. Call it with the same arguments as the job.
        """
        return bind(getattr(self, job), *template)


def bind(form: Callable[..., Any], *template: object) -> Callable[..., Any]:
    """:meth:`Kernels.bind` of one job's form (as an index holds it, e.g. ``Kernels.rows``)."""
    binder = getattr(form, "bind", None)
    return form if binder is None else binder(template)


# the dtypes of a query's arrays, for :meth:`Kernels.bind` templates (numpy's canonical instances)
I1, I8, F4, F8, U1, U4, B1 = (np.dtype(t) for t in ("int8", "int64", "float32", "float64", "uint8", "uint32", "bool"))

NUMPY = Kernels("numpy", gather_numpy, candidates_numpy, shared_numpy, query_grams_numpy, rows_numpy)


class _Loaded:
    """A compiled loop loaded on its first call: importing numba and loading cached machine code
    is process-level work (about 120 MB and a second of CPU), so it lands on the first query
    that needs it, never inside an index build."""

    __slots__ = ("name", "target")

    def __init__(self, name: str):
        self.name = name
        self.target: Callable[..., object] | None = None

    def __call__(self, *args: object) -> object:
        target = self.target
        if target is None:
            target = self.target = _jitted(self.name)
        return target(*args)


class _Aot:
    """A loop's ahead-of-time forms (:mod:`.aot`), chosen by the call's argument types; a call
    no exported signature covers goes to the JIT form. The match is exact: a compiled form reads an
    array's memory as the dtype it was compiled for, so a near miss must never reach it."""

    __slots__ = ("fallback", "table")

    def __init__(self, table: dict[tuple[object, ...], Callable[..., object]], fallback: Callable[..., object]):
        self.table = table
        self.fallback = fallback

    def __call__(self, *args: object) -> object:
        return self.table.get(argument_key(args), self.fallback)(*args)

    def bind(self, template: tuple[object, ...]) -> Callable[..., object]:
        """The export for ``template``'s types (:meth:`Kernels.bind`), or the JIT form when none matches."""
        key: list[object] = []
        arrays: list[tuple[int, np.dtype]] = []
        scalars: list[tuple[int, tuple[type, ...]]] = []
        for i, a in enumerate(template):
            if isinstance(a, np.dtype):  # a query's array: checked on each call
                key.append(a)
                arrays.append((i, a))
            elif a is int or a is float:  # a query's scalar: the types an unbound call would key alike
                key.append(a)
                scalars.append((i, _SCALAR_TYPES[a]))
            else:  # the index's own: read once
                key.append(argument_key((a,))[0])
        target = self.table.get(tuple(key))
        if target is None:
            return self.fallback
        return _Bound(target, self.fallback, tuple(arrays), tuple(scalars))


_SCALAR_TYPES: dict[type, tuple[type, ...]] = {int: SCALARS["int"], float: SCALARS["float"]}


class _Bound:
    """An exported loop bound to an index's types: only the query's arguments are checked on a call
    (exact dtype, one dimension, C-contiguous and aligned; scalar types), any other goes to the JIT form."""

    __slots__ = ("arrays", "fallback", "scalars", "target")

    def __init__(self, target: Callable[..., object], fallback: Callable[..., object],
                 arrays: tuple[tuple[int, np.dtype], ...], scalars: tuple[tuple[int, tuple[type, ...]], ...]):
        self.target = target
        self.fallback = fallback
        self.arrays = arrays
        self.scalars = scalars

    def __call__(self, *args: object, _array: type = np.ndarray, _flags: int = CONTIGUOUS_ALIGNED) -> object:
        for i, dtype in self.arrays:
            a: Any = args[i]
            if type(a) is not _array or a.dtype != dtype or a.ndim != 1 or a.flags.num & _flags != _flags:
                return self.fallback(*args)
        for i, kinds in self.scalars:
            if type(args[i]) not in kinds:
                return self.fallback(*args)
        return self.target(*args)


@cache
def _jitted(name: str) -> Callable[..., object]:
    """The numba dispatcher of the loop ``name`` (one per process; cached machine code loads on first call).

    A numba that is installed but cannot be imported (a broken install) gives the loop's numpy
    twin: the same bits, as ``auto`` gave before a backend was chosen without importing numba.
    """
    try:
        import numba
    except ImportError:
        return globals()[name.replace("_loop", "_numpy")]
    from tooldisc.discovery.kernels import loops  # only the JIT reads the loops' Python source

    return numba.njit(cache=True, nogil=True)(getattr(loops, name))


@lru_cache(maxsize=1)
def _compiled() -> Kernels | None:
    """The numba forms, or None without numba: the ahead-of-time module when one matches, else the JIT.

    Availability is a look-up of the installed package (no import of numba). When the compiled
    module of these very sources and versions exists (:func:`.aot.load`) it is loaded
    here (under 1 MB, no numba): ``form`` says "aot". Otherwise, and for any call whose
    argument types the module lacks, each loop imports numba and loads (or compiles) its machine
    code on its first call (:class:`_Loaded`); ``tooldisc bench`` reports that first-query cost on
    its own (``first_query``).
    """
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        return None
    return numba_kernels(_aot_module())


def numba_kernels(module: ModuleType | None) -> Kernels:
    """The numba forms: ``module``'s compiled loops (:mod:`.aot`), each falling back to the JIT
    for argument types it lacks, or the JIT alone when ``module`` is None."""

    def loop(name: str) -> Callable[..., object]:
        jit = _Loaded(name)
        if module is None:
            return jit
        return _Aot(kernels_aot.dispatch_table(module, name), jit)

    return Kernels("numba", loop("gather_loop"), loop("candidates_loop"), loop("shared_loop"),
                   _QueryGrams(loop("query_grams_loop")), loop("rows_loop"), "jit" if module is None else "aot")


class _QueryGrams:
    """The compiled query n-grams for int64 keys; keys wider than 63 bits are Python ints (an object
    array) that only the numpy form reads."""

    __slots__ = ("grams",)

    def __init__(self, grams: Callable[..., object]):
        self.grams = grams

    def __call__(self, points: np.ndarray, lengths: np.ndarray, alphabet: np.ndarray, codes: np.ndarray,
                 keys: np.ndarray, bits: int, lo: int, hi: int, part: np.ndarray) -> object:
        if keys.dtype != np.int64:
            return query_grams_numpy(points, lengths, alphabet, codes, keys, bits, lo, hi, part)
        return self.grams(points, lengths, alphabet, codes, keys, bits, lo, hi, part)

    def bind(self, template: tuple[object, ...]) -> Callable[..., object]:
        keys: Any = template[4]
        if keys.dtype != np.int64:
            return query_grams_numpy
        return bind(self.grams, *template)


def check_backend(backend: str) -> None:
    """A usage error unless ``backend`` names one (before any work is done with it), in the rulebook's form."""
    from tooldisc.errors import UsageError

    checked(BACKEND, backend, "backend", UsageError)


def kernels(backend: str = "auto", large: bool = True) -> Kernels:
    """The kernels for ``backend``: ``numba`` (the ``fast`` extra), ``numpy``, or ``auto``.

    ``auto`` is numba when it is installed and the index is ``large`` (big enough for indexed
    retrieval): loading numba's JIT loops costs about a second per process, which a small
    catalog's queries, a fraction of a millisecond faster each, never earn back (the rule
    predates the ahead-of-time module, which loads in milliseconds: it is kept as it was).
    """
    check_backend(backend)
    if backend == "numpy" or (backend == "auto" and not large):
        return NUMPY
    compiled = _compiled()
    if compiled is None:
        if backend == "numba":
            from tooldisc.errors import MissingExtraError

            raise MissingExtraError("the numba backend", "fast", "numba")
        return NUMPY
    return compiled
