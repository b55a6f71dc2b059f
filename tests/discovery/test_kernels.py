"""The two forms of the query loops (discovery/kernels/: numpy forms in __init__.py, compiled ones in loops.py) give the same offers, bit for bit.

Every comparison runs both backends on the same inputs, the numba one in each of its forms
(compiled ahead of time, and by the JIT: kernel_forms.py); the numba half skips (with its
reason) when the ``fast`` extra is absent, the ahead-of-time half when its module is not
built (it fails under CI=true). Kept lean: one bench-sized catalog at a small size and
hypothesis-drawn tiny catalogs ranked through the indexed path.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.discovery.kernel_forms import FORMS, aot_module, needs_numba, numba_form
from tests.fuzzing import examples
from tooldisc.discovery import kernels as dispatch
from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.config import config_from_mapping, load_config
from tooldisc.discovery.indexes.index import build_index
from tooldisc.discovery.kernels import NUMPY, kernels, top_positive
from tooldisc.discovery.kernels.aot import argument_key
from tooldisc.discovery.model import Tool
from tooldisc.discovery.pipeline import Discoverer

# indexed retrieval on any catalog: the candidate, shared-count and query n-gram kernels all run
INDEXED = config_from_mapping({"retrieval": {"min_tools": 1, "candidates": 8}}, base=load_config())


def _offer(o: object) -> dict:
    return {k: v for k, v in o.__dict__.items() if k != "timings"}


def _same_offers(catalog: object, config: object, queries: list[tuple[str, tuple[str, ...]]], form: str) -> int:
    a = Discoverer(catalog, config, backend="numpy")
    with numba_form(form):
        b = Discoverer(catalog, config, backend="numba")
    assert a.index.kernels.name == "numpy" and b.index.kernels.name == "numba" and b.index.kernels.form == form
    for query, history in queries:
        for k in (15, "auto"):
            assert _offer(a.discover(query, None, k, history)) == _offer(b.discover(query, None, k, history)), query
    return len(queries)


@needs_numba
@pytest.mark.parametrize("form", FORMS)
def test_backends_offer_the_same_on_bench_queries(form: str) -> None:
    """The bench's own catalog and queries (small size, indexed retrieval) and the shipped catalog ranked whole."""
    from tooldisc.evaluation.bench import BenchOptions, load_inputs
    from tooldisc.evaluation.bench.synthetic import synthetic_catalog, synthetic_queries

    opts = BenchOptions()
    base, base_queries, _ = load_inputs(opts)
    catalog = synthetic_catalog(base, 600, opts.seed)
    queries = synthetic_queries(catalog, base_queries, 40, opts.seed, base_names=frozenset(t.name for t in base.tools))
    indexed = config_from_mapping({"retrieval": {"min_tools": 100}}, base=load_config())
    assert _same_offers(catalog, indexed, [(q.query, tuple(q.history)) for q in queries], form) == 40
    assert _same_offers(base, load_config(), [(q.query, tuple(q.history)) for q in queries[:20]], form) == 20
    assert Discoverer(catalog, indexed).discover(queries[0].query).retrieval == "indexed"


WORDS = ("invoice", "invoices", "customer", "report", "فاکتور", "فاکتورها", "مشتری", "گزارش", "stock", "payment",
         "list", "show", "delete", "export", "excel", "run", "the", "of", "۱۲۳", "a" * 300, "ab" * 140, "x")
SIDE = ("none", "write", "delete", "export", "execute")


@st.composite
def tiny_catalogs(draw: st.DrawFn) -> tuple[object, list[str]]:
    n = draw(st.integers(1, 9))
    words = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
    tools = [Tool(name=f"t{i}", description=draw(words), capability=draw(words),
                  keywords=tuple(draw(st.lists(st.sampled_from(WORDS), max_size=2))),
                  side_effect=draw(st.sampled_from(SIDE))) for i in range(n)]
    queries = draw(st.lists(st.one_of(words, st.text("abcxyzفاک ۱", max_size=12)), min_size=1, max_size=3))
    return catalog_from_tools(tools), queries


