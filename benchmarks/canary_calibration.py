"""Benchmark: how often the canary verdict is wrong, on seeded experiments with known truth.

Four scenarios of issue 11, 1,000 runs each, through the real gates
(:func:`tooldisc.canary.gates.judge`). Each run draws *sufficient statistics* directly:
per arm and per cell (channel × mode × mutation) the counts of requests, known and
successful tasks and tool executions, discovery misses and fallbacks (binomial and
multinomial draws), latency sums per cell (normal, by the central limit theorem) and a
latency histogram per arm at 0.1 ms resolution (multinomial), whose exact order
statistics feed the p95 comparison. A growing window adds fresh draws to the previous
look's counts and histogram, so the ten looks of scenario B are nested, as a CI job's
growing window is. A few full-row runs (synthetic events through the DuckDB engine and
``run_verdict``) confirm the path.

| scenario | runs | required |
|---|---|---|
| A/A, no difference, realistic volume (100,000 requests at 10%) | 1,000 | false ROLLBACK ≤ 1% |
| task success −2 points (= margin), 10 looks up to 500,000 at 10% | 1,000 | PROMOTE at any look ≤ 5% |
| no difference, 500,000 requests at 10% | 1,000 | PROMOTE ≥ 80% |
| −20 points in a 5% segment (−1 overall), 500,000 at 10% | 1,000 | not PROMOTE ≥ 95% |

    .venv/bin/python benchmarks/canary_calibration.py [--runs 1000] [--full-rows 3] [--out result.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tooldisc.canary.aggregate import RATE_FLAGS, ArmStats, Evidence, latency_levels
from tooldisc.canary.config import GateConfig
from tooldisc.canary.events import FALLBACK_REASONS
from tooldisc.canary.gates import judge
from tooldisc.canary.sequential import OrderStats, rank

ROOT = Path(__file__).resolve().parent.parent
CHANNEL = (("web", "api", "mobile"), (0.6, 0.3, 0.1))
MODE = (("autonomous", "supervised", "analyzer"), (0.6, 0.3, 0.1))
MUTATION = (("read", "write", "delete", "export", "execute", "unknown"),
            (0.70, 0.15, 0.03, 0.04, 0.03, 0.05))
BASE = {"task": 0.85, "task_known": 0.90, "exec": 0.95, "exec_known": 0.95,
        "discovery_miss": 0.02, "fallback": 0.01}
LAT_MEDIAN, LAT_SIGMA = 120.0, 0.5
BIN = 0.1  # ms
BINS = np.arange(1, 50_001) * BIN  # 0.1 .. 5,000 ms


def _latency_probs() -> np.ndarray:
    """P(latency rounds to each 0.1 ms bin) for the lognormal, mass beyond the ends folded in."""
    from scipy.special import ndtr

    edges = np.concatenate([[0.0], (BINS[:-1] + BINS[1:]) / 2, [np.inf]])
    with np.errstate(divide="ignore"):
        z = (np.log(edges) - math.log(LAT_MEDIAN)) / LAT_SIGMA
    cdf = ndtr(z)
    p = np.diff(cdf)
    return p / p.sum()


LAT_P = _latency_probs()
LAT_M1 = LAT_MEDIAN * math.exp(LAT_SIGMA ** 2 / 2)
LAT_M2 = LAT_MEDIAN ** 2 * math.exp(2 * LAT_SIGMA ** 2)
LAT_V1 = LAT_M2 - LAT_M1 ** 2
LAT_M4 = LAT_MEDIAN ** 4 * math.exp(8 * LAT_SIGMA ** 2)
LAT_M3 = LAT_MEDIAN ** 3 * math.exp(4.5 * LAT_SIGMA ** 2)
LAT_V2 = LAT_M4 - LAT_M2 ** 2
LAT_RHO = (LAT_M3 - LAT_M1 * LAT_M2) / math.sqrt(LAT_V1 * LAT_V2)
CELL_P = np.einsum("i,j,k->ijk", CHANNEL[1], MODE[1], MUTATION[1]).ravel()
N_CELLS = CELL_P.size
UNKNOWN_MUTATION = np.array([MUTATION[0][k % 6] == "unknown" for k in range(N_CELLS)])


class Window:
    """Cumulative sufficient statistics of one growing window (arm 0 control, 1 experiment)."""

    def __init__(self) -> None:
        shape = (2, N_CELLS)
        self.c = {k: np.zeros(shape, dtype=np.int64) for k in
                  ("n", "task_known", "task_ok", "exec_known", "exec_ok", "discovery_miss", "fallback")}
        self.lat_sum = np.zeros(shape)
        self.lat_sumsq = np.zeros(shape)
        self.hist = np.zeros((2, BINS.size), dtype=np.int64)

    def add(self, rng: np.random.Generator, requests: int, share: float, task_exp: np.ndarray) -> None:
        """Draw ``requests`` more requests; ``task_exp`` is the experiment's task rate per cell."""
        n_exp = rng.binomial(requests, share)
        for arm, n_arm in ((0, requests - n_exp), (1, n_exp)):
            cells = rng.multinomial(n_arm, CELL_P)
            task_p = task_exp if arm == 1 else np.full(N_CELLS, BASE["task"])
            known = rng.binomial(cells, BASE["task_known"])
            ek = rng.binomial(cells, BASE["exec_known"])
            self.c["n"][arm] += cells
            self.c["task_known"][arm] += known
            self.c["task_ok"][arm] += rng.binomial(known, task_p)
            self.c["exec_known"][arm] += ek
            self.c["exec_ok"][arm] += rng.binomial(ek, BASE["exec"])
            self.c["discovery_miss"][arm] += rng.binomial(cells, BASE["discovery_miss"])
            self.c["fallback"][arm] += rng.binomial(cells, BASE["fallback"])
            z1, z2 = rng.standard_normal(N_CELLS), rng.standard_normal(N_CELLS)
            self.lat_sum[arm] += cells * LAT_M1 + np.sqrt(cells * LAT_V1) * z1
            self.lat_sumsq[arm] += cells * LAT_M2 + np.sqrt(cells * LAT_V2) * (
                LAT_RHO * z1 + math.sqrt(1 - LAT_RHO ** 2) * z2)
            self.hist[arm] += rng.multinomial(n_arm, LAT_P)

    def _stats(self, arm: int, mask: np.ndarray, order: OrderStats | None) -> ArmStats:
        c = {k: int(v[arm][mask].sum()) for k, v in self.c.items()}
        flags = dict.fromkeys(RATE_FLAGS, 0) | {"discovery_miss": c["discovery_miss"],
                                                "fallback": c["fallback"]}
        return ArmStats(requests=c["n"], flags=flags, task_known=c["task_known"],
                        task_successes=c["task_ok"], execution_known=c["exec_known"],
                        execution_successes=c["exec_ok"],
                        fallback_reasons=dict.fromkeys(FALLBACK_REASONS, 0), latency={},
                        schema_tokens_mean=0.0, final_tool_count_mean=0.0, k_mean=0.0,
                        latency_sum=float(self.lat_sum[arm][mask].sum()),
                        latency_sumsq=float(self.lat_sumsq[arm][mask].sum()), latency_order=order)

    def evidence(self, percent: float, levels: tuple[int, ...]) -> Evidence:
        everything = np.ones(N_CELLS, dtype=bool)
        arms = {}
        for arm, name in ((0, "control"), (1, "experiment")):
            n = int(self.hist[arm].sum())
            cum = np.cumsum(self.hist[arm])
            values = tuple(float(BINS[np.searchsorted(cum, rank(lv, n))]) for lv in levels)
            arms[name] = self._stats(arm, everything, OrderStats(n, levels, values))
        segments: dict[str, dict[str, dict[str, ArmStats]]] = {}
        idx = np.arange(N_CELLS)
        for seg, (names, _), axis in (("channel", CHANNEL, 0), ("mode", MODE, 1),
                                      ("mutation", MUTATION, 2)):
            coord = np.unravel_index(idx, (3, 3, 6))[axis]
            segments[seg] = {}
            for j, value in enumerate(names):
                mask = coord == j
                segments[seg][value] = {name: self._stats(arm, mask, None)
                                        for arm, name in ((0, "control"), (1, "experiment"))
                                        if self.c["n"][arm][mask].sum() > 0}
        return Evidence(experiment="calibration", since=None, until=None, arms=arms,
                        percents=(percent,), current_percent=percent, quarantined=0,
                        quarantined_security=0, segments=segments, span_hours=24.0)


