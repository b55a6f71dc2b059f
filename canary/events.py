"""The telemetry event contract (DESIGN §7): one row per request, privacy-safe.

This module owns the column list, each column's kind and whether it may be null, and
the location of the shipped JSON Schema (``data/event.schema.json``). The same
:class:`RowSchema` drives row validation in DuckDB (:mod:`tooldisc.canary.validation`),
so the JSON Schema, the SQL checks and the synthetic generator cannot disagree
(a test keeps the JSON Schema and these constants in step).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

EVENT_SCHEMA_VERSION = 1

FALLBACK_REASONS = (
    "empty",
    "low_candidate_quality",
    "stale_index",
    "index_error",
    "index_inconsistency",
    "unknown",
)
SECURITY_FLAGS = ("unauthorized_candidate", "tenant_leak", "permission_violation")


@dataclass(frozen=True)
class Column:
    """One column of a row schema.

    ``kind`` is one of ``int`` (non-negative integer), ``number`` (finite, ≥ 0),
    ``percent`` (0–100 in 0.01 steps), ``bool`` (true/false, 0/1 accepted),
    ``string`` (non-empty), ``enum`` (one of ``values``), ``ts`` (ISO 8601 with ``Z``
    or an offset) and ``version`` (equal to the schema's version).
    """

    name: str
    kind: str
    nullable: bool = False
    values: tuple[str, ...] = ()
    max: float | None = None


@dataclass(frozen=True)
class RowSchema:
    """A versioned row contract plus the cross-column rules SQL must enforce."""

    name: str
    version: int
    columns: tuple[Column, ...]
    schema_file: str
    table: str
    # (column, SQL condition on typed columns that makes a row bad, reason)
    row_rules: tuple[tuple[str, str, str], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


EVENT_SCHEMA = RowSchema(
    name="event",
    version=EVENT_SCHEMA_VERSION,
    schema_file="event.schema.json",
    table="events",
    columns=(
        Column("schema_version", "version"),
        Column("ts", "ts"),
        Column("experiment", "string"),
        Column("percent", "percent"),
        Column("arm", "enum", values=("control", "experiment")),
        Column("bucket", "int", max=9999),
        Column("channel", "string"),
        Column("mode", "string"),
        Column("mutation", "string"),
        Column("candidate_count", "int"),
        Column("final_tool_count", "int"),
        Column("k", "int"),
        Column("index_hit", "bool"),
        Column("fallback", "bool"),
        Column("fallback_reason", "enum", nullable=True, values=FALLBACK_REASONS),
        Column("discovery_miss", "bool"),
        Column("schema_miss", "bool"),
        Column("retrieval_miss", "bool"),
        Column("authorization_failure", "bool"),
        Column("unauthorized_candidate", "bool"),
        Column("tenant_leak", "bool"),
        Column("permission_violation", "bool"),
        Column("tool_execution_success", "bool", nullable=True),
        Column("task_success", "bool", nullable=True),
        Column("latency_ms", "number"),
        Column("schema_tokens", "int"),
        Column("kill_switch", "bool"),
    ),
    row_rules=(
        ("fallback_reason", "fallback AND fallback_reason IS NULL",
         "fallback_reason: required when fallback is true"),
        ("fallback_reason", "NOT fallback AND fallback_reason IS NOT NULL",
         "fallback_reason: must be null when fallback is false"),
    ),
)


def load_json_schema(schema: RowSchema) -> dict[str, Any]:
    """The shipped JSON Schema of ``schema`` (read from the package, not the cwd)."""
    text = resources.files("tooldisc.canary").joinpath("data", schema.schema_file).read_text(
        encoding="utf-8"
    )
    return json.loads(text)
