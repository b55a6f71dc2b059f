"""Benchmark: the interleaving verdict over 10M interleaved events from an ingested database,
against the A/B verdict over 10M events from a database, in the same run.

Synthesises N interleaved events (``canary synth --profile interleaving``, scenario
no_preference, 100 % interleaved: every row a schema version 3 request with its teams and
credit) and N A/B events (``canary synth``, healthy at 10 %), ingests each into its own
temporary DuckDB database (one timed run each), then runs ``canary verdict --db … --format
json`` for both profiles alternately (``--repeats`` each: the same load meets both), as
whole processes: wall and CPU seconds, peak RSS. Target (issue 29): the interleaving verdict
within 1.5× the A/B verdict. Writes one JSON document.

    .venv/bin/python benchmarks/interleave_verdict.py [--events 10000000] [--repeats 3] [--out result.json]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from canary_verdict import run_child  # noqa: E402  (the same whole-process measurement)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", help="folder for the data and databases (default: a new temporary one)")
    ap.add_argument("--out")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="tooldisc-interleave-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    data = {"interleaving": work / "interleaving.parquet", "canary": work / "ab.parquet"}
    dbs = {name: work / f"{name}.duckdb" for name in data}
    experiments = {"interleaving": "ranking-v2", "canary": "indexed-retrieval-v1"}
    result: dict = {"benchmark": "interleave_verdict", "events": args.events, "repeats": args.repeats,
                    "steps": {}}
    synth = {"interleaving": ["canary", "synth", "--profile", "interleaving", "--scenario", "no_preference",
                              "--percent", "100"],
             "canary": ["canary", "synth", "--scenario", "healthy", "--percent", "10"]}
    for name, path in data.items():
        if not path.exists():
            wall, rss, rc, cpu = run_child([*synth[name], "--events", str(args.events), "--seed", "7",
                                            "--out", str(path)])
            assert rc == 0, (name, rc)
            result["steps"][f"synth_{name}"] = {"wall": round(wall, 2), "cpu": round(cpu, 2), "rss_mib": rss}
        if not dbs[name].exists():
            wall, rss, rc, cpu = run_child(["canary", "ingest", str(path), "--db", str(dbs[name])])
            assert rc == 0, (name, rc)
            result["steps"][f"ingest_{name}"] = {"wall": round(wall, 2), "cpu": round(cpu, 2), "rss_mib": rss}
        print(name, "ready", file=sys.stderr, flush=True)
    runs: dict[str, list[tuple[float, int, float]]] = {n: [] for n in data}
    outputs: dict[str, str] = {}
    load = []
    for i in range(args.repeats):
        for name in (("interleaving", "canary") if i % 2 == 0 else ("canary", "interleaving")):
            out = work / f"verdict-{name}.json"
            load.append(os.getloadavg()[0])
            wall, rss, rc, cpu = run_child(["canary", "verdict", "--profile", name, "--db", str(dbs[name]),
                                            "--experiment", experiments[name], "--format", "json"],
                                           stdout=str(out))
            assert rc in (0, 10, 20), (name, rc)
            runs[name].append((wall, rss, cpu))
            outputs[name] = json.loads(out.read_text())["verdict"]
            print(name, i, round(wall, 2), round(cpu, 2), rss, file=sys.stderr, flush=True)
    for name, rs in runs.items():
        result[name] = {"wall_median": round(statistics.median(r[0] for r in rs), 3),
                        "cpu_median": round(statistics.median(r[2] for r in rs), 3),
                        "rss_mib_max": max(r[1] for r in rs), "walls": [round(r[0], 3) for r in rs],
                        "cpus": [round(r[2], 3) for r in rs], "verdict": outputs[name]}
    result["ratio_interleaving_to_ab"] = {
        "wall": round(result["interleaving"]["wall_median"] / result["canary"]["wall_median"], 3),
        "cpu": round(result["interleaving"]["cpu_median"] / result["canary"]["cpu_median"], 3)}
    result["load_average"] = [round(x, 2) for x in load]
    result["commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                      text=True).stdout.strip()
    result["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version()}
    result["work"] = str(work)
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
