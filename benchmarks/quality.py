"""Quality of one ranker config on every gold set at hand, in one table.

Usage: python benchmarks/quality.py [CONFIG.yaml] [--k 10|auto] [--sets default,devops,hesabix,bfcl,metatool]
       python benchmarks/quality.py --learn [--sets metatool,sealtools,hesabix] [--json]

``--learn`` learns a file from each set's training split only and reports every measure with
and without it (benchmarks/learn_quality.py says exactly which split feeds which figure).

The shipped default and devops sets are where configs are tuned; the shared benchmarks (read from
../shared when present) are only ever measured, never fitted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "benchmarks"
SETS = {
    "default": (None, None),  # shipped with the package: SHIPPED
    "devops": (None, None),
    "hesabix": (SHARED / "hesabix/catalog.json", SHARED / "hesabix/gold.dev.json"),
    "bfcl": (SHARED / "bfcl/tools.jsonl", SHARED / "bfcl/queries.jsonl"),
    "metatool": (SHARED / "metatool/tools.jsonl", SHARED / "metatool/queries_sample2k.jsonl"),
}
SHIPPED = ("default", "devops")  # the order of catalog_io.shipped_datasets()
MEASURES = ("hit@10", "recall@5", "MRR", "nDCG@10", "no_match_success", "false_abstention", "forbidden@10", "avg_k")


def main() -> None:
    if "--learn" in sys.argv[1:]:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from learn_quality import main as learn_main

        learn_main(sys.argv[1:])
        return
    from tooldisc.discovery.catalog.io import load_catalog, shipped_datasets
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.run import run_discovery, score_run
    from tooldisc.gold.loader import load_gold

    ap = argparse.ArgumentParser()
    ap.add_argument("config", nargs="?")
    ap.add_argument("--k", default="10")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.config)
    k = "auto" if args.k == "auto" else int(args.k)
    out = {}
    for name in args.sets.split(","):
        cat_path, gold_path = SETS[name]
        if name in SHIPPED:
            cat_path, gold_path = shipped_datasets()[SHIPPED.index(name)]
        if not Path(cat_path).exists():
            continue
        catalog = load_catalog(cat_path)
        gold = load_gold(gold_path)
        t0 = time.perf_counter()
        engine = Discoverer(catalog, cfg)
        build = time.perf_counter() - t0
        result = run_discovery(engine, gold, default_context(catalog), k)
        scores = score_run(result, MEASURES, depth=None)
        row = {str(m): round(v, 4) for m, v in scores.totals.items()}
        row["ms/query"] = round(sum(q.latency_ms for q in result.queries) / len(result.queries), 3)
        row["build_s"] = round(build, 3)
        out[name] = row
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        return
    cols = [*MEASURES, "ms/query"]
    print(f"{'set':9}" + "".join(f"{c[:14]:>15}" for c in cols))
    for name, row in out.items():
        print(f"{name:9}" + "".join(f"{row.get(c, float('nan')):>15}" for c in cols))


if __name__ == "__main__":
    main()
