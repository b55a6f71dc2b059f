"""The query loops compiled ahead of time (discovery/kernels/aot.py): loaded only when they match, never numba.

Their bits against the numpy and JIT forms are checked where the other parity cases are
(test_kernels.py, test_learned_parity.py, each run once per form). Here: which module a
process loads (only the one whose key it computes itself), what a call the module does not
cover does (the JIT takes it: a compiled form would read the memory as another dtype), that
a process discovering with it never imports numba, and the ``tooldisc kernels`` command.
Tests that need the module skip without it, and fail under CI=true (``make install`` builds it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_cli
from tests.discovery.kernel_forms import aot_module, needs_numba, numba_form
from tooldisc.discovery import kernels as k
from tooldisc.discovery.kernels import aot, loops

pytestmark = needs_numba


def test_the_key_changes_with_every_input_and_names_the_file() -> None:
    parts = aot.key_parts()
    assert parts is not None and set(parts) == {"source", "signatures", "cpu", "numba", "numpy", "python"}
    assert parts["cpu"] == aot.host_cpu().encode() and aot.host_cpu() == aot.host_cpu()  # stable: no clock, no core id
    if sys.platform.startswith("linux"):  # compiled for this CPU, and the key says which
        assert aot.target_cpu(aot.host_cpu()) == "host" and ("flags=" in aot.host_cpu() or "Features=" in aot.host_cpu())
    assert aot.target_cpu("") == ""  # no CPU named: numba.pycc's generic CPU
    base = aot.digest(parts)
    assert aot.key() == base and len(base) == 64
    seen = {base}
    for name in parts:
        seen.add(aot.digest({**parts, name: parts[name] + b" "}))
    assert len(seen) == len(parts) + 1  # each input alone changes the key
    # length-prefixed: moving a byte from one part to the next is another key
    assert aot.digest({"a": b"xy", "b": b"z"}) != aot.digest({"a": b"x", "b": b"yz"})
    assert aot.module_name(base) in aot.module_path(base).name


def test_the_key_covers_the_loops_source_and_not_the_dispatch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Editing the dispatch (which form runs, the numpy twins) keeps the compiled module; editing a loop,
    or anything else in the file the loops are compiled from, rebuilds it."""
    here = Path(aot.__file__)
    assert (aot.key_parts() or {})["source"] == here.with_name("loops.py").read_bytes()
    for name in ("__init__.py", "aot.py", "loops.py"):
        shutil.copy(here.with_name(name), tmp_path / name)
    monkeypatch.setattr(aot, "__file__", str(tmp_path / "aot.py"))
    base = aot.key()
    assert base == aot.digest(aot.key_parts() or {}) and base is not None
    with open(tmp_path / "__init__.py", "a", encoding="utf-8") as f:
        f.write("\n# an edit to the dispatch\n")
    assert aot.key() == base
    with open(tmp_path / "loops.py", "a", encoding="utf-8") as f:
        f.write("\n# an edit to the loops\n")
    assert aot.key() not in (None, base)


def test_a_module_of_other_sources_is_not_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The matching module is in the directory, but this process's loops are (as if) edited: the JIT runs."""
    module = aot_module()
    current = aot.module_path(aot.key() or "")
    assert Path(module.__file__ or "") == current
    shutil.copy(current, tmp_path / current.name)
    assert aot.load(tmp_path) is not None
    parts = aot.key_parts() or {}
    monkeypatch.setattr(aot, "key_parts", lambda: {**parts, "source": parts["source"] + b"\n# edited\n"})
    assert aot.load(tmp_path) is None and aot.load() is None
    monkeypatch.setenv(aot.ENV_DIR, str(tmp_path))
    assert aot.status().form == "jit" and "tooldisc kernels build" in aot.status().reason
    assert k.numba_kernels(aot.load()).form == "jit"


def test_a_damaged_file_under_the_right_name_is_not_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = aot.module_path(aot.key() or "", tmp_path)
    path.write_bytes(b"\x7fELF not really")
    assert aot.load(tmp_path) is None
    monkeypatch.setenv(aot.ENV_DIR, str(tmp_path))
    found = aot.status()  # said, not trusted for being there
    assert found.form == "jit" and "does not load" in found.reason and "--force" in found.reason


def test_without_a_home_directory_the_jit_runs_and_the_build_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    from tooldisc.discovery.kernels.build import build
    from tooldisc.errors import UsageError

    def homeless() -> Path:
        raise RuntimeError("Could not determine home directory.")

    for name in (aot.ENV_DIR, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(homeless))
    assert aot.load() is None
    found = aot.status()
    assert found.form == "jit" and aot.ENV_DIR in found.reason and found.to_dict()["directory"] is None
    with pytest.raises(UsageError, match=aot.ENV_DIR):
        build()


