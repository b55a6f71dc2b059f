"""Benchmark: how many requests the interleaving verdict needs, against the A/B verdict.

Replays the shipped gold set (the queries with a primary tool) through ranker A (the shipped
default config) and ranker B (``configs/bm25.yaml``, a known, significant offline
difference), both at A's K, once per query. The user model (issue 29): the agent calls the
first relevant offered tool at rank r with probability ``p1 · decay^(r−1)`` (0.9 · 0.8^(r−1)),
else nothing. :mod:`tooldisc.canary.synthetic.power` turns each query into exact
per-request probabilities (B wins / A wins / tie under team draft; task success per
ranker) and runs the verdicts, every look judged with their own always-valid bounds:

* **A/A** (B = A): ``--runs`` seeded runs of the interleaving verdict up to the horizon;
  false ROLLBACK must be ≤ 1 %; PROMOTE is the right answer once enough requests are in.
* **B = bm25**: the simulator names a request budget *before* the runs (the requests at which
  the always-valid bound shows B worse with 95 % power, from the true probabilities); B must
  be shown worse (ROLLBACK) within it in ≥ 95 % of runs.
* **A/B on task success** (same rankers, same user model, same α: shown worse at 0.01), at a
  50/50 split (A/B's most efficient) and at 10 %: requests until ROLLBACK per seed, and the
  ratio interleaving / A/B with its spread over seeds (seed i of each paired).

    .venv/bin/python benchmarks/interleave_power.py [--runs 1000] [--p1 0.9 --decay 0.8] [--out result.json]

Runs 0…runs−1 use seeds 0…runs−1. One JSON document is printed (and written with --out).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tooldisc.canary.synthetic.power import (
    Gates,
    ab_run,
    click_curve,
    interleaving_run,
    outcome_probabilities,
    requests_for_power,
    success_probability,
    summary,
)

ROOT = Path(__file__).resolve().parent.parent


def rankings(config_b: str, k: int | None) -> tuple[list[tuple[tuple[str, ...], tuple[str, ...], frozenset[str], int]],
                                                     dict[str, str]]:
    """(A's offer, B's offer at A's K, the primary tools, K) per gold query with a primary tool."""
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.inputs import default_gold_path
    from tooldisc.gold.loader import load_gold

    cat = load_catalog(default_catalog_path())
    gold = load_gold(default_gold_path())
    a, b = Discoverer(cat), Discoverer(cat, load_config(config_b))
    ctx = a.default_context
    out = []
    for q in gold.queries:
        if not q.primary_expected_tools:
            continue  # a no-match query has nothing to call: a tie and a failure in every design
        oa = a.discover(q.query, ctx, k, q.history)
        ob = b.discover(q.query, ctx, oa.k, q.history)
        out.append((oa.names, ob.names, frozenset(q.primary_expected_tools), oa.k))
    return out, {"catalog": cat.hash, "gold": str(default_gold_path().name), "config_b": config_b}


def check_exact(rows: list, click_at: dict[int, np.ndarray], samples: int, queries: int) -> float:
    """Largest gap between the exact outcome probabilities and team_draft itself (Monte Carlo)."""
    from tooldisc.discovery.rank.interleave import seed_of, team_draft

    gap = 0.0
    for a, b, rel, k in random.Random(0).sample(rows, min(queries, len(rows))):
        click = click_at[k]
        exact = outcome_probabilities(a, b, rel, k, click)
        wb = wa = 0.0
        for i in range(samples):
            names, teams = team_draft(a, b, k, seed_of(f"check-{i}"))
            r = next((j for j, n in enumerate(names) if n in rel), None)
            if r is not None:
                wb, wa = (wb + click[r], wa) if teams[r] == "B" else (wb, wa + click[r])
        gap = max(gap, abs(exact[0] - wb / samples), abs(exact[1] - wa / samples))
    return gap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="seeded runs per scenario (seeds 0…runs−1)")
    ap.add_argument("--p1", type=float, default=0.9, help="chance the agent calls a relevant tool at rank 1")
    ap.add_argument("--decay", type=float, default=0.8, help="per-rank decay of that chance")
    ap.add_argument("--k", default=None, help="A's K (an integer or auto; default: the config's, 15)")
    ap.add_argument("--config-b", default=str(ROOT / "configs" / "bm25.yaml"), help="ranker B's config")
    ap.add_argument("--look", type=int, default=10, help="requests between looks (every look is judged)")
    ap.add_argument("--aa-horizon", type=int, default=30_000, help="interleaved requests of an A/A run")
    ap.add_argument("--check", type=int, default=2000, help="Monte Carlo draws per query for the exactness check")
    ap.add_argument("--interleaving-min", type=int, default=500,
                    help="interleaved requests before the preference is judged (gates.yaml: 500)")
    ap.add_argument("--interleaving-tuning", type=int, default=1000,
                    help="decisive requests the preference's boundary is tuned for (gates.yaml: 1000)")
    ap.add_argument("--ab-tuning", type=int, default=10_000,
                    help="requests the A/B boundary is tuned for (gates.yaml: 10000)")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    k = None if args.k is None else (args.k if args.k == "auto" else int(args.k))
    rows, inputs = rankings(args.config_b, k)
    click_at = {kk: click_curve(args.p1, args.decay, kk) for kk in {r[3] for r in rows}}
    gates = Gates(interleaving_min=args.interleaving_min, interleaving_tuning=args.interleaving_tuning,
                  ab_tuning=args.ab_tuning)
    t_rank = time.perf_counter() - t0

    # -- per-request probabilities (queries arrive uniformly) ----------------------------------
    pb, pa, sa, sb, aa_b = [], [], [], [], []
    hits = {"A": 0, "B": 0}
    mrr = {"A": 0.0, "B": 0.0}
    for a, b, rel, kk in rows:
        click = click_at[kk]
        w_b, w_a = outcome_probabilities(a, b, rel, kk, click)
        pb.append(w_b)
        pa.append(w_a)
        sa.append(success_probability(a, rel, click))
        sb.append(success_probability(b, rel, click))
        aa_b.append(outcome_probabilities(a, a, rel, kk, click)[0])
        for name, ranking in (("A", a), ("B", b)):
            r = next((i for i, n in enumerate(ranking) if n in rel), None)
            hits[name] += r is not None
            mrr[name] += 0.0 if r is None else 1 / (r + 1)
    n_q = len(rows)
    p_b, p_a = float(np.mean(pb)), float(np.mean(pa))
    s_a, s_b = float(np.mean(sa)), float(np.mean(sb))
    p_aa = float(np.mean(aa_b))
    gap = check_exact(rows, click_at, args.check, 12) if args.check else None

    # -- budgets, named before any run (95 % power, true probabilities) -------------------------
    dec = p_b + p_a
    p = p_b / dec
    delta = abs(2 * p - 1) / (2 * math.sqrt(p * (1 - p)))  # effect per unit sd (a decisive request)
    budget_il = requests_for_power(delta, dec, gates.interleaving_tuning, gates.worse_alpha, gates.ni_alpha,
                                   0.95, gates.interleaving_min)

    def ab_budget(share: float) -> int | None:
        sd = math.sqrt(s_a * (1 - s_a) / (1 - share) + s_b * (1 - s_b) / share)  # per request of the total
        floor = math.ceil(gates.ab_min_per_arm / min(share, 1 - share))
        return requests_for_power((s_a - s_b) / sd, 1.0, gates.ab_tuning, gates.worse_alpha, gates.ni_alpha,
                                  0.95, floor)

    budget_ab = {"50": ab_budget(0.5), "10": ab_budget(0.1)}
    aa_promote_budget = requests_for_power(gates.interleaving_margin, 2 * p_aa, gates.interleaving_tuning,
                                           gates.ni_alpha, gates.ni_alpha, 0.95, gates.interleaving_min)

    # -- runs -----------------------------------------------------------------------------------
    seeds = range(args.runs)
    t_runs = time.perf_counter()
    horizon_il = 4 * (budget_il or 10_000)
    il = [interleaving_run(p_b, p_a, s, horizon_il, args.look, gates) for s in seeds]
    aa = [interleaving_run(p_aa, p_aa, s, args.aa_horizon, args.look, gates, tag=1) for s in seeds]
    ab = {}
    for key, share in (("50", 0.5), ("10", 0.1)):
        horizon = 4 * (budget_ab[key] or 100_000)
        ab[key] = [ab_run(s_a, s_b, share, s, horizon, args.look, gates) for s in seeds]
    t_runs = time.perf_counter() - t_runs

    def rate(xs: list[bool]) -> float:
        return round(sum(xs) / len(xs), 4)

    il_need = [r.rollback_at for r in il]
    ratios = {}
    for key in ("50", "10"):
        ab_need = [r.rollback_at for r in ab[key]]
        pairs = [(x, y) for x, y in zip(il_need, ab_need, strict=True) if x is not None and y is not None]
        per_seed = np.array([x / y for x, y in pairs])
        med_il, med_ab = np.median([x for x, _ in pairs]), np.median([y for _, y in pairs])
        ratios[key] = {
            "ratio_of_medians": round(float(med_il / med_ab), 4),
            "ratio_of_means": round(float(np.mean([x for x, _ in pairs]) / np.mean([y for _, y in pairs])), 4),
            "per_seed": {q: round(float(v), 4) for q, v in zip(("p5", "p25", "median", "p75", "p95"),
                                                               np.percentile(per_seed, [5, 25, 50, 75, 95]),
                                                               strict=True)},
            "pairs": len(pairs),
        }
        if key == "10":  # both at 10 % of traffic: interleaved requests are a tenth of all requests
            ratios[key]["traffic_ratio_of_medians"] = round(float(med_il / 0.1 / med_ab), 4)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    result = {
        "benchmark": "interleave_power", "commit": commit,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "config": {"runs": args.runs, "seeds": f"0-{args.runs - 1}", "p1": args.p1, "decay": args.decay,
                   "k": args.k or "config (15)", "look": args.look, "aa_horizon": args.aa_horizon,
                   "gates": gates.__dict__, **inputs},
        "rankers": {"queries": n_q, "hit@K": {x: round(hits[x] / n_q, 4) for x in hits},
                    "MRR": {x: round(mrr[x] / n_q, 4) for x in mrr}},
        "per_request": {"interleaving": {"b_wins": round(p_b, 5), "a_wins": round(p_a, 5),
                                         "ties": round(1 - p_b - p_a, 5),
                                         "preference": round((p_b - p_a) / dec, 5)},
                        "a_a": {"b_wins": round(p_aa, 5), "a_wins": round(p_aa, 5)},
                        "task_success": {"A": round(s_a, 5), "B": round(s_b, 5)},
                        "exactness_check_max_gap": None if gap is None else round(gap, 4)},
        "a_a": {"runs": args.runs, "horizon": args.aa_horizon,
                "false_rollback_first_decision": rate([r.first == "ROLLBACK" for r in aa]),
                "false_rollback_any_look": rate([r.rollback_at is not None for r in aa]),
                "promote_by_horizon": rate([r.promote_at is not None for r in aa]),
                "promote_budget_95": aa_promote_budget,
                "promote_within_budget": rate([r.promote_at is not None and r.promote_at <= (aa_promote_budget or 0)
                                               for r in aa]),
                "requests_to_promote": summary([r.promote_at for r in aa])},
        "b_bm25": {
            "interleaving": {"budget": budget_il, "horizon": horizon_il,
                             "rollback_within_budget": rate([r.rollback_at is not None and r.rollback_at <= budget_il
                                                             for r in il]),
                             "promote_ever": rate([r.promote_at is not None for r in il]),
                             "requests_to_rollback": summary(il_need)},
            **{f"ab_{key}": {"budget": budget_ab[key],
                             "rollback_within_budget": rate([r.rollback_at is not None
                                                             and r.rollback_at <= (budget_ab[key] or 0)
                                                             for r in ab[key]]),
                             "promote_ever": rate([r.promote_at is not None for r in ab[key]]),
                             "requests_to_rollback": summary([r.rollback_at for r in ab[key]])}
               for key in ab},
        },
        "ratio_interleaving_to_ab": {"split_50": ratios["50"], "split_10": ratios["10"]},
        "seconds": {"rankings": round(t_rank, 2), "runs": round(t_runs, 2),
                    "wall": round(time.perf_counter() - t0, 2), "cpu": round(time.process_time() - cpu0, 2)},
    }
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    print(f"done in {result['seconds']['wall']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
