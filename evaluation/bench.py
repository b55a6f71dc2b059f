"""Latency, build time and memory of discovery at catalog sizes, against BM25 baselines.

The I/O edge of benchmarking (``tooldisc bench`` and ``benchmarks/run_bench.py`` both
call :func:`run_bench`). Each catalog size runs in a fresh interpreter
(``python -m tooldisc.evaluation.bench``) so its resident memory is its own: peak
RSS is reset (``/proc/self/clear_refs``) just before each index build and read back
from ``VmHWM`` right after, so "peak growth" is what building that index cost, and
"process peak" is the whole process at that moment (interpreter, libraries, the
loaded tool records and the index).

What is timed, per size, on the same documents and queries:

* ``tooldisc`` — ``Discoverer(catalog, config)`` construction (from loaded tool
  records: tokenising, BM25F matrix, security index), then ``discover`` per query
  with the default context and fixed K, warm (after one warm-up pass).
* ``rank_bm25`` — tokenise + ``BM25Okapi(docs)``; per query ``get_scores`` then a
  top-K ``argpartition``.
* ``bm25s`` — tokenise + ``BM25().index(docs)``; per query ``retrieve([q], k=K)``,
  one query per call as a request would.

All three see the same per-tool text (the fields the ranker weights) through the same
tokeniser, so the ratios compare engines, not tokenisers. The baselines have no
security filter and no field weights: they do less work than ``discover``.
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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``; phases are ``generate``, ``build``, ``tooldisc``, ``rank_bm25``, ``bm25s``."""

#: The issue's targets: p95 per-query latency (ms) by catalog size, and build limits at 100k.
P95_TARGET_MS: dict[int, float] = {180: 0.3, 10_000: 1.0, 100_000: 10.0}
BUILD_TARGET_S: dict[int, float] = {100_000: 3.0}
RSS_TARGET_MB: dict[int, float] = {100_000: 300.0}
BASELINES: tuple[str, ...] = ("rank_bm25", "bm25s")
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
    build_repeats: int = 3
    notes: tuple[str, ...] = field(default=())
    catalog_format: str | None = None  # None: declared by catalog_version, else detected

    def __post_init__(self) -> None:
        for name in ("queries", "repeats", "k", "build_repeats"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"The '{name}' parameter must be an int in the range [1, inf). Got {value!r} instead.")
        if not self.sizes or any(not isinstance(n, int) or n < 1 for n in self.sizes):
            raise ValueError(f"The 'sizes' parameter must be positive ints. Got {self.sizes!r} instead.")


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
        "targets": {
            "p95_ms": {str(k): v for k, v in P95_TARGET_MS.items()},
            "build_s": {str(k): v for k, v in BUILD_TARGET_S.items()},
            "rss_mb": {str(k): v for k, v in RSS_TARGET_MB.items()},
            "rss_measure": "process peak RSS (VmHWM) during the index build",
        },
        "started_unix": round(started, 3),
        "wall_s": round(time.time() - started, 3),
        "sizes": sizes,
    }


def environment() -> dict[str, Any]:
    """What a figure depends on: versions, cores, load, and the code's git commit."""
    from importlib import metadata

    versions = {}
    for dist in ("tooldisc", "numpy", "scipy", "rank-bm25", "bm25s"):
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
    """One size in a fresh interpreter; progress lines on its stderr drive ``progress``."""
    from tooldisc.errors import ToolDiscError

    with tempfile.TemporaryDirectory(prefix="tooldisc-bench-") as tmp:
        out = Path(tmp) / "result.json"
        spec = json.dumps({"options": asdict(options), "n": n, "out": str(out)})
        proc = subprocess.Popen([sys.executable, "-m", "tooldisc.evaluation.bench", spec],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, encoding="utf-8", errors="replace")
        tail: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith(_PROGRESS_TAG):
                if progress is not None:
                    phase, done, total = json.loads(line[len(_PROGRESS_TAG):])
                    progress(f"{n} tools: {phase}", done, total)
                continue
            tail = [*tail[-40:], line]
        rc = proc.wait()
        if rc != 0 or not out.exists():
            raise ToolDiscError(f"benchmark worker for {n} tools failed (exit {rc}): " + "".join(tail).strip()[-2000:])
        return json.loads(out.read_text("utf-8"))


