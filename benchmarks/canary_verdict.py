"""Benchmark: ``tooldisc canary verdict --format json`` over 10M synthetic events.

Synthesises N events (default 10M, scenario healthy, 5 %, schema v2 with event ids) to
a temporary Parquet file, times the whole CLI process (median of --repeats) and records
its peak RSS — validation, de-duplication by event_id, the three segment columns and
the always-valid comparisons included — times ``canary simulate`` per salt over 10M
synthetic ids, and the bare DuckDB per-arm aggregate over the same file as the
baseline, with the ratio of the two medians (a ratio survives a busy machine better
than seconds). Writes one JSON (see --out).

    .venv/bin/python benchmarks/canary_verdict.py [--events 10000000] [--out result.json]
    .venv/bin/python benchmarks/canary_verdict.py --data /var/tmp/tooldisc-scale/events-10000000 \
        --skip-simulate   # reuse canary_scale.py's files
    .venv/bin/python benchmarks/canary_verdict.py --data … --skip-simulate --db
        # also: `canary ingest` into a temporary database (one timed run) and
        # `canary verdict --db` (median of --repeats); the two verdicts' JSON must agree

With ``--db`` the raw and database verdicts alternate, so both meet the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXP = "indexed-retrieval-v1"


def run_child(args: list[str], module: bool = True,
              stdout: str | None = None) -> tuple[float, int, int, float]:
    """(wall s, peak RSS MiB, exit code, CPU s) of one process (its stdout to ``stdout``).

    This parent stays small (no duckdb/numpy imported here) because a child's
    ``ru_maxrss`` includes the image it was forked from before ``exec``.
    """
    cmd = [sys.executable, "-m", "tooldisc.cli", *args] if module else [sys.executable, *args]
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, cwd=ROOT)
    finally:
        if stdout:
            out.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss // 1024, proc.returncode, usage.ru_utime + usage.ru_stime


BARE_DB = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True); con.execute("SET enable_progress_bar = false")
t0 = time.perf_counter()
con.execute("SELECT arm, count(*), count(*) FILTER (WHERE task_success), count(*) FILTER "
            "(WHERE fallback), quantile_cont(latency_ms, [0.95, 0.99]) FROM events "
            "GROUP BY arm").fetchall()
print(time.perf_counter() - t0)
"""
BARE = """
import json, sys, time, duckdb
con = duckdb.connect(); con.execute("SET enable_progress_bar = false")
t0 = time.perf_counter()
con.execute("SELECT arm, count(*), count(*) FILTER (WHERE task_success), count(*) FILTER "
            "(WHERE fallback), quantile_cont(latency_ms, [0.95, 0.99]) FROM read_parquet(?) "
            "GROUP BY arm", [json.loads(sys.argv[1])]).fetchall()
print(time.perf_counter() - t0)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--ids", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tooldisc-canary-verdict.json"))
    ap.add_argument("--data", help="judge these existing Parquet events (a file, or a directory such "
                                   "as canary_scale.py's events-10000000) instead of synthesising")
    ap.add_argument("--skip-simulate", action="store_true", help="time the verdict only")
    ap.add_argument("--db", action="store_true",
                    help="also ingest the events into a temporary DuckDB database and time "
                         "`canary verdict --db` (the JSON must equal the files' verdict)")
    args = ap.parse_args()

    load_start = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory() as tmp:
        if args.data:
            events = args.data
            synth = (0.0, 0, 0, 0.0)
        else:
            events = os.path.join(tmp, "events.parquet")
            synth = run_child(["canary", "synth", "--events", str(args.events), "--scenario", "healthy",
                               "--percent", "5", "--out", events])
        files = (sorted(str(p) for p in Path(events).rglob("*.parquet")) if os.path.isdir(events)
                 else [events])

        verdict_args = ["canary", "verdict", "--experiment", EXP, "--format", "json"]
        db = os.path.join(tmp, "events.duckdb")
        ingest = run_child(["canary", "ingest", events, "--db", db, "--json"]) if args.db else None
        verdict_runs, db_runs, same = [], [], None
        for i in range(args.repeats):  # alternating, so both paths meet the same load
            verdict_runs.append(run_child([*verdict_args, "--events", events],
                                          stdout=os.path.join(tmp, f"raw{i}.json")))
            if args.db:
                db_runs.append(run_child([*verdict_args, "--db", db],
                                         stdout=os.path.join(tmp, f"db{i}.json")))
        if args.db:
            texts = {Path(tmp, f"{kind}{i}.json").read_bytes()
                     for kind in ("raw", "db") for i in range(args.repeats)}
            same = len(texts) == 1
            db_bytes = os.path.getsize(db)
        simulate_runs = [] if args.skip_simulate else [
            run_child(["canary", "simulate", "--ids", str(args.ids), "--salt", "s1", "--percent", "5",
                       "--json"]) for _ in range(args.repeats)]
        two_salt = (0.0, 0, 0, 0.0) if args.skip_simulate else run_child(
            ["canary", "simulate", "--ids", str(args.ids), "--salt", "s1", "--percent", "5",
             "--salt2", "s2", "--percent2", "10", "--json"])
        bare = [float(subprocess.run([sys.executable, "-c", BARE, json.dumps(files)],
                                     capture_output=True, text=True, check=True).stdout)
                for _ in range(args.repeats)]
        bare_db = [float(subprocess.run([sys.executable, "-c", BARE_DB, db], capture_output=True,
                                        text=True, check=True).stdout)
                   for _ in range(args.repeats)] if args.db else []
        size = sum(os.path.getsize(f) for f in files)

    codes = {r[2] for r in verdict_runs}
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {
        "benchmark": "canary_verdict",
        "commit": commit,
        "config": {"events": args.events, "ids": args.ids, "repeats": args.repeats,
                   "scenario": "healthy", "percent": 5, "parquet_bytes": size,
                   "parquet_files": len(files), "data": args.data},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(),
                    "loadavg_1m": round(os.getloadavg()[0], 2), "loadavg_1m_start": load_start},
        "synth_cli_seconds": round(synth[0], 3),
        "verdict_cli": {"median_seconds": round(statistics.median(r[0] for r in verdict_runs), 3),
                        "runs_seconds": [round(r[0], 3) for r in verdict_runs],
                        "peak_rss_mib": max(r[1] for r in verdict_runs),
                        "cpu_seconds": [round(r[3], 3) for r in verdict_runs],
                        "median_cpu_seconds": round(statistics.median(r[3] for r in verdict_runs), 3),
                        "exit_codes": sorted(codes),
                        "budget": {"seconds": 3.0, "rss_mib": 1024}},
        "baseline_bare_duckdb_aggregate": {"median_seconds": round(statistics.median(bare), 3),
                                           "runs_seconds": [round(b, 3) for b in bare]},
        "ratio_verdict_to_bare": round(statistics.median(r[0] for r in verdict_runs)
                                       / statistics.median(bare), 2),
    }
    if args.db and ingest is not None:
        median = statistics.median(r[0] for r in db_runs)
        result["ingest_cli"] = {"seconds": round(ingest[0], 3), "peak_rss_mib": ingest[1],
                                "cpu_seconds": round(ingest[3], 3), "exit_code": ingest[2],
                                "database_bytes": db_bytes}
        result["verdict_db_cli"] = {
            "median_seconds": round(median, 3), "runs_seconds": [round(r[0], 3) for r in db_runs],
            "peak_rss_mib": max(r[1] for r in db_runs),
            "cpu_seconds": [round(r[3], 3) for r in db_runs],
            "median_cpu_seconds": round(statistics.median(r[3] for r in db_runs), 3),
            "exit_codes": sorted({r[2] for r in db_runs}),
            "json_equals_files_verdict": same}
        result["baseline_bare_duckdb_aggregate_over_db"] = {
            "median_seconds": round(statistics.median(bare_db), 3),
            "runs_seconds": [round(b, 3) for b in bare_db]}
        result["ratio_verdict_db_to_bare"] = round(median / statistics.median(bare), 2)
    if simulate_runs:
        result["simulate_cli_one_salt"] = {
            "median_seconds": round(statistics.median(r[0] for r in simulate_runs), 3),
            "runs_seconds": [round(r[0], 3) for r in simulate_runs],
            "peak_rss_mib": max(r[1] for r in simulate_runs),
            "cpu_seconds": [round(r[3], 3) for r in simulate_runs],
            "budget_seconds_per_salt": 5.0}
        result["simulate_cli_two_salts"] = {"seconds": round(two_salt[0], 3), "peak_rss_mib": two_salt[1],
                                            "cpu_seconds": round(two_salt[3], 3)}
    Path(args.out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2, sort_keys=True))
    print(f"wrote {args.out}", file=sys.stderr)
    if same is False:
        sys.exit("the verdict from the database differs from the files' verdict")


if __name__ == "__main__":
    main()
