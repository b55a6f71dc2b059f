"""Builders for hand-written evidence (numbers typed in the tests, not derived)."""

from __future__ import annotations

import math

from tooldisc.canary.aggregate import RATE_FLAGS, ArmStats, Evidence, latency_levels
from tooldisc.canary.events import FALLBACK_REASONS
from tooldisc.canary.sequential import OrderStats, rank

EXPERIMENT = "indexed-retrieval-v1"


def lognormal_order(n: int, median: float = 120.0, sigma: float = 0.5, scale: float = 1.0) -> OrderStats:
    """Exact order statistics of the ideal sample (quantile function at rank/n) of a lognormal."""
    from scipy.special import ndtri

    levels = latency_levels(9500)
    values = []
    for lv in levels:
        r = rank(lv, n)
        q = min(max((r - 0.5) / n, 1e-9), 1 - 1e-9)
        values.append(round(scale * median * math.exp(sigma * float(ndtri(q))), 3))
    return OrderStats(n, levels, tuple(values))


def arm(requests: int, *, task_rate: float = 0.85, exec_rate: float = 0.95, fallback: int | None = None,
        discovery_miss: int | None = None, latency_scale: float = 1.0, **flags: int) -> ArmStats:
    known = requests
    fb = round(requests * 0.01) if fallback is None else fallback
    dm = round(requests * 0.02) if discovery_miss is None else discovery_miss
    order = lognormal_order(requests, scale=latency_scale)
    return ArmStats(
        requests=requests,
        flags={f: flags.get(f, 0) for f in RATE_FLAGS} | {"fallback": fb, "discovery_miss": dm},
        task_known=known,
        task_successes=round(known * task_rate),
        execution_known=known,
        execution_successes=round(known * exec_rate),
        fallback_reasons=dict.fromkeys(FALLBACK_REASONS, 0),
        latency={"p50": order.values[order.levels.index(5000)],
                 "p95": order.values[order.levels.index(9500)],
                 "p99": order.values[order.levels.index(9900)]},
        schema_tokens_mean=2700.0,
        final_tool_count_mean=15.0,
        k_mean=15.0,
        latency_sum=requests * 120.0 * latency_scale * math.exp(0.125),
        latency_sumsq=requests * (120.0 * latency_scale) ** 2 * math.exp(0.5),
        latency_order=order,
    )


def evidence(control: ArmStats | None, experiment: ArmStats | None, *, percent: float | None = 10.0,
             percents: tuple[float, ...] | None = None, quarantined: int = 0,
             quarantined_security: int = 0, quarantined_security_unknown: int = 0,
             segments: dict | None = None) -> Evidence:
    arms = {k: v for k, v in (("control", control), ("experiment", experiment)) if v is not None}
    return Evidence(
        experiment=EXPERIMENT, since=None, until=None, arms=arms,
        percents=percents if percents is not None else ((percent,) if percent is not None and arms else ()),
        current_percent=percent if arms else None, quarantined=quarantined,
        quarantined_security=quarantined_security,
        quarantine_reasons={"arm: must be one of control, experiment": quarantined} if quarantined else {},
        quarantined_security_unknown=quarantined_security_unknown,
        segments=segments or {},
        span_hours=24.0,
    )


def healthy(n_control: int = 450_000, n_experiment: int = 50_000) -> Evidence:
    """Large enough that every guarded metric is shown non-inferior (PROMOTE)."""
    return evidence(arm(n_control), arm(n_experiment))