def _worker(spec_json: str) -> None:
    """Entry point of the per-size subprocess: load, generate, measure, write JSON."""
    spec = json.loads(spec_json)
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

    base = load_catalog(options.catalog or default_catalog_path(), fmt=options.catalog_format)
    gold_path = options.gold or _default_gold_path()
    queries: list[Any] = []
    source = "catalog examples and aliases (no gold set)"
    if gold_path and Path(gold_path).is_file():
        from tooldisc.gold.loader import load_gold

        from tooldisc.errors import DataError

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


def _default_gold_path() -> str | None:
    from importlib import resources

    p = Path(str(resources.files("tooldisc.gold").joinpath("data/gold.json")))
    return str(p) if p.is_file() else None


def measure_size(options: BenchOptions, n: int, progress: Progress | None = None) -> dict[str, Any]:
    """Every figure for one catalog size (run it in a fresh process for honest RSS)."""
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
    generate_s = time.perf_counter() - t0
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
    engines["tooldisc"] = _measure_tooldisc(catalog, config, queries, options, tick, result)
    fields = [f for f, w in config.fields.items() if w > 0]
    for name in BASELINES:
        engines[name] = (_measure_baseline(name, catalog, fields, queries, options, tick)
                         if options.baselines else {"available": False, "skipped": "--no-baselines"})
    result["engines"] = engines
    result["ratios"] = _ratios(engines)
    result["targets"] = _targets(len(catalog), engines["tooldisc"])
    return result


