"""The engine seam: one small interface between telemetry storage and the gates.

Gates and reports judge numbers, never rows, and never know which engine computed
them. An :class:`Engine` reads telemetry where it lives (DuckDB here; Spark is the
second implementation), validates every row with the schema's declarative rules
(:func:`tooldisc.canary.validation.checks`, rendered for the engine's SQL), and hands
back only aggregates (:class:`AggregateResult`): counts, sums, exact order statistics,
quarantine counts and reasons, de-duplication counts. No row, id or request text
leaves the engine.

What every engine computes, exactly (the parity contract):

1. **Attribution.** A valid row counts when ``experiment`` equals the one judged and
   ``since <= ts < until``. A quarantined row counts unless it can be shown to belong
   elsewhere: its ``experiment`` is the one judged, NULL or empty, and its ``ts`` is
   NULL or inside the window (fail closed).
2. **De-duplication** (among attributed rows). Key: a row's ``event_id`` when it parsed
   (schema v2, valid or quarantined), else — for a row whose ``schema_version`` parsed
   (v1) — all of its schema columns and its reason; other rows have no key. Rows
   sharing a key and identical in every schema column and reason count once. Rows sharing an ``event_id`` but differing anywhere
   become one quarantined row with reason :data:`CONFLICT_REASON`, whose security flags
   are true if any copy's is, else unknown (NULL) if any copy's is, else false.
   Counts: ``rows_removed``, ``v1_rows_removed``, ``v2_ids_repeated`` (ids seen more than
   once), ``v2_ids_conflicting``.
3. **Cells.** Valid rows grouped by ``group_by`` + ``segments`` columns, each
   :class:`Measure` computed per cell (the caller adds cells up into segments).
4. **Quantiles.** Per ``group_by`` group over valid rows, the nearest-rank order
   statistic ``X_(max(1, ceil(k·n/10000)))`` of the column at each level ``k`` (basis
   points) — SQL's ``percentile_disc``.
5. **Quarantine.** Attributed quarantined rows: count per reason, and each quarantine
   measure over all of them.
6. **Looks** (when the query asks, :class:`LookSpec`). Valid rows grouped by ``group_by``,
   the step of their timestamp (``epoch µs // step``, integer division) and the
   histogram bin of one column (:func:`log_bin`; NULL when the value is), each look
   measure computed per group — from the same scan as the cells, so the sequential
   view costs no second pass over the telemetry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from tooldisc.canary.conditions import Cond
from tooldisc.canary.events import RowSchema

CONFLICT_REASON = "event_id: repeated with different content"
OPS = ("count", "count_if", "count_nonnull", "sum", "sum_sq", "min", "max", "last", "distinct")


@dataclass(frozen=True)
class Measure:
    """One aggregate, named. ``op`` is one of :data:`OPS`.

    ``count`` rows (where ``where`` holds, if given); ``count_if`` rows where ``where``
    holds; ``count_nonnull`` non-null ``column``; ``sum``/``sum_sq``/``min``/``max`` of
    ``column`` (0 for an empty sum); ``last`` the pair (max ``order_by``, max ``column``
    among rows at that ``order_by``); ``distinct`` the sorted distinct non-null values.
    """

    name: str
    op: str
    column: str | None = None
    where: Cond | None = None
    order_by: str | None = None


@dataclass(frozen=True)
class QuantileSpec:
    column: str
    levels: tuple[int, ...]  # basis points, ascending
    where: Cond | None = None


@dataclass(frozen=True)
class LookSpec:
    """Per-step aggregates for the sequential view: ``measures`` per ``group_by`` group,
    timestamp step (``step_us`` microseconds of ``column``) and :func:`log_bin` bin of
    ``histogram`` (the valid rows' values, so quantile bounds can be read at any look)."""

    measures: tuple[Measure, ...]
    histogram: str
    column: str = "ts"
    step_us: int = 3_600_000_000


# Histogram bins: a value is read as an integer of thousandths (as the exact sums read
# it); values below 2**BIN_BITS keep their own bin, larger ones keep their top BIN_BITS
# bits, so a bin spans at most 1/64 of its lower edge (1.6%) and the bin of a value is
# integer arithmetic every engine does alike.
BIN_BITS = 7
BIN_SHIFTS = 56  # values up to 2**63 (a BIGINT) keep their top BIN_BITS bits


def log_bin(thousandths: int) -> int:
    """The bin of a non-negative integer (engines compute the same in SQL:
    :meth:`tooldisc.canary.sql.Dialect.log_bin`)."""
    shift = max(thousandths.bit_length() - BIN_BITS, 0)
    return (shift << BIN_BITS) + (thousandths >> shift)


def bin_edges(b: int) -> tuple[int, int]:
    """The smallest and largest integer (thousandths) in bin ``b``."""
    shift, top = b >> BIN_BITS, b & ((1 << BIN_BITS) - 1)
    if shift == 0:
        return top, top
    return top << shift, ((top + 1) << shift) - 1


@dataclass(frozen=True)
class AggregateQuery:
    """What the gates of one profile need, for one experiment and window."""

    schema: RowSchema
    experiment: str
    since: datetime | None
    until: datetime | None
    group_by: tuple[str, ...]
    segments: tuple[str, ...]
    measures: tuple[Measure, ...]
    quarantine_measures: tuple[Measure, ...] = ()
    quantile: QuantileSpec | None = None
    dedup: bool = True
    looks: LookSpec | None = None


@dataclass(frozen=True)
class Duplicates:
    rows_removed: int = 0
    v1_rows_removed: int = 0
    v2_ids_repeated: int = 0
    v2_ids_conflicting: int = 0


@dataclass(frozen=True)
class AggregateResult:
    """Aggregates only. ``cells`` key: values of ``group_by`` + ``segments``."""

    cells: tuple[tuple[tuple[str | None, ...], Mapping[str, Any]], ...]
    quantiles: Mapping[tuple[str | None, ...], tuple[float | None, ...]]
    quarantine_reasons: Mapping[str, int]
    quarantine_values: Mapping[str, Any]
    duplicates: Duplicates = field(default_factory=Duplicates)
    # (group key, step, bin or None, look measures), sorted; empty unless the query asks
    looks: tuple[tuple[tuple[str | None, ...], int, int | None, Mapping[str, Any]], ...] = ()


class Engine(Protocol):
    """Where telemetry is read and aggregated. Implementations: DuckDB (default), Spark."""

    name: str

    def experiments(self) -> dict[str, int]:
        """Rows per experiment name among rows whose ``experiment`` parsed."""
        ...

    def files(self) -> tuple[tuple[str, int], ...]:
        """Each file judged (as the user named it, sorted) and the rows read from it."""
        ...

    def aggregate(self, query: AggregateQuery) -> AggregateResult: ...

    def close(self) -> None: ...


def look_order(look: tuple[tuple[str | None, ...], int, int | None, Any]) -> tuple[Any, ...]:
    """Sort key of :attr:`AggregateResult.looks` rows: group, step, bin (NULL first)."""
    key, step, bin_, _ = look
    return (tuple("" if x is None else x for x in key), step, -1 if bin_ is None else bin_)


LAST_STEPS = 10001  # a ``last`` pair packs as epoch µs × LAST_STEPS + value in 0.01 steps


def unpack_last(packed: Any) -> tuple[datetime, float] | None:
    """A ``last`` measure as engines compute it, one integer (so one cheap ``max()``
    instead of a struct comparison): epoch microseconds × :data:`LAST_STEPS` plus the
    value in 0.01 steps (a percent, 0…10000). Back to (time, value)."""
    if packed is None:
        return None
    from datetime import UTC, timedelta

    us, steps = divmod(int(packed), LAST_STEPS)
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us), steps / 100