def run_scenario(name: str, runs: int, seed: int, cfg: GateConfig) -> dict[str, object]:
    levels = latency_levels(round(cfg.latency_quantile * 10_000))
    verdicts: dict[str, int] = {}
    promote_any = ni_any = 0
    percent, share = 10.0, 0.10
    for i in range(runs):
        rng = np.random.default_rng([seed, i])
        task_exp = np.full(N_CELLS, BASE["task"])
        looks, total = 1, 500_000
        if name == "aa":
            total = 100_000
        elif name == "margin":
            task_exp = task_exp - 0.02
            looks = 10
        elif name == "segment":
            task_exp = np.where(UNKNOWN_MUTATION, BASE["task"] - 0.20, task_exp)
        w = Window()
        promoted = ni = False
        for _ in range(looks):
            w.add(rng, total // looks, share, task_exp)
            verdict = judge(w.evidence(percent, levels), cfg)
            v = verdict.verdict
            promoted |= v == "PROMOTE"
            ni |= any(m.name == "task_success" and m.outcome == "non_inferior"
                      for m in verdict.comparisons)
        verdicts[v] = verdicts.get(v, 0) + 1
        promote_any += promoted
        ni_any += ni
    out: dict[str, object] = {"runs": runs, "final_verdicts": dict(sorted(verdicts.items())),
                              "promote_at_any_look": promote_any,
                              "task_success_non_inferior_at_any_look": ni_any}
    return out


def full_row_runs(n_runs: int) -> dict[str, object]:
    """Synthetic events through the DuckDB engine and the real verdict (a few seeds)."""
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.synthetic.events import synthesize
    from tooldisc.canary.verdict import run_verdict

    out: dict[str, object] = {}
    plan = {"aa": ("healthy", 100_000, 1), "margin": ("margin_regression", 500_000, 10),
            "no_difference": ("healthy", 500_000, 1), "segment": ("segment_regression", 500_000, 1)}
    with tempfile.TemporaryDirectory() as tmp:
        for key, (scenario, events, looks) in plan.items():
            runs = []
            for seed in range(n_runs):
                path = os.path.join(tmp, f"{key}-{seed}.parquet")
                synthesize(path, events, scenario, percent=10, seed=1000 + seed)
                seen = []
                for k in range(1, looks + 1):
                    until = None
                    if looks > 1:  # synthetic events span 24 hours from 2025-01-01
                        until = "2025-01-02T00:00:00Z" if k == looks else _hour(24 * k / looks)
                    v, _ = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=path, until=until)
                    seen.append(v.verdict)
                runs.append(seen)
            out[key] = runs
    return out


