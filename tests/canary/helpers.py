"""Builders for hand-written evidence (numbers typed in the tests, not derived)."""

from __future__ import annotations

from tooldisc.canary.aggregate import RATE_FLAGS, ArmStats, Evidence
from tooldisc.canary.events import FALLBACK_REASONS

EXPERIMENT = "indexed-retrieval-v1"


def arm(requests: int, *, task_rate: float = 0.85, fallback: int = 0, p95: float = 250.0,
        p99: float = 400.0, **flags: int) -> ArmStats:
    known = requests
    return ArmStats(
        requests=requests,
        flags={f: flags.get(f, 0) for f in RATE_FLAGS} | {"fallback": fallback},
        task_known=known,
        task_successes=round(known * task_rate),
        execution_known=known,
        execution_successes=round(known * 0.95),
        fallback_reasons=dict.fromkeys(FALLBACK_REASONS, 0),
        latency={"p50": 120.0, "p95": p95, "p99": p99},
        schema_tokens_mean=2700.0,
        final_tool_count_mean=15.0,
        k_mean=15.0,
    )


def evidence(control: ArmStats | None, experiment: ArmStats | None, *, percent: float | None = 10.0,
             percents: tuple[float, ...] | None = None, quarantined: int = 0,
             quarantined_security: int = 0) -> Evidence:
    arms = {k: v for k, v in (("control", control), ("experiment", experiment)) if v is not None}
    return Evidence(
        experiment=EXPERIMENT, since=None, until=None, arms=arms,
        percents=percents if percents is not None else ((percent,) if percent is not None and arms else ()),
        current_percent=percent if arms else None, quarantined=quarantined,
        quarantined_security=quarantined_security,
        quarantine_reasons={"arm: must be one of control, experiment": quarantined} if quarantined else {},
    )


def healthy(n_control: int = 9000, n_experiment: int = 1000) -> Evidence:
    return evidence(arm(n_control), arm(n_experiment))
