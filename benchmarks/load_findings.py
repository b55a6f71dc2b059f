"""What loading decides on every catalog at hand: findings, quarantines and hashes, as one JSON.

Run it before and after a change to the load path (parser, validation, normalisation,
hashing) and compare the two files: the same catalogs must give the same issues (level,
path, message), the same error for a catalog that does not load, the same quarantine of
each tool and the same definition and catalog hashes.

    python benchmarks/load_findings.py before.json          # on main
    python benchmarks/load_findings.py after.json           # on the branch
    python benchmarks/load_findings.py --compare before.json after.json

Catalogs: every catalog-like file the repository tracks (the shipped catalogs, the
scenario catalog, the CLI fixtures, the hostile corpus's ``catalogs/`` and ``schemas/``)
and the benchmark catalogs of ``../shared`` when it exists. The index cache is not
involved: this is the catalog alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def catalog_files() -> list[Path]:
    """Every catalog-like file of the repository (git's list), then ../shared's benchmark catalogs."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                            check=True).stdout.split()
    wanted = []
    for name in listed:
        p = Path(name)
        if p.suffix.lower() not in (".yaml", ".yml", ".json", ".jsonl"):
            continue
        if ("catalog" in p.name or p.parent.name in ("catalogs", "schemas")) and "schema.json" not in p.name:
            wanted.append(ROOT / p)
    shared = ROOT.parent / "shared" / "benchmarks"
    if shared.is_dir():
        wanted += sorted(shared.glob("*/catalog.json")) + sorted(shared.glob("*/tools.jsonl"))
    return wanted


def findings(path: Path) -> dict[str, Any]:
    """Issues, load error, quarantines and hashes of one file."""
    from tooldisc.discovery.catalog import build_catalog, validate_catalog_data
    from tooldisc.discovery.catalog.io import read_catalog_document
    from tooldisc.errors import ToolDiscError

    out: dict[str, Any] = {}
    side_effect = "none" if path.suffix == ".jsonl" else None
    try:
        doc, detected = read_catalog_document(path, side_effect=side_effect)
    except ToolDiscError as exc:
        return {"read_error": str(exc)}
    out["format"] = detected
    out["issues"] = [[i.level, i.path, i.message] for i in validate_catalog_data(doc)]
    try:
        catalog = build_catalog(doc, source=path.name)
    except ToolDiscError as exc:
        out["build_error"] = str(exc)
        return out
    out["catalog_hash"] = catalog.hash
    out["tools"] = [[t.name, t.definition_hash, t.quarantine] for t in catalog.tools]
    return out


def record(out: Path) -> None:
    result = {}
    for path in catalog_files():
        key = str(path.relative_to(ROOT.parent)) if path.is_relative_to(ROOT.parent) else str(path)
        key = key.split("/", 1)[1] if key.startswith(ROOT.name + "/") else key
        result[key] = findings(path)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False, sort_keys=True) + "\n", "utf-8")
    print(f"{len(result)} catalogs -> {out}")


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text("utf-8")), json.loads(after.read_text("utf-8"))
    bad = 0
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            bad += 1
            print(f"DIFFERS: {key}")
    print(f"{len(set(a) | set(b))} catalogs, {bad} differ")
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.out is None:
        parser.error("give an output file, or --compare BEFORE AFTER")
    record(args.out)


if __name__ == "__main__":
    main()
