"""Per-arm numbers for one experiment and window, computed in one DuckDB scan.

Input is a relation of typed rows with ``_reason`` (NULL for good rows): the views of
:func:`tooldisc.canary.ingest.open_rows`, or the ingested tables. Good rows count for
their arm when their ``experiment`` and ``ts`` match. A quarantined row counts for the
experiment whenever it cannot be shown to belong elsewhere (its experiment or ts did
not parse), which is the fail-closed reading. Only counts, sums and quantiles leave
the database: no row, id or text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tooldisc.canary.events import FALLBACK_REASONS

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
QUANTILES = (0.5, 0.95, 0.99)


@dataclass(frozen=True)
class ArmStats:
    """Aggregates of one arm over the window; counts are exact, means are rounded."""

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


def window_condition(since: datetime | None, until: datetime | None) -> tuple[str, list[datetime]]:
    """SQL for ``since <= ts < until`` (either bound optional) and its parameters."""
    conds, params = [], []
    if since is not None:
        conds.append("ts >= ?")
        params.append(since)
    if until is not None:
        conds.append("ts < ?")
        params.append(until)
    return " AND ".join(conds) or "TRUE", params


def aggregate(con: Any, relation: str, experiment: str, since: datetime | None = None,
              until: datetime | None = None,
              quantiles: Sequence[float] = QUANTILES) -> Evidence:
    """Per-arm aggregates of ``relation`` for ``experiment`` in ``[since, until)``."""
    qs = sorted(set(QUANTILES) | set(quantiles))
    in_window, bounds = window_condition(since, until)
    params: list[Any] = [experiment, *bounds]
    flag_sums = ", ".join(f"count(*) FILTER (WHERE {f}) AS {f}" for f in RATE_FLAGS)
    reason_sums = ", ".join(
        f"count(*) FILTER (WHERE fallback AND fallback_reason = '{r}') AS fr_{r}"
        for r in FALLBACK_REASONS
    )
    qlist = ", ".join(repr(float(q)) for q in qs)
    # Grouping by (arm, _reason) rather than filtering on _reason keeps the validation
    # CASE evaluated once per row. Good rows always have experiment and ts, so the
    # fail-closed attribution of quarantined rows needs no reference to _reason here.
    sql = f"""
    SELECT arm, _reason,
      count(*) AS n, {flag_sums}, {reason_sums},
      count(task_success) AS task_known, count(*) FILTER (WHERE task_success) AS task_ok,
      count(tool_execution_success) AS exec_known,
      count(*) FILTER (WHERE tool_execution_success) AS exec_ok,
      quantile_cont(latency_ms, [{qlist}]) AS lat,
      sum(schema_tokens) AS tokens, sum(final_tool_count) AS final, sum(k) AS k_sum,
      count(*) FILTER (WHERE unauthorized_candidate OR tenant_leak OR permission_violation) AS sec,
      min(percent) AS pct_min, max(percent) AS pct_max,
      arg_max(percent, ts) AS last_pct, max(ts) AS last_ts
    FROM {relation}
    WHERE (experiment = ? OR experiment IS NULL OR experiment = '')
      AND (ts IS NULL OR ({in_window}))
    GROUP BY arm, _reason
    """
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    arms: dict[str, ArmStats] = {}
    reasons: dict[str, int] = {}
    quarantined = q_security = 0
    percents: set[float] = set()
    last: tuple[Any, float] | None = None
    groups: dict[str, dict[str, Any]] = {}
    for values in cur.fetchall():
        row = dict(zip(names, values, strict=True))
        if row["_reason"] is not None:
            reasons[row["_reason"]] = reasons.get(row["_reason"], 0) + int(row["n"])
            quarantined += int(row["n"])
            q_security += int(row["sec"])
            continue
        groups[row["arm"]] = row
    for arm_name in sorted(groups):
        row = groups[arm_name]
        n = int(row["n"])
        lat = row["lat"] or [None] * len(qs)
        arms[arm_name] = ArmStats(
            requests=n,
            flags={f: int(row[f]) for f in RATE_FLAGS},
            task_known=int(row["task_known"]),
            task_successes=int(row["task_ok"]),
            execution_known=int(row["exec_known"]),
            execution_successes=int(row["exec_ok"]),
            fallback_reasons={r: int(row[f"fr_{r}"]) for r in FALLBACK_REASONS},
            latency={quantile_key(q): round(float(v), 3) for q, v in zip(qs, lat, strict=True)
                     if v is not None},
            schema_tokens_mean=round(int(row["tokens"]) / n, 3),
            final_tool_count_mean=round(int(row["final"]) / n, 3),
            k_mean=round(int(row["k_sum"]) / n, 3),
        )
        percents.update((float(row["pct_min"]), float(row["pct_max"])))
        if row["last_ts"] is not None and (last is None or (row["last_ts"], row["last_pct"]) > last):
            last = (row["last_ts"], float(row["last_pct"]))
    return Evidence(
        experiment=experiment,
        since=since.isoformat() if since else None,
        until=until.isoformat() if until else None,
        arms=arms,
        percents=tuple(sorted(percents)),
        current_percent=last[1] if last else None,
        quarantined=quarantined,
        quarantined_security=q_security,
        quarantine_reasons=dict(sorted(reasons.items())),
    )
