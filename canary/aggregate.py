"""Per-arm and per-segment evidence for one experiment and window, from an engine.

The default profile's aggregation as data (:data:`MEASURES`, :data:`QUARANTINE_MEASURES`,
:func:`latency_levels`), the query an engine answers, and :func:`build_evidence`, which
adds the engine's cells up into arms and segments. Nothing here touches rows: an
:class:`~tooldisc.canary.engine.Engine` hands back aggregates only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tooldisc.canary.conditions import Eq, IsNull, IsTrue, all_of, any_of
from tooldisc.canary.engine import (
    AggregateQuery,
    AggregateResult,
    Duplicates,
    Engine,
    LookSpec,
    Measure,
    QuantileSpec,
    merge,
)
from tooldisc.canary.events import EVENT_SCHEMA, FALLBACK_REASONS, SECURITY_FLAGS
from tooldisc.canary.sequential import OrderStats

RATE_FLAGS = (
    "index_hit",
    "fallback",
    "retrieval_miss",
    "discovery_miss",
    "schema_miss",
    "authorization_failure",
    "unauthorized_candidate",
    "tenant_leak",
    "permission_violation",
    "kill_switch",
)
REPORTED_LEVELS = (5000, 9500, 9900)  # p50, p95, p99 in every report

MEASURES: tuple[Measure, ...] = (
    Measure("requests", "count"),
    *(Measure(f, "count_if", where=IsTrue(f)) for f in RATE_FLAGS),
    Measure("task_known", "count_nonnull", "task_success"),
    Measure("task_ok", "count_if", where=IsTrue("task_success")),
    Measure("exec_known", "count_nonnull", "tool_execution_success"),
    Measure("exec_ok", "count_if", where=IsTrue("tool_execution_success")),
    *(Measure(f"fr_{r}", "count_if", where=all_of(IsTrue("fallback"), Eq("fallback_reason", r)))
      for r in FALLBACK_REASONS),
    Measure("latency_sum", "sum", "latency_ms"),
    Measure("latency_sumsq", "sum_sq", "latency_ms"),
    Measure("tokens", "sum", "schema_tokens"),
    Measure("final", "sum", "final_tool_count"),
    Measure("k_sum", "sum", "k"),
    Measure("pct_min", "min", "percent"),
    Measure("pct_max", "max", "percent"),
    Measure("last_pct", "last", "percent", order_by="ts"),
    Measure("first_ts", "min", "ts"),
    Measure("last_ts", "max", "ts"),
)
# What each hourly look needs (the guarded rates' counts; latency from the histogram)
LOOK_MEASURES: tuple[Measure, ...] = tuple(
    m for m in MEASURES if m.name in ("requests", "task_known", "task_ok", "exec_known", "exec_ok",
                                      "discovery_miss", "fallback"))
QUARANTINE_MEASURES: tuple[Measure, ...] = (
    Measure("q_security", "count_if", where=any_of(*(IsTrue(f) for f in SECURITY_FLAGS))),
    Measure("q_security_unknown", "count_if", where=any_of(*(IsNull(f) for f in SECURITY_FLAGS))),
)
_OPS = {m.name: m.op for m in MEASURES}


def latency_levels(p_bp: int) -> tuple[int, ...]:
    """Order-statistic levels (basis points) fetched for the latency quantile ``p_bp``.

    Fine steps of 0.1 point within 1.5 points of the quantile, where confidence bounds
    of a large window fall; coarser steps further out, where small windows' bounds fall
    (a bound between levels is taken at the next level outward, which only widens it).
    """
    fine = range(p_bp - 150, p_bp + 151, 10)
    coarse = (*range(p_bp - 1000, p_bp + 1001, 100), 0, *REPORTED_LEVELS, 10_000)
    return tuple(sorted({lv for lv in (*fine, *coarse) if 0 <= lv <= 10_000}))


@dataclass(frozen=True)
class ArmStats:
    """Aggregates of one arm (or one arm within a segment); counts are exact."""

    requests: int
    flags: dict[str, int]
    task_known: int
    task_successes: int
    execution_known: int
    execution_successes: int
    fallback_reasons: dict[str, int]
    latency: dict[str, float]
    schema_tokens_mean: float
    final_tool_count_mean: float
    k_mean: float
    latency_sum: float = 0.0
    latency_sumsq: float = 0.0
    latency_order: OrderStats | None = None


@dataclass(frozen=True)
class StepCounts:
    """One arm's valid rows in one step of the window (an hour): the look measures and the
    latency histogram (``(bin, rows)`` ascending; :func:`tooldisc.canary.engine.log_bin`)."""

    step: int
    arm: str
    counts: dict[str, int]
    latency_bins: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Evidence:
    """Everything the gates judge, for one experiment and window."""

    experiment: str
    since: str | None
    until: str | None
    arms: dict[str, ArmStats]
    percents: tuple[float, ...]  # lowest and highest percent seen (one value if constant)
    current_percent: float | None
    quarantined: int
    quarantined_security: int
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    quarantined_security_unknown: int = 0
    segments: dict[str, dict[str, dict[str, ArmStats]]] = field(default_factory=dict)
    duplicates: Duplicates = field(default_factory=Duplicates)
    span_hours: float | None = None
    steps: tuple[StepCounts, ...] = ()  # per arm and hour, ascending (the sequential view)
    step_us: int = 3_600_000_000

    @property
    def rows(self) -> int:
        return sum(a.requests for a in self.arms.values()) + self.quarantined


def quantile_key(q: float) -> str:
    """``0.95`` → ``p95``; ``0.999`` → ``p99.9``."""
    text = f"{q * 100:.4f}".rstrip("0").rstrip(".")
    return f"p{text}"


def parse_time(value: str | None, what: str) -> datetime | None:
    """``--since`` / ``--until``: ISO 8601; a value without an offset is taken as UTC."""
    from datetime import UTC

    from tooldisc.errors import UsageError

    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"{what} must be an ISO 8601 time; got {value!r}") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def evidence_query(experiment: str, since: datetime | None, until: datetime | None,
                   segments: Sequence[str], latency_p_bp: int) -> AggregateQuery:
    """The default profile's question to an engine."""
    return AggregateQuery(
        schema=EVENT_SCHEMA, experiment=experiment, since=since, until=until,
        group_by=("arm",), segments=tuple(segments), measures=MEASURES,
        quarantine_measures=QUARANTINE_MEASURES,
        quantile=QuantileSpec("latency_ms", latency_levels(latency_p_bp)),
        looks=LookSpec(LOOK_MEASURES, "latency_ms"))


