"""Time tooldisc.metrics against pytrec_eval on the same synthetic run; write one JSON.

Usage: python benchmarks/metrics_vs_pytrec.py [--queries 10000] [--depth 100]
       [--tools 1000] [--repeats 3] [--out /tmp/metrics_vs_pytrec.json]

Both sides compute recall@10, MRR@10, P@10 and nDCG@10 from data already in their
native input shape (judgments + ranked tuples for tooldisc; qrels + scored run dicts
for pytrec_eval, which needs one evaluator per relevance level). The best of
``--repeats`` runs is reported, and the aggregates are checked to agree.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from tooldisc.metrics import Judgment, aggregate, compute, parse_measures


def make_data(n_queries: int, depth: int, n_tools: int, seed: int) -> tuple[list[Judgment], dict[str, tuple[str, ...]]]:
    rng = np.random.default_rng(seed)
    names = np.array([f"tool_{i:05d}" for i in range(n_tools)])
    judgments: list[Judgment] = []
    run: dict[str, tuple[str, ...]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        ranked = names[rng.choice(n_tools, size=depth, replace=False)]
        pool = rng.choice(n_tools, size=6, replace=False)
        n_p = int(rng.integers(1, 4))
        n_a = int(rng.integers(0, 3))
        judgments.append(Judgment(qid, frozenset(names[pool[:n_p]].tolist()),
                                  frozenset(names[pool[n_p:n_p + n_a]].tolist())))
        run[qid] = tuple(ranked.tolist())
    return judgments, run


def to_pytrec(judgments: list[Judgment], run: dict[str, tuple[str, ...]], cut: int) -> tuple[dict, dict, dict]:
    qrels = {j.qid: {**{t: 1 for t in j.acceptable}, **{t: 2 for t in j.primary}} for j in judgments}
    full = {q: {t: float(len(r) - i) for i, t in enumerate(r)} for q, r in run.items()}
    cut_run = {q: {t: float(len(r) - i) for i, t in enumerate(r[:cut])} for q, r in run.items()}
    return qrels, full, cut_run


def best_of(repeats: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--tools", type=int, default=1_000)
    ap.add_argument("--cut", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("/tmp/metrics_vs_pytrec.json"))
    args = ap.parse_args(argv)

    import pytrec_eval

    k = args.cut
    judgments, run = make_data(args.queries, args.depth, args.tools, args.seed)
    qrels, full, cut_run = to_pytrec(judgments, run, k)
    measures = parse_measures(f"recall@{k},MRR@{k},P@{k},nDCG@{k}")

    def ours() -> dict:
        return aggregate(compute(measures, judgments, run), measures)

    def theirs() -> dict:
        lvl2 = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}"}, relevance_level=2)
        lvl1 = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{k}", f"ndcg_cut.{k}"}, relevance_level=1)
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=2)
        a, b, c = lvl2.evaluate(full), lvl1.evaluate(full), rr.evaluate(cut_run)
        n = len(a)
        return {
            f"recall@{k}": sum(v[f"recall_{k}"] for v in a.values()) / n,
            f"MRR@{k}": sum(v["recip_rank"] for v in c.values()) / n,
            f"P@{k}": sum(v[f"P_{k}"] for v in b.values()) / n,
            f"nDCG@{k}": sum(v[f"ndcg_cut_{k}"] for v in b.values()) / n,
        }

    t_ours, agg = best_of(args.repeats, ours)
    t_theirs, ref = best_of(args.repeats, theirs)
    tracemalloc.start()
    ours()
    peak_ours = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    ours_named = {str(m): v for m, v in agg.items()}  # type: ignore[union-attr]
    max_diff = max(abs(ours_named[name] - ref[name]) for name in ref)  # type: ignore[index]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent.parent, check=False).stdout.strip()
    except OSError:
        commit = ""
    result = {
        "benchmark": "metrics_vs_pytrec",
        "config": {"queries": args.queries, "depth": args.depth, "tools": args.tools, "cut": k,
                   "repeats": args.repeats, "seed": args.seed},
        "commit": commit,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "pytrec_eval": getattr(pytrec_eval, "__version__", "unknown"),
        "seconds": {"tooldisc": round(t_ours, 4), "pytrec_eval": round(t_theirs, 4)},
        "speedup": round(t_theirs / t_ours, 2),
        "peak_memory_bytes": {"tooldisc": peak_ours},
        "aggregates": {"tooldisc": ours_named, "pytrec_eval": ref},
        "max_abs_difference": max_diff,
        "note": "pytrec_eval timed from prebuilt qrels/run dicts: 3 evaluators (relevance levels 2 and 1; "
                "recip_rank on the run cut at K); tooldisc from judgments and ranked tuples, rows + aggregate.",
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"seconds": result["seconds"], "speedup": result["speedup"],
                      "max_abs_difference": max_diff, "out": str(args.out)}))
    return 0 if max_diff < 1e-9 else 1


if __name__ == "__main__":
    raise SystemExit(main())
