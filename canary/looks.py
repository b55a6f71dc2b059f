"""The sequential view: every guarded metric's always-valid interval at each hourly look.

A CI job looks at a growing window again and again; the confidence sequences the gates
use (:mod:`tooldisc.canary.sequential`) stay valid at every look, so the page can show
how each interval narrowed hour by hour and when it crossed the margin (non-inferior
from then on) or zero. The counts per arm and hour come from the verdict's own engine
pass (:class:`tooldisc.canary.engine.LookSpec`), so this costs no second scan; a look is
the window up to the end of an hour.

Rates are the gates' Agresti–Caffo intervals exactly (the last look is the whole window,
so it equals the forest plot's row). Latency's quantile bounds are read from a histogram
whose bins span at most 1.6 % of their value (:func:`tooldisc.canary.engine.log_bin`),
each bound widened to its bin's edge — still always valid, at most a bin wider than the
gate's exact order statistics.
"""

from __future__ import annotations

import bisect
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from tooldisc.canary.aggregate import Evidence
from tooldisc.canary.comparisons import GUARDED, latency_interval, rate_interval
from tooldisc.canary.config import GateConfig
from tooldisc.canary.engine import bin_edges
from tooldisc.canary.sequential import BASIS, Mixture, quantile_radius, rank

MAX_LOOKS = 168  # a week of hourly looks; a longer window is shown every k hours (the last kept)
# (successes, units) per guarded rate, as the engine's look measures name them
_RATE_COUNTS = {"task_success": ("task_ok", "task_known"),
                "tool_execution_success": ("exec_ok", "exec_known"),
                "discovery_miss": ("discovery_miss", "requests"),
                "fallback": ("fallback", "requests")}


class _Histogram:
    """A cumulative latency histogram of one arm (bins in thousandths of a ms)."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def add(self, bins: tuple[tuple[int, int], ...]) -> None:
        for b, n in bins:
            self.counts[b] = self.counts.get(b, 0) + n

    def ranks(self) -> tuple[list[int], list[int]]:
        keys = sorted(self.counts)
        cum, total = [], 0
        for k in keys:
            total += self.counts[k]
            cum.append(total)
        return keys, cum


def _bin_of_rank(keys: list[int], cum: list[int], r: int) -> int:
    return keys[bisect.bisect_left(cum, r)]


def _quantile(h: _Histogram, p: float, b: Mixture, alpha: float) -> tuple[float, float, float] | None:
    """(estimate, lower, upper) of the p-quantile in ms: the nearest-rank bin's midpoint, and
    the confidence-sequence ranks' bins widened to their outer edges."""
    keys, cum = h.ranks()
    if not cum:
        return None
    n = cum[-1]
    lo_e, hi_e = bin_edges(_bin_of_rank(keys, cum, rank(round(p * BASIS), n)))
    u = quantile_radius(p, n, b, alpha)
    r_low, r_up = math.ceil(n * (p - u)), math.floor(n * (p + u)) + 1
    low = bin_edges(_bin_of_rank(keys, cum, r_low))[0] / 1000 if r_low >= 1 else 0.0
    up = bin_edges(_bin_of_rank(keys, cum, r_up))[1] / 1000 if r_up <= n else math.inf
    return (lo_e + hi_e) / 2000, low, up


def _crossed(iv: dict[str, Any]) -> tuple[bool, bool]:
    """(harm-side end within the margin, favourable end beyond no-difference on the harm side)."""
    zero = 1.0 if iv["kind"] == "ratio" else 0.0
    if iv["worse"] == "lower":
        return iv["low"] > iv["limit"], iv["high"] < zero
    return iv["high"] < iv["limit"], iv["low"] > zero


def sequential_view(ev: Evidence, cfg: GateConfig) -> dict[str, Any]:
    """Looks (end of each hour with both arms at the data gate's minimum) and per guarded
    metric its interval at each look, with the first look where it crossed the margin and zero."""
    if not ev.steps:
        return {}
    b = Mixture.tuned(cfg.sequential_tuning_requests, cfg.non_inferiority_alpha)
    alpha = cfg.non_inferiority_alpha
    p = cfg.latency_quantile
    step_h = ev.step_us / 3_600_000_000
    by_step: dict[int, list[Any]] = {}
    for s in ev.steps:
        by_step.setdefault(s.step, []).append(s)
    first, last = min(by_step), max(by_step)
    counts: dict[str, dict[str, int]] = {"control": {}, "experiment": {}}
    hists = {"control": _Histogram(), "experiment": _Histogram()}
    looks: list[dict[str, Any]] = []
    series: dict[str, list[dict[str, Any] | None]] = {g.name: [] for g in GUARDED}
    for step in range(first, last + 1):
        for s in by_step.get(step, []):
            if s.arm not in counts:
                continue
            for k, v in s.counts.items():
                counts[s.arm][k] = counts[s.arm].get(k, 0) + v
            hists[s.arm].add(s.latency_bins)
        e, c = counts["experiment"], counts["control"]
        if min(e.get("requests", 0), c.get("requests", 0)) < cfg.min_requests_per_arm:
            continue
        end = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=(step + 1) * ev.step_us)
        looks.append({"at": end.isoformat().replace("+00:00", "Z"),
                      "hours": round((step - first + 1) * step_h, 3),
                      "requests": {"control": c["requests"], "experiment": e["requests"]}})
        for g in GUARDED:
            margin = cfg.margins[g.name]
            iv: dict[str, Any] | None = None
            if g.kind == "rate":
                x, units = _RATE_COUNTS[g.name]
                iv = rate_interval(g, e.get(x, 0), e.get(units, 0), c.get(x, 0), c.get(units, 0), margin, b, alpha)
            else:
                qe, qc = _quantile(hists["experiment"], p, b, alpha / 2), _quantile(hists["control"], p, b, alpha / 2)
                if qe is not None and qc is not None:
                    iv = latency_interval(qe[0], qc[0], qe[1], qe[2], qc[1], qc[2], margin, alpha)
            series[g.name].append(iv)
    every = 1 if len(looks) <= MAX_LOOKS else math.ceil(len(looks) / MAX_LOOKS)
    keep = {i for i in range(len(looks)) if (len(looks) - 1 - i) % every == 0}
    metrics: dict[str, Any] = {}
    for g in GUARDED:
        points = series[g.name]
        known = [iv for iv in points if iv is not None and None not in (iv["low"], iv["high"])]
        if not known:
            continue
        out: dict[str, Any] = {"kind": known[0]["kind"], "worse": known[0]["worse"],
                               "non_inferior_from": None, "beyond_zero_from": None, "intervals": []}
        for i, iv in enumerate(points):
            ok = iv is not None and None not in (iv["low"], iv["high"])
            if ok:
                within, beyond = _crossed(iv)
                for key, hit in (("non_inferior_from", within), ("beyond_zero_from", beyond)):
                    if hit and out[key] is None:
                        out[key] = looks[i]["hours"]
            if i in keep:
                out["intervals"].append(
                    {k: iv[k] for k in ("estimate", "low", "high", "limit")} if ok and iv is not None else None)
        metrics[g.name] = out
    return {"step_hours": round(step_h * every, 3), "alpha": alpha,
            "min_requests_per_arm": cfg.min_requests_per_arm,
            "looks": [look for i, look in enumerate(looks) if i in keep], "metrics": metrics}
