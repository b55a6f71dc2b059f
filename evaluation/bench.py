"""Latency, build time and memory of discovery at catalog sizes, against BM25 baselines.

The perf harness behind ``tooldisc bench`` and ``benchmarks/run_bench.py`` (both call
:func:`run_bench`): it starts processes and reads ``/proc``, so it lives here, outside
the discovery package. Each catalog size runs in a fresh interpreter
(``python -m tooldisc.evaluation.bench``) so its resident memory is its own: peak RSS
is reset (``/proc/self/clear_refs``) just before each index build and read back from
``VmHWM`` right after, so "peak growth" is what building that index cost; "process
peak" is the whole process's peak from the first build to the last timed query
(interpreter, libraries, the loaded tool records, the index, and numba with the
compiled loops' machine code, which the first query loads). The measuring itself is
in :mod:`.bench_measure`.

What is timed, per size, on the same documents and queries:

* ``tooldisc`` — ``Discoverer(catalog, config)`` construction (from loaded tool
  records: tokenising, BM25F matrix, n-gram index, security index), then ``discover``
  per query with the default context and fixed K, warm (after one warm-up pass).
* ``rank_bm25`` — tokenise + ``BM25Okapi(docs)``; per query ``get_scores`` then a
  top-K ``argpartition``.
* ``bm25s`` — tokenise + ``BM25().index(docs)``; per query ``retrieve([q], k=K)``,
  one query per call as a request would.

All three see the same per-tool text (the fields the ranker weights) through the same
tokeniser, so the ratios compare engines, not tokenisers. Hits are counted over each
query's authorized tools for every engine (see :mod:`.bench_measure`). The catalog's
own hash is computed with the catalog, before any build: it is the catalog's, and an
index does not need it.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from tooldisc.errors import UsageError
from tooldisc.evaluation.bench_measure import (
    BASELINES,
    HIT_WHAT,
    authorized_sets,
    measure_baseline,
    measure_tooldisc,
    ratios,
    refused_share,
)
from tooldisc.limits import COUNTS
from tooldisc.params import Constraint, Items, validate

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``; phases are ``generate``, ``build``, ``tooldisc``, ``rank_bm25``, ``bm25s``."""

_PROGRESS_TAG = "\x1etooldisc-bench "


@dataclass(frozen=True)
class BenchOptions:
    """One benchmark run. ``catalog``/``gold`` ``None`` mean the shipped files."""

    sizes: tuple[int, ...] = (180, 10_000, 100_000)
    queries: int = 200
    repeats: int = 5
    k: int = 15
    baselines: bool = True
    seed: int = 0
    catalog: str | None = None
    gold: str | None = None
    config: str | None = None
    learned: str | None = None  # a learned file for the base catalog; variants take their base tool's learned parts
    build_repeats: int = 3
    notes: tuple[str, ...] = field(default=())
    catalog_format: str | None = None  # None: declared by catalog_version, else detected
    backend: str = "auto"  # the query loops' form (tooldisc.discovery.kernels): auto, numpy or numba
    from_file: bool = True  # also measure the catalog written to a file (evaluation/bench_file.py)

    # Each counted option's rule (the rulebook, tooldisc.params); ``backend`` is checked against
    # the kernels' own list of backends.
    parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "queries": COUNTS["bench_queries"], "repeats": COUNTS["repeats"], "k": COUNTS["k"],
        "build_repeats": COUNTS["repeats"], "seed": COUNTS["seed"], "sizes": Items(COUNTS["bench_tools"])}

    def __post_init__(self) -> None:
        from tooldisc.discovery.kernels import check_backend

        validate(self.parameter_constraints, self, error=UsageError)
        check_backend(self.backend)


