"""Type and validate raw telemetry rows in DuckDB SQL, one reason per bad row.

Given a source relation (a file reader) and its column types, :func:`typed_select`
builds a SELECT that yields every schema column typed (NULL where the raw value is
invalid) plus ``_reason``: NULL for a good row, else the first rule it breaks, in
schema order. Good and bad rows thus come from one scan; bad rows are set aside
with their reason, never dropped. The SQL adapts to the source's physical type, so
typed Parquet pays almost nothing while JSONL/CSV strings are parsed strictly
(flags accept true/false and 0/1 only; timestamps need ``Z`` or an offset).
"""

from __future__ import annotations

from collections.abc import Mapping

from tooldisc.canary.assignment import sql_literal
from tooldisc.canary.events import Column, RowSchema

ISO_TS = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)"
INT_RE = r"[+-]?\d{1,18}"
SQL_TYPES = {
    "int": "BIGINT",
    "version": "BIGINT",
    "number": "DOUBLE",
    "percent": "DOUBLE",
    "bool": "BOOLEAN",
    "string": "VARCHAR",
    "enum": "VARCHAR",
    "ts": "TIMESTAMPTZ",
}
_INT_TYPES = {
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
}


def ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def category(duck_type: str) -> str:
    """Coarse class of a DuckDB type: str, bool, int, float, tstz, ts, null or other."""
    t = duck_type.upper()
    if t == "VARCHAR" or t.startswith("VARCHAR"):
        return "str"
    if t == "BOOLEAN":
        return "bool"
    if t in _INT_TYPES:
        return "int"
    if t in {"FLOAT", "DOUBLE", "REAL"} or t.startswith("DECIMAL"):
        return "float"
    if t in {"TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"}:
        return "tstz"
    if t.startswith("TIMESTAMP"):
        return "ts"
    if t == '"NULL"' or t == "NULL":
        return "null"
    return "other"


def _typed(col: Column, raw: str, cat: str) -> tuple[str, bool]:
    """(typed expression, whether a non-null raw value can fail to convert)."""
    kind = col.kind
    sql_type = SQL_TYPES[kind]
    if cat == "null":
        return f"NULL::{sql_type}", False
    if kind == "bool":
        if cat == "bool":
            return raw, False
        if cat == "str":
            return (f"CASE lower(trim({raw})) WHEN 'true' THEN TRUE WHEN '1' THEN TRUE "
                    f"WHEN 'false' THEN FALSE WHEN '0' THEN FALSE END"), True
        if cat in {"int", "float"}:
            return f"CASE WHEN {raw} = 1 THEN TRUE WHEN {raw} = 0 THEN FALSE END", True
        return "NULL::BOOLEAN", True
    if kind in {"int", "version"}:
        if cat == "int":
            return f"TRY_CAST({raw} AS BIGINT)", True
        if cat == "str":
            return (f"CASE WHEN regexp_full_match(trim({raw}), '{INT_RE}') "
                    f"THEN TRY_CAST(trim({raw}) AS BIGINT) END"), True
        if cat == "float":
            return (f"CASE WHEN isfinite({raw}) AND {raw} = floor({raw}) "
                    f"THEN TRY_CAST({raw} AS BIGINT) END"), True
        return "NULL::BIGINT", True
    if kind in {"number", "percent"}:
        if cat in {"int", "float"}:
            return f"CAST({raw} AS DOUBLE)", False
        if cat == "str":
            return f"TRY_CAST(trim({raw}) AS DOUBLE)", True
        return "NULL::DOUBLE", True
    if kind in {"string", "enum"}:
        if cat == "str":
            return raw, False
        if cat in {"int", "float", "bool"}:
            return f"CAST({raw} AS VARCHAR)", False
        return "NULL::VARCHAR", True
    if kind == "ts":
        if cat == "tstz":
            return raw, False
        if cat == "str":
            return (f"CASE WHEN regexp_full_match(trim({raw}), '{ISO_TS}') "
                    f"THEN TRY_CAST(trim({raw}) AS TIMESTAMPTZ) END"), True
        return "NULL::TIMESTAMPTZ", True
    raise ValueError(f"unknown column kind {kind!r}")