def _measure_tooldisc(catalog: Any, config: Any, queries: Sequence[Any], options: BenchOptions,
                      tick: Progress, result: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    from tooldisc.discovery.pipeline import Discoverer

    builds, rss = [], None
    engine = None
    for i in range(options.build_repeats):
        tick("build", i, options.build_repeats)
        engine = None
        gc.collect()
        before = _reset_peak()
        t0 = time.perf_counter()
        engine = Discoverer(catalog, config)
        builds.append(time.perf_counter() - t0)
        if rss is None:
            rss = _rss_after(before)
    tick("build", options.build_repeats, options.build_repeats)
    assert engine is not None
    result["vocab_terms"] = len(engine.index.lexical.vocab)
    k = options.k
    total = (options.repeats + 1) * len(queries)
    done = 0
    for q in queries:  # warm-up: caches (authorized set per context), lazy catalog hash, branch predictors
        engine.discover(q.query, None, k, q.history)
        done += 1
    tick("tooldisc", done, total)
    lat = np.zeros((options.repeats, len(queries)))
    steps: dict[str, float] = {}
    hits: dict[str, list[int]] = {}
    recall: dict[str, list[float]] = {"index": [], "intended": []}
    for r in range(options.repeats):
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            offer = engine.discover(q.query, None, k, q.history)
            lat[r, i] = (time.perf_counter() - t0) * 1000.0
            for step, ms in offer.timings.items():
                steps[step] = steps.get(step, 0.0) + ms
            if r == 0 and q.intended:
                _hit(hits, q, {c.name for c in offer.candidates})
                _candidate_recall(recall, engine, q, k)
        done += len(queries)
        tick("tooldisc", done, total)
    calls = options.repeats * len(queries)
    return {
        "available": True,
        "what": "Discoverer(catalog, config) build; discover(query, default context, k) per query",
        "build_s": _summary_s(builds),
        "rss_mb": rss,
        "latency_ms": _latency(lat),
        "steps_mean_ms": {s: round(v / calls, 5) for s, v in steps.items()},
        **_hit_rates(hits),
        "candidate_recall": {
            "what": (f"index: share of the exhaustive ranking's top {k} (every authorized tool ranked) among "
                     f"the retrieved candidates; intended: share of a query's intended tools, of those the "
                     f"security filter lets through, among them. Candidates: the best {config.retrieval.candidates} "
                     f"by BM25F and by a fused estimate when the authorized set has ≥ {config.retrieval.min_tools} "
                     "tools, else the whole authorized set"),
            "index": round(float(np.mean(recall["index"])), 4) if recall["index"] else None,
            "intended": round(float(np.mean(recall["intended"])), 4) if recall["intended"] else None,
            "queries": len(recall["index"]),
        },
        "authorized_tools": len(engine.authorized_indices(engine.default_context, "READ")),
    }


def _candidate_recall(recall: dict[str, list[float]], engine: Any, q: Any, k: int) -> None:
    """Record candidate recall of one query.

    ``index``: share of the exhaustive ranking's top K (every authorized tool ranked)
    found among the retrieved candidates — what the index can lose. ``intended``:
    share of the query's intended tools among the candidates, of those the security
    filter lets through.
    """
    authorized, retrieved, _method = engine.candidates(q.query, None, q.history)
    got = set(retrieved.tolist())
    idx = engine.index.security.name_to_idx
    reference = engine.discover_exhaustive(q.query, None, k, q.history).names
    if reference:
        recall["index"].append(sum(idx[n] in got for n in reference) / len(reference))
    allowed = set(authorized.tolist())
    visible = [idx[n] for n in q.intended if n in idx and idx[n] in allowed]
    if visible:
        recall["intended"].append(sum(i in got for i in visible) / len(visible))


def _doc_tokens(catalog: Any, fields: Sequence[str]) -> list[list[str]]:
    from tooldisc.discovery.fields import field_texts, terms

    out = []
    for t in catalog.tools:
        texts = field_texts(t)
        out.append(terms(" \n ".join(texts.get(f, "") for f in fields)))
    return out


def _measure_baseline(name: str, catalog: Any, fields: Sequence[str], queries: Sequence[Any],
                      options: BenchOptions, tick: Progress) -> dict[str, Any]:
    """Build time, RSS and per-query latency of one baseline; ``available: False`` when absent."""
    import numpy as np
    from tooldisc.discovery.fields import terms

    try:
        module = __import__(name)
    except ImportError:
        return {"available": False, "skipped": f"{name} is not installed (pip install 'tooldisc[dev]')"}
    names = [t.name for t in catalog.tools]
    k = min(options.k, len(names))
    gc.collect()
    before = _reset_peak()
    t0 = time.perf_counter()
    docs = _doc_tokens(catalog, fields)
    if name == "rank_bm25":
        index: Any = module.BM25Okapi(docs)

        def search(text: str) -> list[int]:
            scores = index.get_scores(terms(text))
            top = np.argpartition(-scores, k - 1)[:k]
            return [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]
    else:
        index = module.BM25()
        index.index(docs, show_progress=False)

        def search(text: str) -> list[int]:
            # an unknown token stands in for an empty query: bm25s maps an empty list to an id it never built
            docs_, _ = index.retrieve([terms(text) or ["\uffff"]], k=k, show_progress=False, n_threads=0)
            return [int(i) for i in docs_[0]]
    build = time.perf_counter() - t0
    rss = _rss_after(before)
    del docs
    warm = queries[: min(20, len(queries))]
    total = len(warm) + options.repeats * len(queries)
    done = 0
    for q in warm:
        search(q.query)
        done += 1
    tick(name, done, total)
    lat = np.zeros((options.repeats, len(queries)))
    hits: dict[str, list[int]] = {}
    for r in range(options.repeats):
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            top = search(q.query)
            lat[r, i] = (time.perf_counter() - t0) * 1000.0
            if r == 0 and q.intended:
                _hit(hits, q, {names[j] for j in top})
        done += len(queries)
        tick(name, done, total)
    from importlib import metadata

    dist = "rank-bm25" if name == "rank_bm25" else "bm25s"
    return {
        "available": True,
        "version": metadata.version(dist),
        "what": ("tokenise + BM25Okapi(docs); get_scores + argpartition top-K" if name == "rank_bm25"
                 else "tokenise + BM25().index(docs); retrieve([query], k=K), one query per call"),
        "build_s": _summary_s([build]),
        "rss_mb": rss,
        "latency_ms": _latency(lat),
        **_hit_rates(hits),
    }


def _hit(hits: dict[str, list[int]], query: Any, offered: set[str]) -> None:
    """Count whether an intended tool of ``query`` is among ``offered``, per query source."""
    for key in ("all", query.source):
        pair = hits.setdefault(key, [0, 0])
        pair[0] += bool(set(query.intended) & offered)
        pair[1] += 1


def _hit_rates(hits: dict[str, list[int]]) -> dict[str, Any]:
    """``hit_at_k`` over judged queries, and by query source (a sanity check, not a quality metric)."""
    total = hits.get("all", [0, 0])
    return {
        "hit_at_k": round(total[0] / total[1], 4) if total[1] else None,
        "hit_at_k_by_source": {s: round(h / n, 4) for s, (h, n) in sorted(hits.items()) if s != "all" and n},
    }


def _latency(lat: Any) -> dict[str, Any]:
    """Per-query percentiles within each repeat, then the median over repeats."""
    import numpy as np

    per = [{"p50": float(np.percentile(row, 50)), "p95": float(np.percentile(row, 95)),
            "p99": float(np.percentile(row, 99)), "mean": float(row.mean()), "max": float(row.max())}
           for row in lat]
    out: dict[str, Any] = {key: round(float(np.median([p[key] for p in per])), 5) for key in per[0]}
    out["per_repeat"] = [{k: round(v, 5) for k, v in p.items()} for p in per]
    return out


def _summary_s(values: Sequence[float]) -> dict[str, Any]:
    import statistics

    return {"median": round(statistics.median(values), 4), "runs": [round(v, 4) for v in values]}


def _ratios(engines: dict[str, Any]) -> dict[str, Any]:
    """Baseline ÷ tooldisc: above 1 means tooldisc is faster (or smaller)."""
    own = engines["tooldisc"]
    out: dict[str, Any] = {}
    for name in BASELINES:
        other = engines.get(name) or {}
        if not other.get("available"):
            continue
        out[name] = {
            "p50": _div(other["latency_ms"]["p50"], own["latency_ms"]["p50"]),
            "p95": _div(other["latency_ms"]["p95"], own["latency_ms"]["p95"]),
            "build": _div(other["build_s"]["median"], own["build_s"]["median"]),
        }
    return out


def _div(a: float, b: float) -> float | None:
    return round(a / b, 3) if b > 0 else None


def _targets(n: int, own: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if n in P95_TARGET_MS:
        out["p95_ms"] = {"target": P95_TARGET_MS[n], "value": own["latency_ms"]["p95"],
                         "met": own["latency_ms"]["p95"] <= P95_TARGET_MS[n]}
    if n in BUILD_TARGET_S:
        out["build_s"] = {"target": BUILD_TARGET_S[n], "value": own["build_s"]["median"],
                          "met": own["build_s"]["median"] <= BUILD_TARGET_S[n]}
    rss = (own.get("rss_mb") or {}).get("process_peak")
    if n in RSS_TARGET_MB and rss is not None:
        out["rss_mb"] = {"target": RSS_TARGET_MB[n], "value": rss, "met": rss <= RSS_TARGET_MB[n]}
    return out


def _status_mb(key: str) -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _reset_peak() -> float | None:
    """Current RSS (MB), after resetting the peak so ``VmHWM`` measures only what follows."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return None
    return _status_mb("VmRSS")


def _rss_after(before: float | None) -> dict[str, Any]:
    """Peak and retained RSS since :func:`_reset_peak`, or ``ru_maxrss`` when it could not reset."""
    if before is None:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        return {"measure": "ru_maxrss of the whole process so far (peak could not be reset)",
                "process_peak": round(peak, 1)}
    peak = _status_mb("VmHWM") or 0.0
    now = _status_mb("VmRSS") or 0.0
    return {
        "measure": "VmHWM reset just before the build; growth = minus RSS before the build",
        "before": round(before, 1),
        "process_peak": round(peak, 1),
        "peak_growth": round(peak - before, 1),
        "retained_growth": round(now - before, 1),
    }


if __name__ == "__main__":
    _worker(sys.argv[1])