def run_bench(options: BenchOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Benchmark every size in its own subprocess; one JSON-ready document for the run."""
    started = time.time()
    env = environment()  # before the run: the commit measured, not one committed meanwhile
    sizes = [_run_worker(options, n, progress) for n in options.sizes]
    env["loadavg_after"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    return {
        "tool": "tooldisc bench",
        "config": asdict(options) | {"sizes": list(options.sizes), "notes": list(options.notes)},
        "environment": env,
        "hit_at_k_what": HIT_WHAT,
        "started_unix": round(started, 3),
        "wall_s": round(time.time() - started, 3),
        "sizes": sizes,
    }


def environment() -> dict[str, Any]:
    """What a figure depends on: versions, cores, load, and the code's git commit."""
    from importlib import metadata

    versions = {}
    for dist in ("tooldisc", "numpy", "scipy", "numba", "rank-bm25", "bm25s"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "affinity_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "versions": versions,
        "git": _git(),
    }


def _git() -> dict[str, Any] | None:
    """Commit of the source tree and whether tracked files differ from it (None outside git)."""
    where = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(status.strip())}


def _run_worker(options: BenchOptions, n: int, progress: Progress | None) -> dict[str, Any]:
    """One size in a fresh interpreter; progress lines on its stderr drive ``progress``.

    The worker never outlives this process: it holds the read end of a pipe whose only
    writer is here (its stdin), and exits when that pipe closes — which the kernel does
    however this process ends, SIGKILL included; on Linux the kernel also kills it when
    its parent dies (``PR_SET_PDEATHSIG``). Any error or interrupt here stops it first.
    """
    from tooldisc.errors import ToolDiscError

    with tempfile.TemporaryDirectory(prefix="tooldisc-bench-") as tmp:
        out = Path(tmp) / "result.json"
        spec = json.dumps({"options": asdict(options), "n": n, "out": str(out), "parent": os.getpid()})
        proc = subprocess.Popen([sys.executable, "-m", "tooldisc.evaluation.bench", spec],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, encoding="utf-8", errors="replace")
        tail: list[str] = []
        assert proc.stderr is not None
        try:
            for line in proc.stderr:
                if line.startswith(_PROGRESS_TAG):
                    if progress is not None:
                        phase, done, total = json.loads(line[len(_PROGRESS_TAG):])
                        progress(f"{n} tools: {phase}", done, total)
                    continue
                tail = [*tail[-40:], line]
            rc = proc.wait()
        finally:
            if proc.poll() is None:  # an error or an interrupt here: the worker stops with us
                proc.kill()
                proc.wait()
            if proc.stdin is not None:
                proc.stdin.close()
        if rc != 0 or not out.exists():
            raise ToolDiscError(f"benchmark worker for {n} tools failed (exit {rc}): " + "".join(tail).strip()[-2000:])
        return json.loads(out.read_text("utf-8"))


def _die_with_parent(parent: int | None) -> None:
    """Exit as soon as the process that started this worker is gone (see :func:`_run_worker`)."""
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # no prctl here: the pipe below still ends the worker
            pass
    if parent is not None and os.getppid() != parent:  # the parent died before the line above
        os._exit(1)

    def watch() -> None:
        try:
            while os.read(0, 1 << 16):  # the raw descriptor: no buffer lock to hold at interpreter exit
                pass
        except OSError:
            pass
        os._exit(1)  # EOF: the parent closed the pipe, or ended

    threading.Thread(target=watch, name="tooldisc-bench-parent", daemon=True).start()


def _worker(spec_json: str) -> None:
    """Entry point of the per-size subprocess: load, generate, measure, write JSON."""
    spec = json.loads(spec_json)
    _die_with_parent(spec.get("parent"))
    raw = spec["options"]
    options = BenchOptions(**{**raw, "sizes": tuple(raw["sizes"]), "notes": tuple(raw["notes"])})

    def report(phase: str, done: int, total: int) -> None:
        sys.stderr.write(_PROGRESS_TAG + json.dumps([phase, done, total]) + "\n")
        sys.stderr.flush()

    result = measure_size(options, spec["n"], report)
    Path(spec["out"]).write_text(json.dumps(result), "utf-8")


