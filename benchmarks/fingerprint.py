"""A fingerprint of tooldisc's observable behaviour, to prove a refactor changed nothing.

Usage:
    python benchmarks/fingerprint.py [--quick] [--spark] [--out FILE]
    python benchmarks/fingerprint.py [--quick] [--spark] --compare FILE

It records, as SHA-256 of scrubbed outputs (timings, temporary paths and versions removed):

- the offers (names, scores, confidence, offer hash) of the bench's synthetic queries at 180 and
  10,000 tools (and 100,000 without ``--quick``), built exactly as ``tooldisc bench`` builds them;
- ``tooldisc eval --k 15 --format json`` on the shipped sets and, when ``../shared`` is beside the
  repository, on the shared benchmarks' measuring files named by benchmarks/quality.py;
- ``benchmarks/quality.py --json`` (not with ``--quick``);
- the verdict JSON of every ``canary synth`` scenario of every profile, on DuckDB (and Spark with
  ``--spark``);
- a learned file (``tooldisc learn`` on the shipped gold set), byte for byte.

It finds the modules it needs by name anywhere under ``tooldisc``, so the same script runs before
and after modules move. Run it on both commits and ``--compare``: any differing key is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "benchmarks"
TOOLDISC = [str(Path(sys.executable).parent / "tooldisc")]
VOLATILE = re.compile(r"(^|_)(s|ms|seconds|elapsed|time|timings|duration|started|finished|generated|"
                      r"generated_at|created|created_at|version|versions|python|platform|git|host|"
                      r"environment|wall|cpu|rss|peak|path|file|files|out|db)($|[_/])")


def _find(attr: str) -> Any:
    """``attr`` from whichever tooldisc module defines it (modules may have moved)."""
    packages = ("discovery", "evaluation", "canary", "gold", "metrics", "reports", "agent", "cli")
    infos = []
    for sub in packages:
        package = importlib.import_module(f"tooldisc.{sub}")
        infos += list(pkgutil.walk_packages(package.__path__, f"tooldisc.{sub}."))
    for info in infos:
        if "spark" in info.name or "mcp" in info.name or info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # optional extras: the name is looked for elsewhere
            continue
        value = getattr(module, attr, None)
        if value is not None and getattr(value, "__module__", info.name) == info.name:
            return value
    raise LookupError(attr)


def _scrub(value: Any, tmp: str) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v, tmp) for k, v in value.items() if not VOLATILE.search(str(k).lower())}
    if isinstance(value, list):
        return [_scrub(v, tmp) for v in value]
    if isinstance(value, str):
        return value.replace(tmp, "<tmp>").replace(str(ROOT), "<root>")
    return value


def _digest(value: Any) -> str:
    text = value if isinstance(value, (bytes, str)) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode("utf-8")).hexdigest()


def _run(args: list[str], tmp: str, ok: tuple[int, ...] = (0,)) -> Any:
    proc = subprocess.run([*TOOLDISC, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "TOOLDISC_NO_CACHE": "1", "NO_COLOR": "1"})
    if proc.returncode not in ok:
        raise SystemExit(f"fingerprint: {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    try:
        out: Any = json.loads(proc.stdout)
    except json.JSONDecodeError:
        out = proc.stdout
    if proc.returncode == 2:  # a usage error fingerprints nothing: the call itself is wrong
        raise SystemExit(f"fingerprint: {' '.join(args)} exited 2: {proc.stderr.strip()[-400:]}")
    return {"exit": proc.returncode, "out": _scrub(out, tmp)}


def offers(sizes: list[int]) -> dict[str, str]:
    synthetic_catalog, synthetic_queries = _find("synthetic_catalog"), _find("synthetic_queries")
    load_inputs, options_type = _find("load_inputs"), _find("BenchOptions")
    discoverer = _find("Discoverer")
    out = {}
    for n in sizes:
        base, base_queries, _ = load_inputs(options_type())
        catalog = synthetic_catalog(base, n, 0)
        queries = synthetic_queries(catalog, base_queries, 200, 0, base_names=frozenset(t.name for t in base.tools))
        engine = discoverer(catalog)
        rows = []
        for q in queries:
            offer = engine.discover(q.query, None, 15, q.history)
            rows.append([offer.offer_hash, list(offer.names), [round(c.score, 12) for c in offer.candidates],
                         offer.k, offer.k_reason, str(offer.confidence)])
        out[f"offers@{n}"] = _digest(rows)
    return out


def evals(tmp: str) -> dict[str, str]:
    out = {"eval:default": _digest(_run(["eval", "--k", "15", "--format", "json"], tmp))}
    devops = ROOT / "gold" / "data" / "devops"
    out["eval:devops"] = _digest(_run(["eval", "--k", "15", "--catalog", str(devops / "catalog.yaml"), "--gold",
                                       str(devops / "gold.json"), "--format", "json"], tmp))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    quality = importlib.import_module("quality")
    for name, (catalog, gold) in quality.SETS.items():
        if catalog is None:
            continue
        if Path(catalog).exists() and Path(gold).exists():
            out[f"eval:{name}"] = _digest(_run(["eval", "--k", "15", "--catalog", str(catalog), "--gold", str(gold),
                                                "--format", "json"], tmp))
    return out


def quality_figures(tmp: str) -> dict[str, str]:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "quality.py"), "--json"], capture_output=True,
                          text=True, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"fingerprint: quality.py exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return {"quality": _digest(_scrub(json.loads(proc.stdout), tmp))}


def verdicts(tmp: str, engines: list[str]) -> dict[str, str]:
    scenarios = _scenarios()
    out = {}
    for profile, names in scenarios.items():
        for scenario in names:
            rows = "400" if profile == "shadow" else "3000"
            data = Path(tmp) / f"{profile}-{scenario}.jsonl"
            _run(["canary", "synth", "--profile", profile, "--scenario", scenario, "--events", rows, "--out", str(data)],
                 tmp)
            out[f"synth:{profile}:{scenario}"] = _digest(data.read_bytes())
            for engine in engines:
                args = ["canary", "verdict", "--profile", profile, "--events", str(data), "--format", "json",
                        "--engine", engine, "--experiment", _experiment(data)]
                out[f"verdict:{engine}:{profile}:{scenario}"] = _digest(_run(args, tmp, ok=(0, 10, 20)))
    return out


def _scenarios() -> dict[str, list[str]]:
    help_text = subprocess.run([*TOOLDISC, "canary", "synth", "--help"], capture_output=True, text=True,
                               env={**os.environ, "COLUMNS": "400", "NO_COLOR": "1"}).stdout
    text = " ".join(help_text.split())
    found = {}
    for profile in ("canary", "shadow", "interleaving"):
        match = re.search(rf"{profile}: ([a-z_, ]+?)\.", text)
        if match:
            found[profile] = [s.strip() for s in match.group(1).split(",") if s.strip()]
    return found


def _experiment(data: Path) -> str:
    with data.open() as fh:
        counts: dict[str, int] = {}
        for line in fh:
            try:
                name = json.loads(line).get("experiment")
            except (json.JSONDecodeError, AttributeError):
                continue
            if isinstance(name, str):
                counts[name] = counts.get(name, 0) + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else "none"


def learned(tmp: str) -> dict[str, str]:
    path = Path(tmp) / "learned.json"
    _run(["learn", "--from", str(ROOT / "gold" / "data" / "gold.json"), "--out", str(path)], tmp)
    return {"learned:default": _digest(path.read_bytes())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip 100k offers and quality.py")
    ap.add_argument("--spark", action="store_true", help="also the Spark verdicts")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fingerprint-") as tmp:
        result: dict[str, str] = {}
        result |= offers([180, 10_000] if args.quick else [180, 10_000, 100_000])
        result |= evals(tmp)
        if not args.quick:
            result |= quality_figures(tmp)
        result |= verdicts(tmp, ["duckdb", "spark"] if args.spark else ["duckdb"])
        result |= learned(tmp)
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.write_text(text, "utf-8")
    if args.compare:
        before = json.loads(args.compare.read_text("utf-8"))
        differ = sorted(k for k in before.keys() | result.keys() if before.get(k) != result.get(k))
        for key in differ:
            print(f"DIFFERS {key}: {before.get(key, '-')[:12]} → {result.get(key, '-')[:12]}")
        print(f"{len(result)} keys, {len(differ)} differ")
        raise SystemExit(1 if differ else 0)
    if not args.out:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
