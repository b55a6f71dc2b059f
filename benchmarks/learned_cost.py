"""What a learned file costs per request and per build, in CPU time (issue 13).

Usage: python benchmarks/learned_cost.py --tools 10000 [--learned FILE] [--catalog C --gold G] [--backend B]

The same grown catalog, queries and re-bound learned file as ``tooldisc bench --learned``
(:func:`~tooldisc.discovery.learned.for_grown_catalog`), measured in this process: engine
builds (CPU and wall), then passes over the queries (CPU per request, wall p50/p95 per
pass), then the rank step alone on each query's retrieved tools. Each figure is the
minimum and the median over builds or passes. CPU time is what to compare on a shared
machine: run the script without and with the file, interleaved, and read the ratios.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks" / "metatool"


def main(argv: list[str] | None = None) -> None:
    import numpy as np

    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.learned import for_grown_catalog
    from tooldisc.discovery.learned.read import load_learned
    from tooldisc.discovery.pipeline import Discoverer, rank
    from tooldisc.evaluation.bench import BenchOptions, load_inputs
    from tooldisc.evaluation.bench.synthetic import synthetic_catalog, synthetic_queries

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", type=int, default=10_000)
    ap.add_argument("--learned", default=None)
    ap.add_argument("--catalog", default=str(SHARED / "tools.jsonl"))
    ap.add_argument("--gold", default=str(SHARED / "queries_sample2k.jsonl"))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--builds", type=int, default=2)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--backend", default="auto", help="query loops: auto, numpy or numba (as tooldisc bench)")
    args = ap.parse_args(argv)

    opts = BenchOptions(sizes=(args.tools,), catalog=args.catalog, gold=args.gold, queries=args.queries)
    base, base_queries, _ = load_inputs(opts)
    catalog = synthetic_catalog(base, args.tools, opts.seed)
    queries = synthetic_queries(catalog, base_queries, args.queries, opts.seed,
                                base_names=frozenset(t.name for t in base.tools))
    learned = for_grown_catalog(load_learned(args.learned), base, catalog) if args.learned else None
    _ = catalog.hash
    config = load_config(None)
    build_cpu, build_wall = [], []
    engine = None
    for _ in range(args.builds):
        engine = None
        t0, c0 = time.perf_counter(), time.process_time()
        engine = Discoverer(catalog, config, learned=learned, backend=args.backend)
        build_wall.append(time.perf_counter() - t0)
        build_cpu.append(time.process_time() - c0)
    assert engine is not None
    for q in queries:  # warm-up
        engine.discover(q.query, None, 15, q.history)
    cpu, p50, p95 = [], [], []
    for _ in range(args.passes):
        lat = []
        c0 = time.process_time()
        for q in queries:
            t0 = time.perf_counter()
            engine.discover(q.query, None, 15, q.history)
            lat.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.process_time() - c0) * 1000.0 / len(queries))
        p50.append(float(np.percentile(lat, 50)))
        p95.append(float(np.percentile(lat, 95)))
    ix = engine.index
    retrieved = [engine.retrieved(q.query, None, 15, q.history) for q in queries]
    rank_us = []
    for _ in range(args.passes):
        c0 = time.process_time()
        for ret in retrieved:
            rank(ret, ix)
        rank_us.append((time.process_time() - c0) * 1e6 / len(retrieved))

    def stat(xs: list[float], digits: int = 3) -> dict[str, float]:
        return {"min": round(min(xs), digits), "median": round(statistics.median(xs), digits)}

    print(json.dumps({
        "tools": len(catalog), "queries": len(queries), "learned": args.learned, "backend": engine.index.kernels.name,
        "build_cpu_s": stat(build_cpu), "build_wall_s": stat(build_wall),
        "request_cpu_ms": stat(cpu), "p50_ms": stat(p50), "p95_ms": stat(p95), "rank_cpu_us": stat(rank_us, 1),
        "loadavg": list(os.getloadavg()),
    }))


if __name__ == "__main__":
    main()