def _arm_stats(v: Mapping[str, Any], order: OrderStats | None) -> ArmStats:
    n = int(v["requests"])
    latency: dict[str, float] = {}
    if order is not None:
        for lv in REPORTED_LEVELS:
            if lv in order.levels:
                value = order.values[order.levels.index(lv)]
                latency[quantile_key(lv / 10_000)] = round(float(value), 3)
    return ArmStats(
        requests=n,
        flags={f: int(v[f]) for f in RATE_FLAGS},
        task_known=int(v["task_known"]),
        task_successes=int(v["task_ok"]),
        execution_known=int(v["exec_known"]),
        execution_successes=int(v["exec_ok"]),
        fallback_reasons={r: int(v[f"fr_{r}"]) for r in FALLBACK_REASONS},
        latency=latency,
        schema_tokens_mean=round(float(v["tokens"]) / n, 3) if n else 0.0,
        final_tool_count_mean=round(float(v["final"]) / n, 3) if n else 0.0,
        k_mean=round(float(v["k_sum"]) / n, 3) if n else 0.0,
        latency_sum=float(v["latency_sum"] or 0.0),
        latency_sumsq=float(v["latency_sumsq"] or 0.0),
        latency_order=order,
    )


def _add(into: dict[str, Any], v: Mapping[str, Any]) -> None:
    for name, op in _OPS.items():
        into[name] = merge(op, into.get(name), v.get(name))