def _hour(h: float) -> str:
    total = round(h * 3600)
    return f"2025-01-01T{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}Z"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--full-rows", type=int, default=3, help="full-row runs per scenario (0: none)")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tooldisc-canary-calibration.json"))
    args = ap.parse_args()
    cfg = GateConfig()
    t0 = time.perf_counter()
    results = {}
    for name in ("aa", "margin", "no_difference", "segment"):
        t = time.perf_counter()
        results[name] = run_scenario(name, args.runs, args.seed, cfg)
        results[name]["seconds"] = round(time.perf_counter() - t, 1)
        print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    n = args.runs
    aa, mg, nd, sg = (results[k] for k in ("aa", "margin", "no_difference", "segment"))

    def share(d: dict[str, object], key: str) -> float:
        return round(d["final_verdicts"].get(key, 0) / n, 4)  # type: ignore[union-attr]

    table = [
        {"scenario": "A/A, 100,000 requests at 10%", "measure": "false ROLLBACK",
         "value": share(aa, "ROLLBACK"), "required": "<= 0.01",
         "ok": share(aa, "ROLLBACK") <= 0.01, "also": {"false HOLD": share(aa, "HOLD")}},
        {"scenario": "task success -2 points (= margin), 10 looks to 500,000 at 10%",
         "measure": "PROMOTE at any look", "value": round(mg["promote_at_any_look"] / n, 4),
         "required": "<= 0.05", "ok": mg["promote_at_any_look"] / n <= 0.05},
        {"scenario": "no difference, 500,000 requests at 10%", "measure": "PROMOTE",
         "value": share(nd, "PROMOTE"), "required": ">= 0.80", "ok": share(nd, "PROMOTE") >= 0.80},
        {"scenario": "-20 points in a 5% segment (-1 overall), 500,000 at 10%",
         "measure": "not PROMOTE", "value": round(1 - share(sg, "PROMOTE"), 4),
         "required": ">= 0.95", "ok": 1 - share(sg, "PROMOTE") >= 0.95},
    ]
    full = full_row_runs(args.full_rows) if args.full_rows else {}
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {"benchmark": "canary_calibration", "commit": commit,
              "config": {"runs": n, "seed": args.seed, "gates": "shipped defaults"},
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "loadavg_1m": round(os.getloadavg()[0], 2)},
              "table": table, "scenarios": results, "full_row_runs": full,
              "seconds": round(time.perf_counter() - t0, 1)}
    Path(args.out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2, sort_keys=True))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
