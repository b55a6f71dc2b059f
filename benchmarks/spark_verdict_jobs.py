"""Benchmark: Spark jobs, stages and CPU per canary verdict, in one warm local JVM.

A verdict's cost on Spark at small sizes is planning and job overhead, not rows, so the
count of jobs and stages per verdict is the figure that moves when the engine's query
shape changes (docs/canary.md, "Where the Spark tests' seconds go"). Each verdict runs in
its own job group; Spark's status tracker counts its jobs and stages, and the JVM's CPU
is read from /proc (the JVM is this process's child). Three cases: a plain file (no
repeated event id), every id twice (the de-duplication path) and the repository's file of
conflicting copies. Each case runs --repeats times and must give the same verdict JSON
every time; medians are printed and written with --out.

    .venv/bin/python benchmarks/spark_verdict_jobs.py --repeats 3 --data /tmp/tooldisc-jobs

Needs the spark extra and Java 17. Session settings are the engine's own (``local[2]``),
plus any ``--spark-conf key=value``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFLICTING = ROOT / "tests" / "data" / "bad" / "telemetry" / "canary_conflicting_event_ids.jsonl"
EXPERIMENT = "indexed-retrieval-v1"


def _jvm_cpu_s() -> float:
    """User + system CPU seconds of this process's descendants (the Spark JVM), from /proc."""
    from canary_scale import tree_sample  # the process-tree sampler beside this script

    me = os.getpid()
    _, ticks = tree_sample(me)
    return sum(t for pid, t in ticks.items() if pid != me) / os.sysconf("SC_CLK_TCK")


def _verdict(spark: Any, location: str, experiment: str, tag: str) -> dict[str, Any]:
    from tooldisc.canary.profiles import profiles
    from tooldisc.canary.spark.engine import SparkEngine
    from tooldisc.canary.spark.read import locate
    from tooldisc.canary.verdict import run_verdict
    from tooldisc.cli.reporting import report_text

    context = spark.sparkContext
    context.setJobGroup(tag, tag)
    profile = profiles()["canary"]
    t0, jvm0, py0 = time.monotonic(), _jvm_cpu_s(), time.process_time()
    engine = SparkEngine.open(spark, locate(location, None), profile.schema)
    try:
        _, report = run_verdict(profile.schema, experiment, engine=engine, profile_name="canary")
    finally:
        engine.close()
    wall, jvm, py = time.monotonic() - t0, _jvm_cpu_s() - jvm0, time.process_time() - py0
    tracker = context.statusTracker()
    jobs = tracker.getJobIdsForGroup(tag)
    stages = {s for j in jobs for s in tracker.getJobInfo(j).stageIds}
    return {"jobs": len(jobs), "stages": len(stages), "wall_s": wall, "jvm_cpu_s": jvm, "python_cpu_s": py,
            "json": report_text(report, "verdict", "json")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=3000, help="events per synthetic file")
    parser.add_argument("--data", type=Path, default=Path("/tmp/tooldisc-spark-jobs"))
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from tooldisc.canary.spark.session import SparkTarget, session
    from tooldisc.canary.synthetic.events import synthesize

    args.data.mkdir(parents=True, exist_ok=True)
    for scenario in ("healthy", "duplicated", "slow"):
        path = args.data / f"{scenario}.parquet"
        if not path.exists():
            synthesize(path, args.rows, scenario, percent=25, seed=3)
    cases = {"plain": (args.data / "healthy.parquet", EXPERIMENT),
             "every id twice": (args.data / "duplicated.parquet", EXPERIMENT),
             "conflicting copies": (CONFLICTING, "e1")}
    conf = dict(item.split("=", 1) for item in args.spark_conf)
    results: dict[str, list[dict[str, Any]]] = {}
    with session(SparkTarget(master="local[2]", timeout=600), conf) as spark:
        _verdict(spark, str(args.data / "slow.parquet"), EXPERIMENT, "warm-up")  # JIT and codegen once
        for i in range(args.repeats):
            for name, (location, experiment) in cases.items():
                results.setdefault(name, []).append(_verdict(spark, str(location), experiment, f"{name}-{i}"))
    summary = {}
    for name, runs in results.items():
        if len({r["json"] for r in runs}) != 1:
            raise SystemExit(f"{name}: the verdict JSON differs between repeats")
        summary[name] = {"jobs": [r["jobs"] for r in runs], "stages": [r["stages"] for r in runs],
                         **{k: round(statistics.median(r[k] for r in runs), 2)
                            for k in ("wall_s", "jvm_cpu_s", "python_cpu_s")}}
        print(f"{name}: jobs {summary[name]['jobs']}, stages {summary[name]['stages']}, median wall "
              f"{summary[name]['wall_s']} s, JVM CPU {summary[name]['jvm_cpu_s']} s")
    if args.out:
        args.out.write_text(json.dumps({"repeats": args.repeats, "rows": args.rows, "cases": summary}, indent=1) + "\n")


if __name__ == "__main__":
    main()
