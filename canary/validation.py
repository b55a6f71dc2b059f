"""Type and validate raw telemetry rows in SQL, one reason per bad row.

Given a source relation (a file reader) and its column types, :func:`typed_select`
builds a SELECT that yields every schema column typed (NULL where the raw value is
invalid) plus ``_reason``: NULL for a good row, else the first rule it breaks, in
schema order. The rules come from the schema as data (:func:`checks`: missing value,
unparseable value, value rule, then the cross-column rules) and are rendered by a
:class:`~tooldisc.canary.sql.Dialect`; only *parsing* a raw value is engine-specific.
Good and bad rows thus come from one scan; bad rows are set aside with their reason,
never dropped. The SQL adapts to the source's physical type, so typed Parquet pays
almost nothing while JSONL/CSV strings are parsed strictly (flags accept true/false
and 0/1 only; timestamps need ``Z`` or an offset). What each format may give each
column kind is data too (:data:`~tooldisc.canary.events.ENCODINGS`): a JSONL value of
another JSON type, or a Parquet column of another type, is a value that does not parse.
A security flag that does not parse still reads true when any reading of its text says
so (:meth:`~tooldisc.canary.sql.Dialect.reads_true`), and unknown otherwise.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from tooldisc.canary.conditions import Cond, Not, all_of
from tooldisc.canary.conditions import IsNull as _IsNull
from tooldisc.canary.events import TYPED_CATEGORIES, RowSchema, parse_failure, range_check
from tooldisc.canary.sql import DUCKDB, Dialect, sql_literal

SQL_TYPES = DUCKDB.types
JSON_VALUE = "json value"  # a source column type: a JSONL value's text, typed by __jt_<column>
JSON_TAG_PREFIX = "__jt_"


def ident(name: str) -> str:
    """A quoted SQL identifier."""
    return DUCKDB.ident(name)


def category(duck_type: str) -> str:
    return DUCKDB.category(duck_type)


@dataclass(frozen=True)
class Check:
    """One validation step: ``stage`` is missing, parse, value or row."""

    column: str
    stage: str
    reason: str
    when: Cond | None = None  # value and row stages: bad when this holds on typed values


def checks(schema: RowSchema) -> tuple[Check, ...]:
    """Every rule of ``schema`` in the order a row is judged (its first failure is its reason).

    Per column, in schema order: a required value is missing; a present value does not
    parse; a parsed value breaks the kind's rule. Then the cross-column rules. The
    parse reason of a ``ts`` column read from a time-zone-less timestamp differs
    ("with a time zone"), which the renderer picks from the source type.
    """
    out: list[Check] = []
    for col in schema.columns:
        if not col.nullable:
            out.append(Check(col.name, "missing", f"{col.name}: missing"))
        out.append(Check(col.name, "parse", parse_failure(col)))
        rule = range_check(col, schema)
        if rule is not None:
            out.append(Check(col.name, "value", rule[1], all_of(Not(_IsNull(col.name)), rule[0])))
    out.extend(Check(r.column, "row", r.reason, r.when) for r in schema.row_rules)
    return tuple(out)


def typed_select(
    schema: RowSchema,
    source: str,
    types: Mapping[str, str],
    constants: Mapping[str, str] | None = None,
    file_label: str = "",
    extra_reason: str | None = None,
    with_raw: bool = False,
    dialect: Dialect = DUCKDB,
    file_column: str | None = None,
    typed: Collection[str] = (),
) -> str:
    """SELECT over ``source`` giving typed schema columns, ``_reason`` and ``_file``.

    ``types`` maps source column → source type; ``constants`` supplies columns absent
    from the source (hive partition values, as strings). ``extra_reason`` is an SQL
    expression evaluated first (e.g. an unparseable JSON line). ``with_raw`` adds
    ``_raw``: the raw text of the schema columns as JSON (never the source line).
    ``file_column`` names a source column holding each row's file (one scan over many
    files); without it ``_file`` is ``file_label``.
    ``typed``: the source columns whose types are their own (Parquet, a table; not a
    hive folder's text), where a column of a type
    :data:`~tooldisc.canary.events.TYPED_CATEGORIES` does not list for the kind reads no
    value. A source column of type :data:`JSON_VALUE` holds a JSONL value's
    text, with its JSON type in the column ``__jt_<name>`` (:meth:`Dialect.parse_json`).
    Only schema columns are ever read, so nothing outside the schema enters a result.
    """
    d = dialect
    constants = constants or {}
    inner: list[str] = []
    raw_fields: list[str] = []
    conds: list[tuple[str, str]] = []
    if extra_reason:
        conds.append((f"({extra_reason}) IS NOT NULL", f"({extra_reason})"))
    parsed: dict[str, tuple[str, bool, str]] = {}
    for col in schema.columns:
        if col.name in types:
            raw, cat = d.ident(col.name), d.category(types[col.name])
            if types[col.name] == JSON_VALUE:
                cat = "json"
        elif col.name in constants:
            raw, cat = d.literal(constants[col.name]), "str"
        else:  # an optional column the file lacks (required ones are checked first)
            raw, cat = "NULL", "null"
        if cat == "json":
            expr, can_fail = d.parse_json(col, raw, d.ident(JSON_TAG_PREFIX + col.name))
        elif col.name in typed and cat not in (*TYPED_CATEGORIES[col.kind], "null"):
            expr, can_fail = d.null(col.kind), True  # a column of another type: no value reads
        else:
            expr, can_fail = d.parse(col, raw, cat)
        parsed[col.name] = (raw, can_fail, cat)
        raw_fields.append(f"{d.ident(col.name)} := CAST({d.ident('__raw_' + col.name)} AS VARCHAR)")
        inner.append(f"{expr} AS {d.ident(col.name)}")
        if can_fail or not col.nullable or with_raw:
            inner.append(f"{raw} AS {d.ident('__raw_' + col.name)}")
    for chk in checks(schema):
        raw, can_fail, cat = parsed[chk.column]
        rcol, v = d.ident("__raw_" + chk.column), d.ident(chk.column)
        if chk.stage == "missing":
            conds.append((f"{rcol} IS NULL", sql_literal(chk.reason)))
        elif chk.stage == "parse":
            if not can_fail:
                continue
            col = schema.column(chk.column)
            reason = parse_failure(col, source_is_naive_ts=(col.kind == "ts" and cat == "ts"))
            conds.append((f"{rcol} IS NOT NULL AND {v} IS NULL", sql_literal(reason)))
        else:
            assert chk.when is not None
            conds.append((d.render(chk.when), sql_literal(chk.reason)))
    # One cheap vectorised OR decides good/bad; the ordered CASE that names the
    # first broken rule then runs only on the (rare) bad rows.
    any_bad = "\n    OR ".join(f"({c})" for c, _ in conds)
    whens = "\n    ".join(f"WHEN {c} THEN {r}" for c, r in conds)
    outs = []
    for col in schema.columns:
        raw, can_fail, cat = parsed[col.name]
        v = d.ident(col.name)
        text = _text(d, d.ident("__raw_" + col.name), cat)
        if col.name in schema.security and can_fail and text is not None:
            # a security flag that does not parse still counts as true when some reading
            # of it says so (the row is quarantined for the parse failure either way)
            outs.append(f"CASE WHEN {v} IS NULL AND {d.reads_true(text)} THEN TRUE ELSE {v} END AS {v}")
        else:
            outs.append(v)
    cols = ", ".join(outs)
    if extra_reason:
        inner.append(extra_reason)
    file_out = sql_literal(file_label)
    if file_column is not None:
        inner.append(f"{d.ident(file_column)} AS __file")
        file_out = "__file"
    body = (
        f"SELECT {cols},\n  CASE WHEN coalesce({any_bad}, TRUE) THEN CASE\n    {whens}\n  END END AS _reason, "
        f"{file_out} AS _file"
        + ("".join(f", {d.ident('__raw_' + c.name)}" for c in schema.columns) if with_raw else "")
        + f"\nFROM (SELECT {', '.join(inner)} FROM {source})"
    )
    if not with_raw:
        return body
    cols = ", ".join(d.ident(c.name) for c in schema.columns)
    # The raw text is built for bad rows only (CASE evaluates a branch only on the rows
    # that take it): rendering every row to JSON cost more than validating it.
    return (f"SELECT {cols}, _reason, _file, CASE WHEN _reason IS NOT NULL THEN "
            f"to_json(struct_pack({', '.join(raw_fields)}))::VARCHAR END AS _raw FROM ({body})")


def _text(d: Dialect, raw: str, cat: str) -> str | None:
    """A raw value as text, for :meth:`Dialect.reads_true` (None: no text to read)."""
    if cat in {"str", "json"}:
        return raw
    if cat in {"int", "float", "bool"}:
        return f"CAST({raw} AS {d.value_type('string')})"
    return None
