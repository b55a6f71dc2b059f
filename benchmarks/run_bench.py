"""Run the discovery benchmark and write one JSON document per run.

A thin wrapper over :func:`tooldisc.evaluation.bench.run_bench` — the same
function ``tooldisc bench`` calls — for scripted runs and CI jobs that keep results::

    .venv/bin/python benchmarks/run_bench.py results/2025-01-01.json --tools 180,10000,100000

Not collected by pytest (benchmarks live outside the test suite).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run every size, write the JSON to the given path; 0 on success."""
    from tooldisc.cli.bench_cmd import parse_sizes
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
