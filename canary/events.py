"""The telemetry event contract (DESIGN §7): one row per request, privacy-safe.

This module owns the column list, each column's kind, whether it may be null, the
cross-column rules, and the location of the shipped JSON Schema
(``data/event.schema.json``). Validation is *data*: :func:`checks` turns a
:class:`RowSchema` into the ordered (condition, reason) list that every engine renders
for its own SQL (:mod:`tooldisc.canary.sql` for DuckDB), so the JSON Schema, the SQL
checks and the synthetic generator cannot disagree (a test keeps the JSON Schema and
these constants in step).

Schema version 2 adds ``event_id``: a random UUID per event (never personal: an
e-mail or a user id is not a UUID and is refused). Version 1 rows carry no id.
Version 3 is one *interleaved* request (:mod:`tooldisc.discovery.rank.interleave`): it adds
``teams`` (one letter per offered position, ``A`` or ``B``: which ranker placed it) and
``credit`` (one letter per tool call the guard let through, in call order: the team
credited, or ``-`` for a tool outside the offer, e.g. found by ``search_tools``) and
``contested`` (both rankers offered at least one tool: then the first position's team is
the first round's fair coin, which the balance gate tests). A request whose offer, or
whose calls, are empty carries a null team string. No query text, tool names
or arguments. The sink writes version 2 for every other request, so a reader that knows
only versions 1 and 2 sees no change in telemetry without interleaving.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from tooldisc.canary.conditions import (
    Cond,
    Contains,
    Eq,
    Gt,
    In,
    IsNull,
    IsTrue,
    LengthNe,
    LongerThan,
    Lt,
    Matches,
    Not,
    NotFinite,
    OffStep,
    all_of,
    any_of,
)

EVENT_SCHEMA_VERSION = 2  # what the sink writes for a request that is not interleaved
INTERLEAVED_SCHEMA_VERSION = 3  # one interleaved request, with its teams and credit
EVENT_SCHEMA_VERSIONS = (1, 2, 3)
MAX_TEAM_LETTERS = 1000  # per offer (K is far smaller) and per request's calls

FALLBACK_REASONS = (
    "empty",
    "low_candidate_quality",
    "stale_index",
    "index_error",
    "index_inconsistency",
    "unknown",
)
SECURITY_FLAGS = ("unauthorized_candidate", "tenant_leak", "permission_violation")
UUID_RE = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
UUID_CANONICAL_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
ISO_TS = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)"
INT_RE = r"[+-]?\d{1,18}"
LATENCY_MS_MAX = 86_400_000


# How a raw value may be written, per file format: what each engine's reader accepts for a
# column kind. Anything else quarantines the row ("<column>: not a valid <kind>"), so a
# value is read as exactly one thing: ``"experiment": ["x"]`` is not the experiment
# ``["x"]``, and ``"tenant_leak": "true"`` is not a flag. Rendered in docs/canary.md
# (:func:`encodings_markdown`); the readers take their rules from the two maps below.

JSON_TYPES: dict[str, tuple[str, ...]] = {
    # column kind -> the JSON value types a JSONL row may give it; both engines tag a
    # value as string, bool, int (an integer literal), float (any other number),
    # null or other (an array or an object). JSON null is a missing value.
    "bool": ("bool", "int"),  # true/false, or the integers 0 and 1
    "int": ("int",),
    "version": ("int",),
    "number": ("int", "float"),
    "percent": ("int", "float"),
    "string": ("string",),
    "enum": ("string",),
    "ts": ("string",),
    "uuid": ("string",),
    "teams": ("string",),
}
TYPED_CATEGORIES: dict[str, tuple[str, ...]] = {
    # column kind -> the column types a typed source (Parquet, a Spark table) may give it,
    # as the dialects' ``category`` names them; a column of any other type (a list, a
    # struct, a date, a float for a count, a number for a name) quarantines every row
    # holding a value in it. CSV cells and hive folder values are text (str).
    "bool": ("bool", "int"),  # BOOLEAN, or an integer column holding 0 or 1
    "int": ("int",),
    "version": ("int",),
    "number": ("int", "float"),
    "percent": ("int", "float"),
    "string": ("str",),
    "enum": ("str",),
    "ts": ("tstz", "str"),
    "uuid": ("uuid", "str"),
    "teams": ("str",),
}


@dataclass(frozen=True)
class Encoding:
    """The encodings each format accepts for one column kind (documentation; the
    readers apply :data:`JSON_TYPES`, :data:`TYPED_CATEGORIES` and the text rules of
    :meth:`tooldisc.canary.sql.Dialect.parse`, and tests check each example)."""

    kind: str
    columns: str
    jsonl: str
    csv: str
    parquet: str


ENCODINGS: tuple[Encoding, ...] = (
    Encoding("bool", "flags (`index_hit` … `kill_switch`, the three security flags)",
             "`true`, `false`, `1`, `0` (JSON booleans, or the integers 0 and 1); not `\"true\"`, "
             "`1.0`, `[true]`",
             "`true`, `false`, `1`, `0` in any letter case, spaces around ignored",
             "BOOLEAN; an integer column holding 0 or 1"),
    Encoding("bool, nullable", "`task_success`, `tool_execution_success`, `contested` (version 3)",
             "as a flag, or `null`", "as a flag, or an empty field", "as a flag, or null"),
    Encoding("int", "`bucket`, `candidate_count`, `final_tool_count`, `k`, `schema_tokens`",
             "an integer literal (`12`); not `12.0`, `\"12\"`",
             "digits with an optional sign (`12`, `+12`), at most 18",
             "an integer column"),
    Encoding("version", "`schema_version`", "the integer `1`, `2` or `3`", "`1`, `2` or `3`",
             "an integer column"),
    Encoding("number", "`latency_ms`, `percent`",
             "a JSON number (`12`, `12.5`, `1.25e2`); not `\"12.5\"`",
             "a decimal or exponent number (`12.5`, `1.25e2`)",
             "an integer, floating-point or decimal column"),
    Encoding("string", "`experiment`, `channel`, `mode`, `mutation`",
             "a JSON string; not a number, `null`, an array (`[\"x\"]`) or an object",
             "any text (an empty field is missing)", "a string column"),
    Encoding("enum", "`arm`, `fallback_reason`", "a JSON string, one of the values exactly",
             "one of the values exactly", "a string column"),
    Encoding("ts", "`ts`", "a JSON string, ISO 8601 with `Z` or an offset",
             "ISO 8601 text with `Z` or an offset",
             "a timestamp with time zone (an instant), or a string column of ISO 8601 text; "
             "not a timestamp without time zone"),
    Encoding("uuid", "`event_id`", "a JSON string, 8-4-4-4-12 hex digits", "8-4-4-4-12 hex digits",
             "a string or UUID column"),
    Encoding("teams", "`teams` (`A`/`B`), `credit` (`A`/`B`/`-`); schema version 3",
             "a JSON string of those letters (`\"ABBA\"`), or `null`; not an array",
             "the letters (an empty field is null)", "a string column"),
)


def encodings_markdown() -> str:
    """The encodings table as Markdown (docs/canary.md holds this text; a test keeps it so)."""
    rows = ["| kind | columns | JSONL | CSV (and `key=value` folder names) | Parquet |",
            "|---|---|---|---|---|"]
    rows += [f"| {e.kind} | {e.columns} | {e.jsonl} | {e.csv} | {e.parquet} |" for e in ENCODINGS]
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Column:
    """One column of a row schema.

    ``kind`` is one of ``int`` (non-negative integer), ``number`` (finite, ≥ 0),
    ``percent`` (0–100 in 0.01 steps), ``bool`` (true/false, 0/1 accepted),
    ``string`` (non-empty), ``enum`` (one of ``values``), ``ts`` (ISO 8601 with ``Z``
    or an offset), ``uuid`` (8-4-4-4-12 hex, compared case-insensitively) and
    ``version`` (one of the schema's versions) and ``teams`` (a string of the letters in
    ``values``, at most ``max`` long; empty is allowed). ``optional`` columns may be absent
    from a file (every row then reads NULL), e.g. ``event_id`` in version 1 files.
    """

    name: str
    kind: str
    nullable: bool = False
    values: tuple[str, ...] = ()
    max: float | None = None
    optional: bool = False


@dataclass(frozen=True)
class RowRule:
    """A cross-column rule: a row for which ``when`` holds is bad, for ``reason``."""

    column: str
    when: Cond
    reason: str


@dataclass(frozen=True)
class RowSchema:
    """A versioned row contract plus the cross-column rules every engine enforces."""

    name: str
    versions: tuple[int, ...]
    columns: tuple[Column, ...]
    schema_file: str
    table: str
    row_rules: tuple[RowRule, ...] = ()
    # bool columns that report a security incident: a row's value counts as true if any
    # reading of it says true (a quarantined ``"tenant_leak": "true"`` is true, not unknown;
    # a key given twice is true if any copy is), and is unknown when unreadable
    security: tuple[str, ...] = ()

    @property
    def version(self) -> int:
        """The version this package writes (the newest)."""
        return self.versions[-1]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        """Columns a file must have (or get from a hive partition)."""
        return tuple(c.name for c in self.columns if not c.optional)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


def range_check(col: Column, schema: RowSchema) -> tuple[Cond, str] | None:
    """The value rule of a parsed (non-null) value of ``col``, as (bad-when, reason)."""
    n = col.name
    kind = col.kind
    if kind == "int":
        if col.max is not None:
            return (any_of(Lt(n, 0), Gt(n, col.max)),
                    f"{n}: must be an integer >= 0 and <= {int(col.max)}")
        return Lt(n, 0), f"{n}: must be an integer >= 0"
    if kind == "version":
        allowed = schema.versions
        names = [str(v) for v in allowed]
        text = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        return Not(In(n, allowed)), f"{n}: must be {text}"
    if kind == "number":
        if col.max is not None:
            return (any_of(NotFinite(n), Lt(n, 0), Gt(n, col.max)),
                    f"{n}: must be a finite number >= 0 and <= {int(col.max)}")
        return any_of(NotFinite(n), Lt(n, 0)), f"{n}: must be a finite number >= 0"
    if kind == "percent":
        return (any_of(NotFinite(n), Lt(n, 0), Gt(n, 100), OffStep(n, 0.01)),
                f"{n}: must be in [0, 100] in steps of 0.01")
    if kind == "string":
        return Eq(n, ""), f"{n}: must be non-empty"
    if kind == "enum":
        return Not(In(n, col.values)), f"{n}: must be one of {', '.join(col.values)}"
    if kind == "teams":
        letters = "".join(re.escape(v) for v in col.values)
        limit = int(col.max if col.max is not None else MAX_TEAM_LETTERS)
        return (any_of(Not(Matches(n, f"[{letters}]*")), LongerThan(n, limit)),
                f"{n}: must be at most {limit} letters, each one of {', '.join(col.values)}")
    return None


def parse_failure(col: Column, source_is_naive_ts: bool = False) -> str:
    """Reason for a raw value that is present but does not parse as ``col.kind``."""
    if col.kind == "ts":
        what = "a timestamp with a time zone" if source_is_naive_ts else "a timestamp with Z or an offset"
    elif col.kind == "uuid":
        what = "a UUID"
    elif col.kind == "teams":
        what = "a string of team letters"
    else:
        what = f"a valid {col.kind}"
    return f"{col.name}: not {what}"


EVENT_SCHEMA = RowSchema(
    name="event",
    versions=EVENT_SCHEMA_VERSIONS,
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
        # at most a day: no request takes longer, and the exact latency sums (integer
        # microseconds, squared, 128-bit integers or DECIMAL(38,0)) then cannot overflow
        Column("latency_ms", "number", max=LATENCY_MS_MAX),
        Column("schema_tokens", "int"),
        Column("kill_switch", "bool"),
        Column("event_id", "uuid", nullable=True, optional=True),
        Column("teams", "teams", nullable=True, values=("A", "B"), max=MAX_TEAM_LETTERS, optional=True),
        Column("credit", "teams", nullable=True, values=("A", "B", "-"), max=MAX_TEAM_LETTERS,
               optional=True),
        # both rankers offered a tool: then the first position's team is the first round's fair coin
        Column("contested", "bool", nullable=True, optional=True),
    ),
    row_rules=(
        RowRule("fallback_reason", all_of(IsTrue("fallback"), IsNull("fallback_reason")),
                "fallback_reason: required when fallback is true"),
        RowRule("fallback_reason", all_of(Not(IsTrue("fallback")), Not(IsNull("fallback_reason"))),
                "fallback_reason: must be null when fallback is false"),
        RowRule("event_id", all_of(Eq("schema_version", 2), IsNull("event_id")),
                "event_id: required when schema_version is 2"),
        RowRule("event_id", all_of(Eq("schema_version", 1), Not(IsNull("event_id"))),
                "event_id: must be absent when schema_version is 1"),
        RowRule("event_id", all_of(Eq("schema_version", 3), IsNull("event_id")),
                "event_id: required when schema_version is 3"),
        RowRule("teams", all_of(In("schema_version", (1, 2)), Not(IsNull("teams"))),
                "teams: only in schema_version 3 (an interleaved request)"),
        RowRule("credit", all_of(In("schema_version", (1, 2)), Not(IsNull("credit"))),
                "credit: only in schema_version 3 (an interleaved request)"),
        RowRule("contested", all_of(In("schema_version", (1, 2)), Not(IsNull("contested"))),
                "contested: only in schema_version 3 (an interleaved request)"),
        RowRule("contested", all_of(Eq("schema_version", 3), IsNull("contested")),
                "contested: required when schema_version is 3"),
        RowRule("contested", all_of(IsTrue("contested"), Eq("final_tool_count", 0)),
                "contested: true needs an offered tool"),
        RowRule("arm", all_of(Eq("schema_version", 3), Not(Eq("arm", "experiment"))),
                "arm: must be experiment when schema_version is 3 (an interleaved request)"),
        RowRule("teams", all_of(Eq("schema_version", 3), IsNull("teams"), Gt("final_tool_count", 0)),
                "teams: required when schema_version is 3 and a tool was offered"),
        RowRule("teams", all_of(Not(IsNull("teams")), LengthNe("teams", "final_tool_count")),
                "teams: one letter per offered tool (final_tool_count)"),
        *(RowRule("credit", all_of(Contains("credit", t), any_of(IsNull("teams"), Not(Contains("teams", t)))),
                  "credit: credits a team that placed no offered tool") for t in ("A", "B")),
    ),
    security=SECURITY_FLAGS,
)


def load_json_schema(schema: RowSchema) -> dict[str, Any]:
    """The shipped JSON Schema of ``schema`` (read from the package, not the cwd)."""
    text = resources.files("tooldisc.canary").joinpath("data", schema.schema_file).read_text(
        encoding="utf-8"
    )
    return json.loads(text)
