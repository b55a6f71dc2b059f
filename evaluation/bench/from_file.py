"""What ``tooldisc bench`` measures from a file: the catalog as users meet it.

The in-memory figures start from tool records; a user starts from a file. For each size the
synthetic catalog is written to a JSON file (and a YAML one at 10,000 tools), and measured in
processes of their own (each process's peak resident memory is its own: ``VmHWM`` of the process it
became at exec, read as it exits):

* ``in_process`` — ``load_catalog(file)`` (read, parse, validate, normalise, hash) then
  ``Discoverer(catalog)``, timed inside one process after its imports; its ratio to the
  in-memory build (``build_s``) is what reading the file costs on top.
* ``discover_cold`` / ``discover_warm`` — the whole process ``tooldisc discover QUERY --catalog FILE``:
  cold with an empty index cache (it builds and stores the index), warm with the entry the cold
  run stored (:mod:`tooldisc.discovery.indexes.cache`); both give the same offer.
* ``validate`` — the whole process ``tooldisc catalog validate FILE``.

Figures are medians of ``repeats`` runs (wall seconds, peak MB); ratios are to the in-memory
build of the same size, measured in the same run. The index cache lives in a temporary
directory, never the user's.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

QUERY = "list unpaid invoices"
YAML_SIZES = (10_000,)

Progress = Callable[[str, int, int], None]

# A child's own peak: VmHWM of the process it became at exec (a fresh address space), written at exit.
# wait4's ru_maxrss would also count the bench worker's pages the child had between fork and exec.
_PEAK_ENV = "TOOLDISC_BENCH_PEAK_FILE"
_WITH_PEAK = """
import atexit, os, runpy, sys
def _peak():
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            kb = next(line.split()[1] for line in fh if line.startswith("VmHWM:"))
        with open(os.environ["{env}"], "w", encoding="ascii") as out:
            out.write(kb)
    except (OSError, StopIteration, KeyError):
        pass
atexit.register(_peak)
sys.argv = [sys.argv[1], *sys.argv[2:]]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
""".replace("{env}", _PEAK_ENV)


def write_catalog(catalog: Any, path: Path) -> Path:
    """``catalog`` as a tooldisc catalog file (JSON, or YAML by the suffix)."""
    from tooldisc.discovery.catalog import catalog_to_dict

    doc = catalog_to_dict(catalog)
    with path.open("w", encoding="utf-8") as fh:
        if path.suffix == ".json":
            json.dump(doc, fh, ensure_ascii=False)
        else:
            import yaml

            yaml.dump(doc, fh, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True,
                      sort_keys=False)
    return path


def _run(module: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``python -m module args`` in a child; wall seconds, the child's own peak RSS (MB) and its output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".peak", encoding="ascii") as peak_file:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _WITH_PEAK, module, *args], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, env={**env, _PEAK_ENV: peak_file.name})
        proc.wait()
        wall = time.perf_counter() - t0
        text = peak_file.read().strip()
        peak = int(text) / 1024.0 if text.isdigit() else None
        out.seek(0)
        err.seek(0)
        return {"wall_s": wall, "peak_mb": peak, "rc": proc.returncode, "stdout": out.read().decode("utf-8", "replace"),
                "stderr": err.read().decode("utf-8", "replace")[-2000:]}


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(values), 4) if values else None


def measure_from_file(catalog: Any, build_s: float, repeats: int, tick: Progress) -> dict[str, Any]:
    """Every from-file figure for one size (see the module docstring)."""
    n = len(catalog)
    out: dict[str, Any] = {"query": QUERY, "repeats": repeats, "in_memory_build_s": round(build_s, 4)}
    with tempfile.TemporaryDirectory(prefix="tooldisc-bench-file-") as tmp:
        files = {"json": write_catalog(catalog, Path(tmp) / "catalog.json")}
        if n in YAML_SIZES:
            files["yaml"] = write_catalog(catalog, Path(tmp) / "catalog.yaml")
        out["file_mb"] = {fmt: round(p.stat().st_size / 1e6, 1) for fmt, p in files.items()}
        env = {**os.environ, "TOOLDISC_CACHE_DIR": str(Path(tmp) / "cache"),
               "TOOLDISC_MAX_CATALOG_BYTES": str(max(p.stat().st_size for p in files.values()) + 1)}
        steps = repeats * (3 + len(files))
        done = 0
        for fmt, path in files.items():
            runs = []
            for _ in range(repeats):
                runs.append(_in_process(path, env))
                done += 1
                tick("from file", done, steps)
            out[f"in_process_{fmt}"] = _summary(runs, build_s, extra=("load_s", "build_s", "total_s"))
            out[f"in_process_{fmt}"]["catalog_hash_matches"] = all(r.get("catalog_hash") == catalog.hash for r in runs)
        discover = ["discover", QUERY, "--catalog", str(files["json"]), "--json"]
        cold, warm, validate = [], [], []
        for _ in range(repeats):
            cache = Path(env["TOOLDISC_CACHE_DIR"])
            for p in cache.glob("*"):
                p.unlink()
            cold.append(_run("tooldisc.cli", discover, env))
            warm.append(_run("tooldisc.cli", discover, env))
            validate.append(_run("tooldisc.cli", ["catalog", "validate", str(files["json"]), "--json"], env))
            done += 3
            tick("from file", done, steps)
        for name, runs in (("discover_cold", cold), ("discover_warm", warm), ("validate", validate)):
            failed = [r for r in runs if r["rc"] not in (0, 1)]
            if failed:
                raise RuntimeError(f"{name} on the {n}-tool file failed: {failed[0]['stderr']}")
            out[name] = _summary(runs, build_s)
        offers = {json.loads(r["stdout"])["offer_hash"] for r in cold + warm}
        out["same_offer_cold_and_warm"] = len(offers) == 1
        out["offer_hash"] = offers.pop() if len(offers) == 1 else None
    return out


def _summary(runs: list[dict[str, Any]], build_s: float, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    key = "total_s" if "total_s" in extra else "wall_s"
    figure = _median(runs, key)
    out: dict[str, Any] = {key: figure, "peak_mb": _median(runs, "peak_mb"),
                           "runs": [round(r[key], 4) for r in runs],
                           "ratio_to_in_memory_build": round(figure / build_s, 2) if figure and build_s > 0 else None}
    for k in extra:
        if k != key:
            out[k] = _median(runs, k)
    return out


def _in_process(path: Path, env: dict[str, str]) -> dict[str, Any]:
    """Load + validate + build in a child of its own; its timings, peak and catalog hash."""
    run = _run("tooldisc.evaluation.bench.from_file", [str(path)], env)
    if run["rc"] != 0:
        raise RuntimeError(f"loading {path.name} failed: {run['stderr']}")
    return {**json.loads(run["stdout"]), "peak_mb": run["peak_mb"]}


def _child(path: str) -> None:
    """``python -m tooldisc.evaluation.bench.from_file FILE``: time load_catalog and the build after the imports."""
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.pipeline import Discoverer

    config = load_config()
    t0 = time.perf_counter()
    catalog = load_catalog(path)
    t1 = time.perf_counter()
    Discoverer(catalog, config)
    t2 = time.perf_counter()
    print(json.dumps({"load_s": round(t1 - t0, 4), "build_s": round(t2 - t1, 4), "total_s": round(t2 - t0, 4),
                      "catalog_hash": catalog.hash}))


if __name__ == "__main__":
    _child(sys.argv[1])