def test_calls_the_module_does_not_cover_go_to_the_jit_with_the_same_bits() -> None:
    """Another dtype, a view, a 2-D array, a numpy scalar of another width: never the compiled form."""
    module = aot_module()
    ptr = np.array([0, 2, 3, 5], dtype=np.int64)
    rows = np.array([0, 2, 1, 1, 2], dtype=np.int32)
    data = np.array([1.5, 2.0, 3.25, 0.5, 4.0], dtype=np.float32)
    ids = np.array([0, 2], dtype=np.int64)
    weights = np.array([0.5, 2.0])
    table = aot.dispatch_table(module, "gather_loop")
    covered = (ptr, rows, data, ids, weights, 3)
    assert table[aot.argument_key(covered)] is module.gather_loop__i8_i4_f4_i8_f8_n
    uncovered = [
        (ptr, rows, data.astype(np.float64), ids, weights, 3),  # float64 data: no exported signature
        (ptr, rows, data, np.array([0, 9, 2], dtype=np.int64)[::2], weights, 3),  # a strided view
        (ptr, rows, data, ids, weights, np.int32(3)),  # a scalar of another type
    ]
    odd = [(ptr, rows, data, ids, weights.astype(">f8"), 3),  # another byte order (the JIT refuses it too)
           (ptr, rows, data, ids.reshape(1, 2), weights, 3), (ptr, rows, data, ids, list(weights), 3)]
    for args in uncovered + odd:
        assert aot.argument_key(args) not in table
    with numba_form("aot") as compiled:
        assert compiled.gather(*covered).tobytes() == k.gather_numpy(*covered).tobytes()
        for args in uncovered:
            assert compiled.gather(*args).tobytes() == k.gather_numpy(*args).tobytes()


def test_a_bound_form_checks_the_query_arguments_and_sends_others_to_the_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bound once to an index's arrays (Kernels.bind), a loop still never reads a query's array of another
    dtype or layout, nor a scalar of another type, as the compiled types: those calls go to the JIT form."""
    aot_module()
    ptr = np.array([0, 2, 3, 5], dtype=np.int64)
    rows = np.array([0, 2, 1, 1, 2], dtype=np.int32)
    data = np.array([1.5, 2.0, 3.25, 0.5, 4.0], dtype=np.float32)
    ids = np.array([0, 2], dtype=np.int64)
    weights = np.array([0.5, 2.0])
    fell_back: list[str] = []
    jit_call = k._Loaded.__call__
    monkeypatch.setattr(k._Loaded, "__call__", lambda self, *args: fell_back.append(self.name) or jit_call(self, *args))
    with numba_form("aot") as compiled:
        form = compiled.bind("gather", ptr, rows, data, k.I8, k.F8, 3)
        assert isinstance(form, k._Bound)
        assert form.target is aot_module().gather_loop__i8_i4_f4_i8_f8_n
        assert form(ptr, rows, data, ids, weights, 3).tobytes() == k.gather_numpy(ptr, rows, data, ids, weights, 3).tobytes()
        assert fell_back == []
        others = [(ptr, rows, data, ids.astype(np.int32), weights, 3),  # another dtype
                  (ptr, rows, data, np.array([0, 9, 2], dtype=np.int64)[::2], weights, 3),  # a strided view
                  (ptr, rows, data, ids, weights.astype(np.float32), 3)]  # exported, but not the bound types
        for args in others:
            assert form(*args).tobytes() == k.gather_numpy(*args).tobytes()
        assert fell_back == ["gather_loop"] * len(others)
        sized = compiled.bind("gather", ptr, rows, data, k.I8, k.F8, int)  # a query's scalar: its type is checked
        assert sized(ptr, rows, data, ids, weights, np.int64(3)).tobytes() == form(ptr, rows, data, ids, weights, 3).tobytes()
        assert len(fell_back) == len(others)
        assert sized(ptr, rows, data, ids, weights, np.int32(3)).tobytes() == form(ptr, rows, data, ids, weights, 3).tobytes()
        assert len(fell_back) == len(others) + 1
        with pytest.raises(Exception, match=">f8"):  # another byte order: the JIT's to refuse, never read as <f8
            form(ptr, rows, data, ids, weights.astype(">f8"), 3)
        # an index array without an export binds the JIT form itself; numpy's forms are their own
        fell_back.clear()
        assert compiled.bind("gather", ptr, rows, data.astype(np.float64), k.I8, k.F8, 3) is compiled.gather.fallback
        assert k.NUMPY.bind("gather", ptr, rows, data, k.I8, k.F8, 3) is k.gather_numpy
    assert fell_back == []


def test_every_declared_signature_is_exported() -> None:
    module = aot_module()
    names = {aot.symbol(loop, types) for loop in aot.SIGNATURES for types in aot.signatures(loop)}
    assert len(names) == aot.signature_count() and all(hasattr(module, name) for name in names)
    assert set(aot.SIGNATURES) == {name for name in dir(loops) if name.endswith("_loop")}  # every loop, no other


def test_the_signatures_name_every_argument_of_every_loop() -> None:
    """Edit a loop's arguments and this fails here, not as a compile error in 'make install'."""
    for loop, types in aot.SIGNATURES.items():
        code = getattr(loops, loop).__code__
        assert len(types) == code.co_argcount, loop
        assert all(t in aot._SHORT for choices in types for t in choices)


