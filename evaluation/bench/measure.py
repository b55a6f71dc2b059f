"""What ``tooldisc bench`` measures in each per-size process: tooldisc and the BM25 baselines.

Every engine sees the same tools and queries. Quality is compared like with like:
a query's hit counts only tools the security filter lets that query see (its
authorized set, from tooldisc's own authorize step), for tooldisc and for the
baselines alike — rank-bm25 and bm25s rank everything, so without that their
hits would include tools no request of that kind may be offered. The authorized
sets are computed before any baseline is timed; a baseline's time includes
applying the mask to its scores.

Memory comes from ``/proc/self/status``. ``rss_mb.process_peak`` is the whole process's
true peak while it does what a serving process does: the builds, the first query (which
loads numba and the compiled loops' machine code when they run) and the warm queries.
The peak (``VmHWM``) is reset at the start of each phase so that each also has its own
figure (``phase_peaks``; ``build_peak``/``peak_growth`` of the first build, ``first_query``);
:class:`PeakWatch` keeps every phase's, so no reset hides a peak. Candidate recall ranks
every authorized tool of a query (a check a serving process never runs) after those
phases; its own peak is ``rss_mb.diagnostic_peak``, outside ``process_peak``.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from tooldisc.evaluation.bench.options import BenchOptions

Progress = Callable[[str, int, int], None]
BASELINES: tuple[str, ...] = ("rank_bm25", "bm25s")
HIT_WHAT = ("share of judged queries (an intended tool, not no-match) with an intended tool among the "
            "first K, ranking only the tools the query is authorized to see")


def measure_tooldisc(catalog: Any, config: Any, queries: Sequence[Any], options: BenchOptions,
                     tick: Progress, learned: Any = None) -> tuple[dict[str, Any], Any]:
    """Build time and memory, per-query latency, hits and candidate recall; also the engine."""
    import numpy as np

    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.discovery.text.columns import release_memory

    builds, rss = [], None
    engine = None
    watch = PeakWatch()
    for i in range(options.build_repeats):
        tick("build", i, options.build_repeats)
        engine = None
        gc.collect()
        # the previous build's index, freed, back to the OS (glibc keeps it otherwise): each build
        # starts from the heap the first did, instead of peaking ~20 MB higher in its fragments
        release_memory()
        before = watch.start("build")
        t0 = time.perf_counter()
        engine = Discoverer(catalog, config, learned=learned, backend=options.backend)
        builds.append(time.perf_counter() - t0)
        if rss is None:
            rss = rss_after(before)
    tick("build", options.build_repeats, options.build_repeats)
    assert engine is not None and rss is not None
    k = options.k
    total = (options.repeats + 1) * len(queries)
    first = first_query(engine, queries[0], k, watch) if queries else None
    done = 1 if queries else 0
    watch.start("queries")
    for q in queries[1:]:  # warm-up: caches (authorized set per context), branch predictors
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
                count_hit(hits, q, {c.name for c in offer.candidates})
        done += len(queries)
        tick("tooldisc", done, total)
    watch.start("diagnostic")
    for q in queries:  # after the measured phases: it ranks every authorized tool of each query
        if q.intended:
            _candidate_recall(recall, engine, q, k)
    watch.stop()
    whole_process_peak(rss, watch)
    calls = options.repeats * len(queries)
    cfg = engine.config
    return {
        "available": True,
        "what": "Discoverer(catalog, config) build; discover(query, default context, k) per query",
        "kernels": engine.index.kernels.name,  # which form of the query loops ran (tooldisc.discovery.kernels)
        "kernels_form": engine.index.kernels.form,  # numba's loops: "aot" (compiled module) or "jit"; else "numpy"
        "build_s": summary_s(builds),
        "rss_mb": rss,
        "first_query": first,
        "latency_ms": latency(lat),
        "steps_mean_ms": {s: round(v / calls, 5) for s, v in steps.items()},
        **hit_rates(hits),
        "candidate_recall": {
            "what": (f"index: share of the exhaustive ranking's top {k} (every authorized tool ranked) among "
                     f"the retrieved candidates; intended: share of a query's intended tools, of those the "
                     f"security filter lets through, among them. Candidates: the best {cfg.retrieval.candidates} "
                     f"by BM25F and by a fused estimate when the authorized set has ≥ {cfg.retrieval.min_tools} "
                     "tools, else the whole authorized set"),
            "index": round(float(np.mean(recall["index"])), 4) if recall["index"] else None,
            "intended": round(float(np.mean(recall["intended"])), 4) if recall["intended"] else None,
            "queries": len(recall["index"]),
        },
        "authorized_tools": len(engine.authorized_indices(engine.default_context, "READ")),
    }, engine


def first_query(engine: Any, query: Any, k: int, watch: PeakWatch | None = None) -> dict[str, Any]:
    """The first query of the process, cold: with the compiled loops it loads them (numba and its
    cached machine code, process-level work kept out of the build), so it is reported on its own
    (and counts in the whole process's peak through ``watch``)."""
    before = (watch or PeakWatch()).start("first_query")
    c0, t0 = os.times(), time.perf_counter()
    engine.discover(query.query, None, k, query.history)
    wall, c1 = time.perf_counter() - t0, os.times()
    rss = rss_after(before)
    return {
        "what": "the process's first discover (cold): loads the compiled loops when kernels is numba",
        "ms": round(wall * 1000.0, 2),
        "cpu_ms": round((c1.user - c0.user + c1.system - c0.system) * 1000.0, 1),
        "rss_growth_mb": rss.get("retained_growth"),
        "process_peak_mb": rss.get("process_peak"),
    }


def _candidate_recall(recall: dict[str, list[float]], engine: Any, q: Any, k: int) -> None:
    """Record candidate recall of one query (see ``candidate_recall.what``)."""
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


def authorized_sets(engine: Any, queries: Sequence[Any]) -> list[np.ndarray]:
    """Each query's authorized tool indices, from tooldisc's authorize step (default context)."""
    return [engine.candidates(q.query, None, q.history)[0] for q in queries]


def refused_share(engine: Any, queries: Sequence[Any], authorized: Sequence[np.ndarray]) -> float | None:
    """Share of judged queries none of whose intended tools the security filter lets through."""
    idx = engine.index.security.name_to_idx
    judged = [(q, a) for q, a in zip(queries, authorized, strict=True) if q.intended]
    if not judged:
        return None
    refused = sum(1 for q, a in judged if not {idx[n] for n in q.intended if n in idx} & set(a.tolist()))
    return round(refused / len(judged), 4)


def _doc_tokens(catalog: Any, fields: Sequence[str]) -> list[list[str]]:
    from tooldisc.discovery.text.fields import field_column, terms

    columns = [field_column(catalog.tools, f) for f in fields]
    return [terms(" \n ".join(col[i] for col in columns)) for i in range(len(catalog.tools))]


def measure_baseline(name: str, catalog: Any, fields: Sequence[str], queries: Sequence[Any],
                     authorized: Sequence[np.ndarray], options: BenchOptions, tick: Progress) -> dict[str, Any]:
    """Build time, memory, per-query latency and hits of one baseline; ``available: False`` when absent.

    Per query, the baseline's scores are masked to the query's authorized tools before its
    top K is taken (like with like); ``hit_at_k_all_tools`` is the same without the mask.
    """
    import numpy as np

    from tooldisc.discovery.text.fields import terms

    try:
        module = __import__(name)
    except ImportError:
        return {"available": False, "skipped": f"{name} is not installed (pip install 'tooldisc[dev]')"}
    names = [t.name for t in catalog.tools]
    k = min(options.k, len(names))
    gc.collect()
    before = reset_peak()
    t0 = time.perf_counter()
    docs = _doc_tokens(catalog, fields)
    if name == "rank_bm25":
        index: Any = module.BM25Okapi(docs)

        def search(text: str, mask: np.ndarray | None) -> list[int]:
            s = index.get_scores(terms(text))
            if mask is not None:
                s = s * mask
            top = np.argpartition(-s, k - 1)[:k]
            top = top[np.argsort(-s[top], kind="stable")]
            return [int(i) for i in top if s[i] > 0]
    else:
        index = module.BM25()
        index.index(docs, show_progress=False)

        def search(text: str, mask: np.ndarray | None) -> list[int]:
            # an unknown token stands in for an empty query: bm25s maps an empty list to an id it never built
            found, score = index.retrieve([terms(text) or ["\uffff"]], k=k, show_progress=False, n_threads=0,
                                          weight_mask=mask)
            return [int(i) for i, s in zip(found[0], score[0], strict=True) if s > 0]
    build = time.perf_counter() - t0
    rss = rss_after(before)
    del docs

    masks = []
    for a in authorized:
        m = np.zeros(len(names), dtype=np.float32)
        m[a] = 1.0
        masks.append(m)
    warm = list(range(min(20, len(queries))))
    total = len(warm) + options.repeats * len(queries)
    done = 0
    for i in warm:
        search(queries[i].query, masks[i])
        done += 1
    tick(name, done, total)
    lat = np.zeros((options.repeats, len(queries)))
    hits: dict[str, list[int]] = {}
    unfiltered: dict[str, list[int]] = {}
    for r in range(options.repeats):
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            top = search(q.query, masks[i])
            lat[r, i] = (time.perf_counter() - t0) * 1000.0
            if r == 0 and q.intended:
                count_hit(hits, q, {names[j] for j in top})
                count_hit(unfiltered, q, {names[j] for j in search(q.query, None)})
        done += len(queries)
        tick(name, done, total)
    from importlib import metadata

    dist = "rank-bm25" if name == "rank_bm25" else "bm25s"
    return {
        "available": True,
        "version": metadata.version(dist),
        "what": ("tokenise + BM25Okapi(docs); get_scores masked to the query's authorized tools, then top-K"
                 if name == "rank_bm25" else
                 "tokenise + BM25().index(docs); retrieve([query], k=K, weight_mask=the query's authorized "
                 "tools), one query per call"),
        "build_s": summary_s([build]),
        "rss_mb": rss,
        "latency_ms": latency(lat),
        **hit_rates(hits),
        "hit_at_k_all_tools": hit_rates(unfiltered)["hit_at_k"],
    }


def count_hit(hits: dict[str, list[int]], query: Any, offered: set[str]) -> None:
    """Count whether an intended tool of ``query`` is among ``offered``, per query source."""
    for key in ("all", query.source):
        pair = hits.setdefault(key, [0, 0])
        pair[0] += bool(set(query.intended) & offered)
        pair[1] += 1


def hit_rates(hits: dict[str, list[int]]) -> dict[str, Any]:
    """``hit_at_k`` over judged queries, and by query source (a sanity check, not a quality metric)."""
    total = hits.get("all", [0, 0])
    return {
        "hit_at_k": round(total[0] / total[1], 4) if total[1] else None,
        "hit_at_k_by_source": {s: round(h / n, 4) for s, (h, n) in sorted(hits.items()) if s != "all" and n},
    }


def latency(lat: Any) -> dict[str, Any]:
    """Per-query percentiles within each repeat, then the median over repeats."""
    import numpy as np

    per = [{"p50": float(np.percentile(row, 50)), "p95": float(np.percentile(row, 95)),
            "p99": float(np.percentile(row, 99)), "mean": float(row.mean()), "max": float(row.max())}
           for row in lat]
    out: dict[str, Any] = {key: round(float(np.median([p[key] for p in per])), 5) for key in per[0]}
    out["per_repeat"] = [{k: round(v, 5) for k, v in p.items()} for p in per]
    return out


def summary_s(values: Sequence[float]) -> dict[str, Any]:
    import statistics

    return {"median": round(statistics.median(values), 4), "runs": [round(v, 4) for v in values]}


def ratios(engines: dict[str, Any]) -> dict[str, Any]:
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


def _status_mb(key: str) -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def reset_peak() -> float | None:
    """Current RSS (MB), after resetting the peak so ``VmHWM`` measures only what follows."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return None
    return _status_mb("VmRSS")


class PeakWatch:
    """Each phase's peak ``VmHWM`` (the peak is reset as a phase starts), kept across the resets
    so the process's peak over every phase is still known.

    Only what follows the first :meth:`start` counts (the harness's own work before it,
    generating the synthetic catalog, is not the engine's). A phase started again
    (each build) keeps its highest peak.
    """

    def __init__(self) -> None:
        self.peaks: dict[str, float] = {}
        self.phase: str | None = None

    def start(self, phase: str) -> float | None:
        """End the current phase, start ``phase``; the RSS (MB) at its start, None without ``/proc``."""
        self.stop()
        self.phase = phase
        return reset_peak()

    def stop(self) -> dict[str, float]:
        """End the current phase (its peak recorded); every phase's peak so far."""
        now = _status_mb("VmHWM") if self.phase is not None else None
        if self.phase is not None and now is not None:
            self.peaks[self.phase] = round(max(self.peaks.get(self.phase, 0.0), now), 1)
        self.phase = None
        return self.peaks


_MEASURED = ("build", "first_query", "queries")  # what a serving process does; "diagnostic" is the bench's own


def whole_process_peak(rss: dict[str, Any], watch: PeakWatch) -> None:
    """Make ``rss["process_peak"]`` the process's peak over the measured phases (builds, first
    query loading the compiled loops, warm queries); the first build's own stays as ``build_peak``."""
    if "before" not in rss:  # no reset was possible: ru_maxrss is the whole process's peak, diagnostics too
        rss.update(rss_after(None))
        return
    measured = [v for phase, v in watch.peaks.items() if phase in _MEASURED]
    rss["build_peak"] = rss["process_peak"]
    rss["process_peak"] = round(max([*measured, rss["process_peak"]]), 1)
    rss["phase_peaks"] = dict(watch.peaks)
    if "diagnostic" in watch.peaks:
        rss["diagnostic_peak"] = watch.peaks["diagnostic"]
    rss["measure"] = ("process_peak: the whole process's VmHWM over the builds, the first query (it loads the "
                      "compiled loops) and the warm queries (phase_peaks: each phase's); build_peak: during "
                      "the first build, reset just before it; growth = minus RSS before the build; "
                      "diagnostic_peak: candidate recall's exhaustive rankings, after those phases, outside process_peak")


def rss_after(before: float | None) -> dict[str, Any]:
    """Peak and retained RSS since :func:`reset_peak`, or ``ru_maxrss`` when it could not reset."""
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