def _range_rule(col: Column, v: str, version: int) -> tuple[str, str] | None:
    kind = col.kind
    if kind == "int":
        hi = f" OR {v} > {int(col.max)}" if col.max is not None else ""
        top = f" and <= {int(col.max)}" if col.max is not None else ""
        return f"{v} < 0{hi}", f"{col.name}: must be an integer >= 0{top}"
    if kind == "version":
        return f"{v} <> {version}", f"{col.name}: must be {version}"
    if kind == "number":
        return f"NOT isfinite({v}) OR {v} < 0", f"{col.name}: must be a finite number >= 0"
    if kind == "percent":
        return (f"NOT isfinite({v}) OR {v} < 0 OR {v} > 100 "
                f"OR abs({v} * 100 - round({v} * 100)) > 1e-6",
                f"{col.name}: must be in [0, 100] in steps of 0.01")
    if kind == "string":
        return f"{v} = ''", f"{col.name}: must be non-empty"
    if kind == "enum":
        allowed = ", ".join(sql_literal(x) for x in col.values)
        return f"{v} NOT IN ({allowed})", f"{col.name}: must be one of {', '.join(col.values)}"
    return None


def typed_select(
    schema: RowSchema,
    source: str,
    types: Mapping[str, str],
    constants: Mapping[str, str] | None = None,
    file_label: str = "",
    extra_reason: str | None = None,
    with_raw: bool = False,
    raw_line: str | None = None,
) -> str:
    """SELECT over ``source`` giving typed schema columns, ``_reason`` and ``_file``.

    ``types`` maps source column → DuckDB type; ``constants`` supplies columns absent
    from the source (hive partition values, as strings). ``extra_reason`` is an SQL
    expression evaluated first (e.g. an unparseable JSON line). ``with_raw`` adds
    ``_raw``: the source line ``raw_line`` if given, else the schema columns as JSON text.
    """
    constants = constants or {}
    inner: list[str] = []
    raw_fields: list[str] = []
    checks: list[tuple[str, str]] = []
    if extra_reason:
        checks.append((f"({extra_reason}) IS NOT NULL", f"({extra_reason})"))
    for col in schema.columns:
        if col.name in types:
            raw, cat = ident(col.name), category(types[col.name])
        elif col.name in constants:
            raw, cat = sql_literal(constants[col.name]), "str"
        else:  # callers check required columns first; defensive
            raw, cat = "NULL", "null"
        expr, can_fail = _typed(col, raw, cat)
        raw_fields.append(f"{ident(col.name)} := CAST({raw} AS VARCHAR)")
        rcol = ident("__raw_" + col.name)
        v = ident(col.name)
        inner.append(f"{expr} AS {v}")
        needs_raw = can_fail or not col.nullable
        if needs_raw:
            inner.append(f"{raw} AS {rcol}")
        if not col.nullable:
            checks.append((f"{rcol} IS NULL", sql_literal(f"{col.name}: missing")))
        if can_fail:
            what = "a timestamp with Z or an offset" if col.kind == "ts" else f"a valid {col.kind}"
            if col.kind == "ts" and cat == "ts":
                what = "a timestamp with a time zone"
            checks.append((f"{rcol} IS NOT NULL AND {v} IS NULL",
                           sql_literal(f"{col.name}: not {what}")))
        rule = _range_rule(col, v, schema.version)
        if rule is not None:
            checks.append((f"{v} IS NOT NULL AND ({rule[0]})", sql_literal(rule[1])))
    for _, cond, reason in schema.row_rules:
        checks.append((f"({cond})", sql_literal(reason)))
    # One cheap vectorised OR decides good/bad; the ordered CASE that names the
    # first broken rule then runs only on the (rare) bad rows.
    any_bad = "\n    OR ".join(f"({c})" for c, _ in checks)
    whens = "\n    ".join(f"WHEN {c} THEN {r}" for c, r in checks)
    cols = ", ".join(ident(c.name) for c in schema.columns)
    raw_out = ""
    if with_raw:
        inner.append((raw_line if raw_line else f"to_json(struct_pack({', '.join(raw_fields)}))::VARCHAR")
                     + " AS __raw")
        raw_out = ", __raw AS _raw"
    if extra_reason:
        inner.append(extra_reason)
    return (
        f"SELECT {cols},\n  CASE WHEN coalesce({any_bad}, TRUE) THEN CASE\n    {whens}\n  END END AS _reason, "
        f"{sql_literal(file_label)} AS _file"
        f"{raw_out}\nFROM (SELECT {', '.join(inner)} FROM {source})"
    )