def test_every_call_of_the_bench_queries_runs_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inventory of argument types is complete: on the bench's catalog and queries (indexed retrieval
    with and without the abstention model, and ranked whole; a request long enough to be merge-sorted) no
    call falls back to the JIT. A dtype changed at a call site fails here instead of silently loading numba."""
    from tooldisc.discovery.config import config_from_mapping, load_config
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.bench import BenchOptions, load_inputs
    from tooldisc.evaluation.bench.synthetic import synthetic_catalog, synthetic_queries

    aot_module()
    fell_back: list[str] = []
    jit_call = k._Loaded.__call__
    monkeypatch.setattr(k._Loaded, "__call__", lambda self, *args: fell_back.append(self.name) or jit_call(self, *args))
    opts = BenchOptions()
    base, base_queries, _ = load_inputs(opts)
    catalog = synthetic_catalog(base, 600, opts.seed)
    queries = synthetic_queries(catalog, base_queries, 40, opts.seed, base_names=frozenset(t.name for t in base.tools))
    requests = [(q.query, tuple(q.history)) for q in queries] + [(" ".join(q.query for q in queries[:12]), ())]
    ran: list[str] = []
    indexed = {"retrieval": {"min_tools": 100}}
    for overlay in (indexed, {**indexed, "abstain": {"model": True}}, {}):  # {}: ranked whole (n-gram columns)
        with numba_form("aot"):
            engine = Discoverer(catalog, config_from_mapping(overlay, base=load_config()), backend="numba")
        ran += [engine.discover(query, None, "auto", history).retrieval for query, history in requests]
        # each index bound its loops to exported forms once (no per-call choice, no JIT form)
        bound = [engine.index.lexical._gather, *engine.index.ngram.loops.values()]
        assert all(isinstance(form, k._Bound) for form in bound)
    assert ran.count("indexed") == 2 * len(requests) and ran.count("full") == len(requests)
    assert fell_back == []


def test_a_discover_with_the_compiled_module_never_imports_numba() -> None:
    """The whole point: the query loops run compiled, and numba (with LLVM, ~100 MB) stays out of the process."""
    aot_module()
    code = ("import sys; from tooldisc.discovery.pipeline import Discoverer;"
            "from tooldisc.discovery.config import config_from_mapping, load_config;"
            "from tooldisc.discovery.catalog.io import load_catalog, shipped_datasets;"
            "cfg = config_from_mapping({'retrieval': {'min_tools': 1}}, base=load_config());"
            "e = Discoverer(load_catalog(shipped_datasets()[0][0]), cfg, backend='numba');"
            "o = e.discover('list unpaid invoices of a customer'); e.discover('فاکتورهای پرداخت نشده');"
            "print(e.index.kernels.name, e.index.kernels.form, o.retrieval, len(o.candidates) > 0, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["numba", "aot", "indexed", "True", "False"]


def test_the_kernels_command_says_which_form_runs(tmp_path: Path) -> None:
    aot_module()
    status = json.loads(run_cli("kernels", "status", "--format", "json").stdout)
    assert status["form"] == "aot" and status["key"] == aot.key() and Path(status["path"]).is_file()
    plain = run_cli("kernels")
    assert plain.returncode == 0 and plain.stdout.startswith("form: aot")
    built = json.loads(run_cli("kernels", "build", "--json").stdout)  # present: nothing to compile
    assert built["compiled"] is False and built["path"] == status["path"] and built["signatures"] > 0
    empty = run_cli("kernels", "status", "--json", env={aot.ENV_DIR: str(tmp_path)})
    assert json.loads(empty.stdout)["form"] == "jit"
    bad = run_cli("kernels", "status", "--format", "xml")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --format")
    assert os.listdir(tmp_path) == []  # status writes nothing
