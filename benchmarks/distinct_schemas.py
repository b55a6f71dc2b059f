"""A copy of a JSON catalog in which every tool has a schema of its own.

The bench's synthetic catalogs repeat their base tools' schemas (180 distinct among 100,000
tools), which the loader checks, hashes and keeps once each. A catalog gathered from many
servers has mostly distinct schemas: this writes one from any JSON catalog by adding one
optional string property, named after the tool's position, to each tool's ``parameters``
(a tool without them gets an object schema holding only that property). Everything else is
kept, so offers on the copy differ only where that extra property's name matters.

    python benchmarks/distinct_schemas.py distinct.json                  # the bench's 100,000 tools
    python benchmarks/distinct_schemas.py distinct.json --catalog FILE   # any JSON catalog
    TOOLDISC_MAX_CATALOG_BYTES=999999999 /usr/bin/time -v tooldisc discover "list unpaid invoices" \\
        --catalog distinct.json --no-cache
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path


def distinct(doc: dict) -> dict:
    """``doc`` with one more property in each tool's ``parameters`` (a new object; ``doc`` is kept)."""
    tools = []
    for i, tool in enumerate(doc["tools"]):
        params = tool.get("parameters") or {"type": "object"}
        properties = {**params.get("properties", {}), f"p{i}": {"type": "string"}}
        tools.append({**tool, "parameters": {**params, "properties": properties}})
    return {**doc, "tools": tools}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path, help="where to write the copy")
    parser.add_argument("--catalog", type=Path, help="a JSON catalog (tooldisc format); default: the bench's "
                                                     "synthetic catalog of --tools tools")
    parser.add_argument("--tools", type=int, default=100_000, help="the bench's catalog size (default 100000)")
    args = parser.parse_args()
    if args.catalog is not None:
        doc = json.loads(args.catalog.read_text("utf-8"))
    else:
        from tooldisc.discovery.catalog import catalog_to_dict
        from tooldisc.discovery.catalog.io import load_catalog
        from tooldisc.evaluation.bench.synthetic import synthetic_catalog

        base = load_catalog(Path(__file__).resolve().parent.parent / "gold" / "data" / "catalog.yaml")
        doc = catalog_to_dict(synthetic_catalog(base, args.tools, 0))
    fd, tmp = tempfile.mkstemp(dir=args.target.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(distinct(doc), fh, ensure_ascii=False)
    os.replace(tmp, args.target)


if __name__ == "__main__":
    main()
