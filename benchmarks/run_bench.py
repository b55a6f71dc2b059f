"""Run the discovery benchmark and write one JSON document per run; check the developer targets.

A thin wrapper over :func:`tooldisc.evaluation.bench.run_bench` — the same
function ``tooldisc bench`` calls — for scripted runs and CI jobs that keep results::

    .venv/bin/python benchmarks/run_bench.py results/2025-01-01.json --tools 180,10000,100000 --check

``--check`` compares the run with the project's performance targets (issue 12) and
exits 1 when one is missed; ``tooldisc bench`` itself reports figures, not targets.
Not collected by pytest (benchmarks live outside the test suite).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# The project's targets (issue 12), by catalog size: tooldisc's p95 per query and build
# time, whole-process peak memory during the build, and hit@K at most this far below
# bm25s's in the same run (both ranking each query's authorized tools only).
P95_MS = {10_000: 1.5, 100_000: 5.0}
BUILD_S = {100_000: 3.0}
PEAK_MB = {100_000: 300.0}
HIT_GAP = 0.02


def check_targets(result: dict) -> list[tuple[str, float, float, bool]]:
    """(what, value, target, met) for every target that applies to a measured size."""
    out = []
    for size in result["sizes"]:
        n, own = size["n_tools"], size["engines"]["tooldisc"]
        if n in P95_MS:
            out.append((f"p95 ms at {n:,} tools", own["latency_ms"]["p95"], P95_MS[n], own["latency_ms"]["p95"] <= P95_MS[n]))
        if n in BUILD_S:
            out.append((f"build s at {n:,} tools", own["build_s"]["median"], BUILD_S[n],
                        own["build_s"]["median"] <= BUILD_S[n]))
        peak = (own.get("rss_mb") or {}).get("process_peak")
        if n in PEAK_MB and peak is not None:
            out.append((f"peak MB at {n:,} tools", peak, PEAK_MB[n], peak <= PEAK_MB[n]))
        other = size["engines"].get("bm25s") or {}
        if other.get("available") and own.get("hit_at_k") is not None:
            gap = round(other["hit_at_k"] - own["hit_at_k"], 4)
            out.append((f"hit@K below bm25s at {n:,} tools", gap, HIT_GAP, gap <= HIT_GAP))
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run every size, write the JSON to the given path; 0 on success."""
    from tooldisc.cli.commands.bench import parse_sizes
    from tooldisc.evaluation.bench import BenchOptions, run_bench

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where to write the run's JSON document")
    parser.add_argument("--tools", default="180,10000,100000", help="catalog sizes, comma-separated (10k = 10000)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--k", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-baselines", action="store_true", help="skip rank-bm25 and bm25s")
    parser.add_argument("--catalog", help="base catalog (default: the shipped one)")
    parser.add_argument("--gold", help="gold set for half the queries (default: the shipped one)")
    parser.add_argument("--config", help="ranker weights YAML")
    parser.add_argument("--check", action="store_true", help="compare with the targets; exit 1 when one is missed")
    args = parser.parse_args(argv)
    options = BenchOptions(
        sizes=parse_sizes(args.tools), queries=args.queries, repeats=args.repeats, k=args.k,
        baselines=not args.no_baselines, seed=args.seed, catalog=args.catalog, gold=args.gold,
        config=args.config,
    )

    def progress(phase: str, done: int, total: int) -> None:
        if done == total:
            print(f"{phase}: done", file=sys.stderr)

    result = run_bench(options, progress)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "utf-8")
    print(f"wrote {out}", file=sys.stderr)
    if not args.check:
        return 0
    checks = check_targets(result)
    for what, value, target, met in checks:
        print(f"{'met   ' if met else 'MISSED'} {what}: {value:g} (target {target:g})")
    return 0 if all(met for *_, met in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
