"""Benchmark: the canary verdict at 10M and 100M events, DuckDB and Spark side by side.

Writes N synthetic events (scenario healthy, 5 %) as hive-partitioned Parquet, one
million rows per ``shard=NNNN/part.parquet`` file, each the rows ``canary synth`` writes
with the shard's number as seed (generated in-process, vectorised, one shard in memory
at a time: 100M rows in minutes); event ids are text (as ``canary synth`` writes them). Then times the whole
``tooldisc canary verdict --format json`` process per engine (median of --repeats)
with the peak memory of its process tree (the Spark JVM is a child of the CLI, so
the tree's summed RSS is sampled from /proc), and the growth from the smallest to the
largest size. The JSON of both engines must agree (bar ``engine``); the benchmark
says so or fails. Writes one JSON (see --out).

    .venv/bin/python benchmarks/canary_scale.py --sizes 10000000,100000000 \
        --engines duckdb,spark --data /var/tmp/tooldisc-scale --out scale.json

Generated data is kept in --data for the next run (it is deterministic per size).
DuckDB runs with --duckdb-memory-limit (default 2GB, the CLI's default; it spills beyond
it); Spark runs local[2] with --spark-driver-memory. CPU seconds are the process tree's
(user + system, the JVM included, sampled from /proc), which a busy machine distorts less
than wall time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXP = "indexed-retrieval-v1"
SHARD = 1_000_000


def tree_sample(pid: int) -> tuple[int, dict[int, int]]:
    """Summed VmRSS (KiB) of ``pid`` and all its descendants, and each one's CPU ticks
    (user + system) so far. The Spark JVM is never reaped by the CLI (it outlives it by
    a moment), so rusage of children would miss it; sampling /proc does not."""
    total, ticks, todo = 0, {}, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            ticks[p] = int(fields[11]) + int(fields[12])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total, ticks


def run_measured(cmd: list[str], env: dict[str, str] | None = None,
                 timeout: float | None = None) -> dict[str, object]:
    """Wall time, peak tree RSS (sampled every 50 ms), exit code and stdout of one process.

    After ``timeout`` seconds the process group (the JVM included) is killed and the run
    is recorded as not finished (exit code -9), with the time it had run.
    """
    import resource
    import signal

    peak = 0
    ticks: dict[int, int] = {}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, **(env or {})}, start_new_session=True)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            rss, seen = tree_sample(proc.pid)
            peak = max(peak, rss)
            for p, t in seen.items():
                ticks[p] = max(ticks.get(p, 0), t)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\nerror: not finished: stopped after {timeout:g} s".encode()
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu = max(reaped, sum(ticks.values()) / os.sysconf("SC_CLK_TCK"))
    return {"seconds": round(wall, 3), "peak_rss_mib": round(peak / 1024, 1),
            "cpu_seconds": round(cpu, 2), "loadavg_1m": round(os.getloadavg()[0], 2),
            "exit_code": proc.returncode, "stdout": out.decode(), "stderr": err.decode()[-2000:]}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tooldisc.cli", *args]


def generate(data: Path, events: int) -> Path:
    """``events`` rows as ``shard=NNNN/part.parquet`` (1M rows each), made once and kept.

    Each shard is ``canary synth --events 1000000 --scenario healthy --percent 5 --seed
    N`` (the same rows, byte for byte), called in this process: vectorised numpy →
    Arrow, one shard in memory at a time, each written to a temp file and renamed, so
    an interrupted run resumes at the first missing shard. 100M rows take minutes.
    """
    from tooldisc.canary.synthetic.events import synthesize

    target = data / f"events-{events}"
    done = target / "_COMPLETE"
    if done.exists():
        return target
    shards = (events + SHARD - 1) // SHARD
    t0 = time.perf_counter()
    for i in range(shards):
        size = min(SHARD, events - i * SHARD)
        out = target / f"shard={i:04d}" / "part.parquet"
        if out.exists():
            continue
        synthesize(out, size, "healthy", percent=5, seed=i, experiment=EXP)
        print(f"generated shard {i + 1}/{shards} of {events:,} "
              f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    done.write_text("")
    return target


def verdict_cmd(engine: str, events_dir: Path, args: argparse.Namespace) -> list[str]:
    cmd = cli("canary", "verdict", "--events", str(events_dir), "--experiment", EXP,
              "--format", "json")
    if engine == "spark":
        cmd += ["--engine", "spark", "--spark-master", "local[2]",
                "--spark-conf", f"spark.driver.memory={args.spark_driver_memory}"]
    elif engine == "duckdb":
        cmd += ["--engine", "duckdb", "--duckdb-memory-limit", args.duckdb_memory_limit]
    return cmd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000000,100000000",
                    help="comma-separated event counts (multiples of 1M are fastest)")
    ap.add_argument("--engines", default="duckdb,spark")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--spark-repeats", type=int, default=None,
                    help="runs of the Spark engine (default: --repeats)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "tooldisc-scale"))
    ap.add_argument("--spark-driver-memory", default="2g")
    ap.add_argument("--duckdb-memory-limit", default="2GB")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tooldisc-canary-scale.json"))
    ap.add_argument("--timeout", type=float, default=2700.0,
                    help="seconds after which one verdict run is stopped and recorded as "
                         "not finished (default 45 min)")
    ap.add_argument("--generate-only", action="store_true",
                    help="write the data for --sizes and stop (no verdict is run)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = [e.strip() for e in args.engines.split(",")]
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)

    if args.generate_only:
        for size in sizes:
            t0 = time.perf_counter()
            print(f"{generate(data, size)}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return

    results: dict[str, dict[str, object]] = {}
    for size in sizes:
        t0 = time.perf_counter()
        events_dir = generate(data, size)
        gen_seconds = round(time.perf_counter() - t0, 3)
        parquet_bytes = sum(p.stat().st_size for p in events_dir.rglob("*.parquet"))
        per_engine: dict[str, object] = {}
        answers = {}
        for engine in engines:
            repeats = args.spark_repeats if engine == "spark" and args.spark_repeats else args.repeats
            runs = []
            for _ in range(repeats):
                runs.append(run_measured(verdict_cmd(engine, events_dir, args),
                                         timeout=args.timeout))
                if int(runs[-1]["exit_code"]) not in (0, 10, 20):
                    break  # a failed run is recorded once, not repeated
            failed = [r for r in runs if int(r["exit_code"]) not in (0, 10, 20)]
            if failed:
                # Recorded, not raised: the table must show what did not finish, and why.
                lines = str(failed[0]["stderr"]).strip().splitlines() or ["(no stderr)"]
                tail = [ln for ln in lines if "rror" in ln and not ln.startswith(" ")] or lines
                per_engine[engine] = {"failed": tail[-1][:300], "seconds": failed[0]["seconds"],
                                      "peak_rss_mib": failed[0]["peak_rss_mib"],
                                      "loadavg_1m": failed[0]["loadavg_1m"],
                                      "exit_code": failed[0]["exit_code"]}
                print(f"{engine} at {size:,} failed: {tail[-1][:300]}", file=sys.stderr)
                continue
            doc = json.loads(str(runs[-1]["stdout"]))
            doc.pop("engine", None)
            answers[engine] = doc
            canonical = json.dumps(doc, sort_keys=True).encode()
            per_engine[engine] = {
                "median_seconds": round(statistics.median(float(r["seconds"]) for r in runs), 3),
                "runs_seconds": [r["seconds"] for r in runs],
                "median_cpu_seconds": round(statistics.median(float(r["cpu_seconds"])
                                                              for r in runs), 2),
                "runs_loadavg_1m": [r["loadavg_1m"] for r in runs],
                "peak_rss_mib": max(float(r["peak_rss_mib"]) for r in runs),
                "exit_codes": sorted({int(r["exit_code"]) for r in runs}),
                "verdict": doc.get("verdict"),
                # to compare engines measured in separate runs
                "verdict_json_sha256": hashlib.sha256(canonical).hexdigest(),
            }
        same = len({json.dumps(a, sort_keys=True) for a in answers.values()}) <= 1
        results[str(size)] = {"engines": per_engine, "identical_json": same,
                              "parquet_bytes": parquet_bytes, "files": size // SHARD + bool(size % SHARD),
                              "generate_seconds_if_new": gen_seconds}
        if not same:
            raise SystemExit(f"engines disagree at {size:,} events")
    growth = {}
    if len(sizes) >= 2:
        lo, hi = str(min(sizes)), str(max(sizes))
        for engine in engines:
            a, b = results[lo]["engines"][engine], results[hi]["engines"][engine]  # type: ignore[index]
            if "failed" in a or "failed" in b:
                continue
            growth[engine] = {"time_ratio": round(b["median_seconds"] / a["median_seconds"], 2),
                              "rss_ratio": round(b["peak_rss_mib"] / a["peak_rss_mib"], 2),
                              "events_ratio": round(int(hi) / int(lo), 2)}
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {
        "benchmark": "canary_scale",
        "commit": commit,
        "config": {"sizes": sizes, "engines": engines, "repeats": args.repeats,
                   "spark_repeats": args.spark_repeats or args.repeats,
                   "scenario": "healthy", "percent": 5, "layout": "shard=NNNN/part.parquet",
                   "spark": {"master": "local[2]", "driver_memory": args.spark_driver_memory},
                   "duckdb": {"memory_limit": args.duckdb_memory_limit}},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "loadavg_1m": round(os.getloadavg()[0], 2)},
        "results": results,
        "growth": growth,
        "budget": {"duckdb_100m_peak_rss_mib": 2048},
    }
    Path(args.out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2, sort_keys=True))
    print(f"wrote {args.out}", file=sys.stderr)
    if any("failed" in e for r in results.values() for e in r["engines"].values()):  # type: ignore[attr-defined]
        raise SystemExit(1)


if __name__ == "__main__":
    main()