def build_evidence(result: AggregateResult, query: AggregateQuery) -> Evidence:
    """Arms and segments from an engine's cells (cells add up; quantiles are per arm)."""
    arms_raw: dict[str, dict[str, Any]] = {}
    segs_raw: dict[str, dict[str, dict[str, dict[str, Any]]]] = {s: {} for s in query.segments}
    for key, values in result.cells:
        arm = key[0]
        if arm is None:
            continue
        _add(arms_raw.setdefault(arm, {}), values)
        for i, seg in enumerate(query.segments):
            value = key[1 + i]
            if value is not None:
                _add(segs_raw[seg].setdefault(value, {}).setdefault(arm, {}), values)
    levels = query.quantile.levels if query.quantile else ()
    arms: dict[str, ArmStats] = {}
    percents: set[float] = set()
    last: tuple[Any, float] | None = None
    first_ts = last_ts = None
    for name in sorted(arms_raw):
        v = arms_raw[name]
        if not v.get("requests"):
            continue
        qs = result.quantiles.get((name,))
        order = None
        if qs and all(x is not None for x in qs):
            order = OrderStats(int(v["requests"]), tuple(levels), tuple(float(x) for x in qs))
        arms[name] = _arm_stats(v, order)
        percents.update((float(v["pct_min"]), float(v["pct_max"])))
        if v["last_pct"] is not None and (last is None or tuple(v["last_pct"]) > last):
            last = (v["last_pct"][0], float(v["last_pct"][1]))
        first_ts = v["first_ts"] if first_ts is None else min(first_ts, v["first_ts"])
        last_ts = v["last_ts"] if last_ts is None else max(last_ts, v["last_ts"])
    segments = {
        seg: {value: {a: _arm_stats(v, None) for a, v in sorted(by_arm.items()) if v.get("requests")}
              for value, by_arm in sorted(values.items())}
        for seg, values in segs_raw.items()
    }
    steps = _steps(result) if query.looks is not None else ()
    span = None
    if first_ts is not None and last_ts is not None:
        span = (last_ts - first_ts).total_seconds() / 3600
    qv = result.quarantine_values
    return Evidence(
        experiment=query.experiment,
        since=query.since.isoformat() if query.since else None,
        until=query.until.isoformat() if query.until else None,
        arms=arms,
        percents=tuple(sorted(percents)),
        current_percent=last[1] if last else None,
        quarantined=sum(result.quarantine_reasons.values()),
        quarantined_security=int(qv.get("q_security", 0)),
        quarantine_reasons=dict(sorted(result.quarantine_reasons.items())),
        quarantined_security_unknown=int(qv.get("q_security_unknown", 0)),
        segments=segments,
        duplicates=result.duplicates,
        span_hours=span,
        steps=steps,
        step_us=query.looks.step_us if query.looks is not None else 3_600_000_000,
    )


def _steps(result: AggregateResult) -> tuple[StepCounts, ...]:
    """The engine's look rows (per arm, step and latency bin) as one record per arm and step."""
    counts: dict[tuple[int, str], dict[str, int]] = {}
    bins: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for key, step, bin_, values in result.looks:
        arm = key[0]
        if arm is None:
            continue
        into = counts.setdefault((step, arm), {})
        for name, v in values.items():
            into[name] = into.get(name, 0) + int(v or 0)
        if bin_ is not None:
            bins.setdefault((step, arm), []).append((bin_, int(values["requests"])))
    return tuple(StepCounts(step, arm, dict(sorted(c.items())), tuple(sorted(bins.get((step, arm), []))))
                 for (step, arm), c in sorted(counts.items()))


def aggregate(engine: Engine, experiment: str, since: datetime | None = None,
              until: datetime | None = None, segments: Sequence[str] = ("channel", "mode", "mutation"),
              latency_p_bp: int = 9500) -> Evidence:
    """Evidence for ``experiment`` in ``[since, until)`` from ``engine``."""
    query = evidence_query(experiment, since, until, segments, latency_p_bp)
    return build_evidence(engine.aggregate(query), query)