@needs_numba
@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=15, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tiny_catalogs())
def test_backends_offer_the_same_on_tiny_catalogs(form: str, drawn: tuple[object, list[str]]) -> None:
    catalog, queries = drawn
    _same_offers(catalog, INDEXED, [(q, ()) for q in queries], form)


@needs_numba
@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=20, deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=60), st.integers(1, 12),
       st.integers(0, 4))
def test_candidate_kernels_break_ties_alike(form: str, values: list[float], n: int, wanted: int) -> None:
    """Many equal scores at the cut: both forms keep the lowest indices (argpartition alone picks any)."""
    ix = build_index(catalog_from_tools([Tool(name=f"t{i}", description="invoice report") for i in range(len(values))]),
                     INDEXED, backend="numpy").ngram
    size = len(values)
    lexical = np.array(values, dtype=np.float32)
    allowed = np.ones(size, dtype=bool)
    allowed[::3] = False
    ids, w = ix.query_vector(["invoice"])
    side = (np.arange(size) % 5).astype(np.int8)
    args = (lexical, allowed, ids, w * ix.idf[ids], ix.gram_ptr, ix.gram_tokens, ix.gram_counts, ix.count_table,
            ix.token_ptr, ix.token_tools, ix.token_counts, ix.divisors, side, wanted, 0.5, 0.25, 0.1, n)
    with numba_form(form) as compiled:
        np.testing.assert_array_equal(NUMPY.candidates(*args), compiled.candidates(*args))