def load_inputs(options: BenchOptions) -> tuple[Any, list[Any], str]:
    """The base catalog and base queries (the gold set, or the catalog's own texts)."""
    from tooldisc.discovery.catalog_io import default_catalog_path, load_catalog
    from tooldisc.discovery.synthetic import SyntheticQuery, catalog_queries
    from tooldisc.evaluation.inputs import default_gold_path

    base = load_catalog(options.catalog or default_catalog_path(), fmt=options.catalog_format)
    gold_path = options.gold or str(default_gold_path())
    queries: list[Any] = []
    source = "catalog examples and aliases (no gold set)"
    if gold_path and Path(gold_path).is_file():
        from tooldisc.errors import DataError
        from tooldisc.gold.loader import load_gold

        try:
            gold = load_gold(gold_path, check=False)
        except DataError as exc:
            sys.stderr.write(f"note: gold set unusable, using catalog texts: {exc}\n")
        else:
            queries = [
                SyntheticQuery(q.id, q.query, () if q.no_match else tuple(q.primary_expected_tools),
                               tuple(c for r, c in q.history if r == "user"), "gold")
                for q in gold.queries
            ]
            source = str(gold_path)
    if not queries:
        queries = list(catalog_queries(base))
    return base, queries, source


def measure_size(options: BenchOptions, n: int, progress: Progress | None = None) -> dict[str, Any]:
    """Every figure for one catalog size (run it in a fresh process for honest RSS)."""
    from tooldisc.discovery.columns import release_memory
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.synthetic import synthetic_catalog, synthetic_queries

    tick = progress or (lambda phase, done, total: None)
    tick("generate", 0, 1)
    t0 = time.perf_counter()
    base, base_queries, query_source = load_inputs(options)
    catalog = synthetic_catalog(base, n, options.seed)
    queries = synthetic_queries(catalog, base_queries, options.queries, options.seed,
                                base_names=frozenset(t.name for t in base.tools))
    config = load_config(options.config)
    learned = None
    if options.learned:
        from tooldisc.discovery.learned import for_grown_catalog
        from tooldisc.discovery.learned_read import load_learned

        learned = for_grown_catalog(load_learned(options.learned), base, catalog)
    _ = catalog.hash  # the catalog's own hash, once, with the catalog (see the module docstring)
    generate_s = time.perf_counter() - t0
    gc.collect()
    release_memory()  # what generating left behind is not the process's to keep
    tick("generate", 1, 1)
    sources: dict[str, int] = {}
    for q in queries:
        sources[q.source] = sources.get(q.source, 0) + 1
    result: dict[str, Any] = {
        "n_tools": len(catalog),
        "n_queries": len(queries),
        "base_tools": len(base),
        "query_sources": dict(sorted(sources.items())),
        "base_queries_from": query_source,
        "generate_s": round(generate_s, 3),
        "judged_queries": sum(1 for q in queries if q.intended),
    }
    engines: dict[str, Any] = {}
    engines["tooldisc"], engine = measure_tooldisc(catalog, config, queries, options, tick, learned)
    result["vocab_terms"] = len(engine.index.lexical.vocab)
    authorized = authorized_sets(engine, queries)
    result["refused_by_security"] = refused_share(engine, queries, authorized)
    del engine
    fields = [f for f, w in config.fields.items() if w > 0]
    for name in BASELINES:
        engines[name] = (measure_baseline(name, catalog, fields, queries, authorized, options, tick)
                         if options.baselines else {"available": False, "skipped": "--no-baselines"})
    result["engines"] = engines
    result["ratios"] = ratios(engines)
    if options.from_file:
        from tooldisc.evaluation.bench_file import measure_from_file

        result["from_file"] = measure_from_file(catalog, engines["tooldisc"]["build_s"]["median"],
                                                min(options.repeats, 3), tick)
    return result


if __name__ == "__main__":
    _worker(sys.argv[1])