def exact_value(kind: str, op: str, value: Any) -> Any:
    """An engine's exact integer sum (:meth:`tooldisc.canary.sql.Dialect.exact_sum`) as
    the column's unit: an ``int`` column's sum an int, a ``number`` column's a Decimal
    (thousandths, or millionths for a sum of squares), so cells add up exactly."""
    from decimal import Decimal

    whole = int(value or 0)
    if kind != "number":
        return whole
    return Decimal(whole).scaleb(-6 if op == "sum_sq" else -3)


def merge(op: str, a: Any, b: Any) -> Any:
    """Combine one measure of two cells (how segments and totals are built from cells)."""
    if a is None:
        return b
    if b is None:
        return a
    if op in ("count", "count_if", "count_nonnull", "sum", "sum_sq"):
        return a + b
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "last":
        return max(tuple(a), tuple(b))
    if op == "distinct":
        return sorted(set(a) | set(b))
    raise ValueError(f"unknown measure op {op!r}")


def empty(op: str) -> Any:
    return 0 if op in ("count", "count_if", "count_nonnull", "sum", "sum_sq") else (
        [] if op == "distinct" else None)


def total(measures: tuple[Measure, ...], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Measures added up over cells (or quarantine groups)."""
    out: dict[str, Any] = {m.name: empty(m.op) for m in measures}
    for r in rows:
        for m in measures:
            out[m.name] = merge(m.op, out[m.name], r.get(m.name))
    return out