@needs_numba
@pytest.mark.parametrize("form", FORMS)
def test_query_and_shared_kernels_agree_on_long_requests_and_counts_past_the_table(form: str) -> None:
    """Kernel level, both forms: a request of hundreds of n-grams (merge-sorted in the loop form) with a
    content-word part, and shared counts past the logarithm table (NaN there, filled by the caller)."""
    from tooldisc.discovery.indexes.ngrams import _code_points
    from tooldisc.discovery.text.fields import stopwords

    long_word = "a" * 300  # "aaa" 298 times in one token: a count past the 256-entry table
    tools = [Tool(name=f"t{i}", description=f"{w} invoice report of the customer {long_word if i % 2 else ''}")
             for i, w in enumerate(WORDS)]
    with numba_form(form) as compiled:
        ng = build_index(catalog_from_tools(tools), INDEXED, backend="numba").ngram
    assert ng.kernels is compiled
    stop = stopwords()
    query = [*WORDS, "invocie", "the", "zzzq", "ab" * 30] * 2
    part = np.array([t not in stop for t in query], dtype=np.uint8)
    points, lengths = _code_points(query)
    args = (points, lengths, *ng.alphabet_codes, ng.keys, ng.bits, ng.lo, ng.hi, part)
    a, b = NUMPY.query_grams(*args), compiled.query_grams(*args)
    assert len(a[0]) > 32 and 0 < a[4] < a[2] and int(a[3].sum()) < int(a[1].sum())
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    ids = a[0]
    w = ng.query_vector(query)[1]
    indices = np.arange(len(tools), dtype=np.int64)[::-1].copy()
    shared = (ng.tool_ptr, ng.tool_tokens, ng.tool_counts, ng.gram_ptr, ng.gram_tokens, ng.gram_counts,
              len(ng.token_ptr) - 1, indices, ids, ng.count_table, ng.idf, ng.norms, w)
    a, b = NUMPY.shared(*shared), compiled.shared(*shared)
    assert a[4] > 0 and np.isnan(a[3]).sum() == a[4]  # counts past the table
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    # a block of tools whose output the loop counts before allocating it (past _SHARED_SLACK), and one it does not
    from tooldisc.discovery.kernels.loops import _SHARED_SLACK

    many = np.tile(indices, _SHARED_SLACK // (len(indices) * len(ids)) + 1)
    assert len(many) * len(ids) > _SHARED_SLACK >= len(indices[:3]) * len(ids)
    for some in (many, indices[:3]):
        wide = (*shared[:7], some, *shared[8:])
        for x, y in zip(NUMPY.shared(*wide), compiled.shared(*wide), strict=True):
            np.testing.assert_array_equal(x, y)
    counts, cos = ng.shared_cosines(indices, ids, w)  # the caller's logarithm for those: the reference bits
    assert not np.isnan(counts.weight).any() and not np.isnan(cos).any()
    reference = ((1.0 + np.log(counts.count)) * ng.idf[ids][counts.col] / ng.norms[indices[counts.row]])
    np.testing.assert_array_equal(counts.weight, reference.astype(np.float32))
    assert cos.tobytes() == ng.cosines(counts, w).tobytes()
    small = np.flatnonzero(np.arange(len(tools)) % 2 == 0)  # no count past the table: the kernel's own cosines
    assert ng.shared_cosines(small, ids, w)[1].tobytes() == ng.cosines(ng.shared_counts(small, ids), w).tobytes()


def test_top_positive_keeps_the_lowest_indices_at_a_tie() -> None:
    values = np.array([1.0, 2.0, 1.0, 1.0, 0.0, 2.0, 1.0])
    idx = np.arange(len(values)) * 10
    assert top_positive(idx, values, 3).tolist() == [0, 10, 50]
    assert top_positive(idx, values, 4, ordered=True).tolist() == [10, 50, 0, 20]


def test_backend_choice_is_said_and_numba_stays_unimported() -> None:
    """``import tooldisc`` and a small catalog's engine (auto) never import numba; a bad backend is a usage error."""
    code = ("import importlib.util, sys, tooldisc; from tooldisc.discovery.pipeline import Discoverer;"
            "from tooldisc.discovery.catalog.io import load_catalog, shipped_datasets;"
            "e = Discoverer(load_catalog(shipped_datasets()[0][0])); e.discover('list invoices');"
            "print(e.index.kernels.name, 'numba' in sys.modules);"
            "f = Discoverer(e.catalog, backend='numba' if importlib.util.find_spec('numba') else 'numpy');"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["numpy", "False", "False"]  # the numba backend is chosen at build, loaded at its first query
    from tooldisc.errors import UsageError

    with pytest.raises(UsageError, match="backend"):
        kernels("fortran")
    assert dataclasses.replace(NUMPY).name == "numpy"


def test_a_numba_that_cannot_be_imported_gives_the_numpy_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backend is chosen without importing numba; a broken install falls back loop by loop (same bits)."""
    from tooldisc.discovery import kernels as k

    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    for name in ("gather", "candidates", "shared", "query_grams", "rows"):
        assert k._jitted.__wrapped__(f"{name}_loop") is getattr(k, f"{name}_numpy")


@st.composite
def _csr_pairs(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """A (rows × mid) and B (mid × cols) of small positive integer counts, each row's columns ascending."""
    n_rows, mid, n_cols = draw(st.integers(0, 12)), draw(st.integers(1, 12)), draw(st.integers(1, 20))

    def matrix(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ptr, idx, val = [0], [], []
        for _ in range(rows):
            picked = sorted(draw(st.sets(st.integers(0, cols - 1), max_size=min(cols, 6))))
            idx += picked
            val += [draw(st.integers(1, 300)) for _ in picked]
            ptr.append(len(idx))
        return np.array(ptr, np.int64), np.array(idx, np.int32), np.array(val, np.float32)

    return (*matrix(n_rows, mid), *matrix(mid, n_cols), n_cols)


@needs_numba
@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=examples(300), deadline=None, database=None, derandomize=True)
@given(_csr_pairs())
def test_the_build_product_is_scipys_cell_for_cell(form: str, pair: tuple[np.ndarray, ...]) -> None:
    """T·G of the n-gram build: the compiled loop gives scipy's cells in scipy's order (the norms add a row's
    cells in it), the same float32 sums, and — through the dispatch — scipy's index dtypes."""
    want = dispatch.product_numpy(*pair)
    loop = (dispatch.kernels_aot.dispatch_table(aot_module(), "product_loop")[argument_key(pair)] if form == "aot"
            else dispatch._jitted("product_loop"))
    for got, expected in zip(loop(*pair), want, strict=True):
        np.testing.assert_array_equal(got, expected)
    if form == "aot":
        for got, expected in zip(dispatch.product(*pair), want, strict=True):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
