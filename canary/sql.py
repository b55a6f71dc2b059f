"""Rendering canary rules and measures to SQL: the DuckDB dialect, and the seam for others.

Rules and aggregate filters are data (:mod:`tooldisc.canary.conditions`,
:func:`tooldisc.canary.events.checks`); this module turns them into SQL text. What
differs between engines — type names, how a raw string becomes a typed value, regular
expressions, finiteness — lives in the few methods of :class:`Dialect`; another engine
(Spark SQL) subclasses it and overrides those, and every rule, reason text and check
order comes along unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from tooldisc.canary.conditions import (
    All,
    Any_,
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
    MoreOf,
    Not,
    NotFinite,
    OffStep,
    StartsWith,
    Valid,
)
from tooldisc.canary.events import (
    INT_RE,
    ISO_TS,
    JSON_TYPES,
    SECURITY_FLAGS,
    UUID_CANONICAL_RE,
    UUID_RE,
    Column,
)

_INT_TYPES = {
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
}


if TYPE_CHECKING:
    from tooldisc.canary.engine import AggregateQuery


def sql_literal(text: str) -> str:
    """A SQL string literal (single quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


class Dialect:
    """DuckDB SQL. Subclass and override the methods marked *engine-specific*."""

    name = "duckdb"
    types: ClassVar[dict[str, str]] = {
        "int": "BIGINT", "version": "BIGINT", "number": "DOUBLE", "percent": "DOUBLE",
        "bool": "BOOLEAN", "string": "VARCHAR", "enum": "VARCHAR", "ts": "TIMESTAMPTZ",
        "uuid": "UUID", "teams": "VARCHAR",
    }
    # The engine's name of each JSON value type (``json_type``), by the tag
    # :data:`tooldisc.canary.events.JSON_TYPES` uses.
    json_tags: ClassVar[dict[str, tuple[str, ...]]] = {
        "string": ("VARCHAR",), "bool": ("BOOLEAN",), "int": ("BIGINT", "UBIGINT"),
        "float": ("DOUBLE",), "null": ("NULL",), "other": ("ARRAY", "OBJECT"),
    }

    # -- engine-specific -------------------------------------------------------------
    def ident(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def int_div(self, a: str, b: str) -> str:
        """Integer division of two non-negative integer expressions."""
        return f"({a}) // ({b})"

    def levels_table(self, levels: tuple[int, ...]) -> str:
        """A one-column table ``__lv`` of the quantile levels (in 1/10000)."""
        return f"SELECT unnest([{', '.join(str(int(lv)) for lv in levels)}]::BIGINT[]) AS __lv"

    def full_match(self, expr: str, regex: str) -> str:
        return f"regexp_full_match({expr}, {sql_literal(regex)})"

    def not_finite(self, expr: str) -> str:
        return f"NOT isfinite({expr})"

    def category(self, source_type: str) -> str:
        """Coarse class of a source column type: str, bool, int, float, tstz, ts, uuid, null, other."""
        t = source_type.upper()
        if t.endswith("]") or t.startswith(("STRUCT", "MAP", "UNION")):
            return "other"  # a list, array or nested value is never one scalar
        if t == "VARCHAR" or t.startswith("VARCHAR("):
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
        if t == "UUID":
            return "uuid"
        if t in {'"NULL"', "NULL"}:
            return "null"
        return "other"

    def parse(self, col: Column, raw: str, cat: str) -> tuple[str, bool]:
        """(typed expression, whether a non-null raw value can fail to convert)."""
        kind = col.kind
        if cat == "null":
            return self.null(kind), False
        if kind == "bool":
            if cat == "bool":
                return raw, False
            if cat == "str":
                return (f"CASE lower(trim({raw})) WHEN 'true' THEN TRUE WHEN '1' THEN TRUE "
                        f"WHEN 'false' THEN FALSE WHEN '0' THEN FALSE END"), True
            if cat in {"int", "float"}:
                return f"CASE WHEN {raw} = 1 THEN TRUE WHEN {raw} = 0 THEN FALSE END", True
            return self.null(kind), True
        if kind in {"int", "version"}:
            if cat == "int":
                return f"TRY_CAST({raw} AS BIGINT)", True
            if cat == "str":
                return (f"CASE WHEN {self.full_match(f'trim({raw})', INT_RE)} "
                        f"THEN TRY_CAST(trim({raw}) AS BIGINT) END"), True
            if cat == "float":
                return (f"CASE WHEN isfinite({raw}) AND {raw} = floor({raw}) "
                        f"THEN TRY_CAST({raw} AS BIGINT) END"), True
            return self.null(kind), True
        if kind in {"number", "percent"}:
            if cat in {"int", "float"}:
                return f"CAST({raw} AS DOUBLE)", False
            if cat == "str":
                return f"TRY_CAST(trim({raw}) AS DOUBLE)", True
            return self.null(kind), True
        if kind in {"string", "enum"}:
            if cat == "str":
                return raw, False
            if cat in {"int", "float", "bool"}:
                return f"CAST({raw} AS {self.value_type(kind)})", False
            return self.null(kind), True
        if kind == "ts":
            if cat == "tstz":
                return raw, False
            if cat == "str":
                return (f"CASE WHEN {self.full_match(f'trim({raw})', ISO_TS)} "
                        f"THEN TRY_CAST(trim({raw}) AS TIMESTAMPTZ) END"), True
            return self.null(kind), True
        if kind == "teams":
            # letters only (the value rule checks them); a number or a flag is not a team string
            return (raw, False) if cat == "str" else (self.null(kind), True)
        if kind == "uuid":
            # A UUID is carried as its canonical text (lower case, 8-4-4-4-12), as Spark
            # does: equal ids are equal strings, and the common case — ids already
            # canonical, as the sink writes them — costs one pattern test, no parse.
            text = self.value_type(kind)
            if cat == "uuid":
                return f"CAST({raw} AS {text})", False
            if cat == "str":
                return (f"CASE WHEN {self.full_match(raw, UUID_CANONICAL_RE)} THEN {raw} "
                        f"WHEN {self.full_match(f'trim({raw})', UUID_RE)} "
                        f"THEN lower(trim({raw})) END"), True
            return self.null(kind), True
        raise ValueError(f"unknown column kind {kind!r}")

    def count_if(self, cond: str) -> str:
        return f"count_if({cond})"

    def shift(self, expr: str, bits: str, left: bool) -> str:
        """*Engine-specific*: ``expr`` shifted by ``bits`` (non-negative integers)."""
        return f"(({expr}) {'<<' if left else '>>'} ({bits}))"

    def epoch_us(self, expr: str) -> str:
        """*Engine-specific*: a timestamp as integer microseconds since 1970 (UTC)."""
        return f"epoch_us({expr})"

    # -- shared ----------------------------------------------------------------------
    def parse_json(self, col: Column, raw: str, tag: str) -> tuple[str, bool]:
        """A JSONL value: ``raw`` its text (a string's content, or the literal), ``tag`` its
        JSON type as the engine names it. Only the types :data:`JSON_TYPES` lists for the
        column's kind are read, by the text rules; any other (a string for a flag, an array
        for a name) is a value that does not parse."""
        names = [n for t in JSON_TYPES[col.kind] for n in self.json_tags[t]]
        expr, _ = self.parse(col, raw, "str")
        return f"CASE WHEN {tag} IN ({', '.join(self.literal(n) for n in names)}) THEN {expr} END", True

    def reads_true(self, text: str) -> str:
        """Whether some reading of a raw value's text says true: ``true`` or ``1`` in any
        letter case, or a number equal to 1 (``1.0``). Used for security flags only, so
        that a flag written in the wrong type (``"true"``, ``1.0``) counts as an incident
        instead of an unknown (the row is quarantined either way)."""
        number, _ = self.parse(Column("__n", "number"), text, "str")
        return f"(lower(trim({text})) IN ('true', '1') OR coalesce({number} = 1, FALSE))"

    # -- shared (aggregates) -----------------------------------------------------------
    def exact_sum(self, col: Column, squared: bool, where: str | None, valid_only: bool = False) -> str:
        """Sum (or sum of squares) over valid rows, exact and the same in every engine.

        Floating-point addition depends on order (and so on threads and engines); these
        sums are integers instead: a ``number`` in thousandths (microseconds of a
        millisecond column; rounded half away from zero), an ``int`` as itself, summed as
        integers (:meth:`exact_int_type`). :func:`tooldisc.canary.engine.exact_value`
        scales the result back.
        Quarantined rows are skipped (their values may be anything; nothing reads the sum)
        — by the caller when ``valid_only`` (its rows are all valid), else here.
        """
        c = self.ident(col.name)
        v = f"round({c} * 1000)" if col.kind == "number" else c
        v = f"CAST({v} AS {self.exact_int_type(col, squared)})"
        term = f"{v} * {v}" if squared else v
        cond = " AND ".join(([] if valid_only else ["_reason IS NULL"]) + ([where] if where else []))
        return f"coalesce(sum({f'CASE WHEN {cond} THEN {term} END' if cond else term}), 0)"

    def thousandths(self, expr: str) -> str:
        """A ``number`` as the integer of thousandths the exact sums add (rounded half away
        from zero), so a histogram bin and a sum read the same value."""
        return f"CAST(round({expr} * 1000) AS BIGINT)"

    def bin_shift(self, v: str, lo: int = 0, hi: int | None = None) -> str:
        """How far a non-negative integer ``v`` is shifted to keep its top bits
        (:func:`tooldisc.canary.engine.log_bin`): the smallest ``s`` with
        ``v < 2**(BIN_BITS + s)``, as a binary search of integer comparisons (six deep), so
        every engine agrees and a row costs a few comparisons — a flat ladder of 56 made
        Spark's hourly view cost 5× as much."""
        from tooldisc.canary.engine import BIN_BITS, BIN_SHIFTS

        hi = BIN_SHIFTS if hi is None else hi
        if lo == hi:
            return str(lo)
        mid = (lo + hi) // 2
        return (f"CASE WHEN {v} < {1 << (BIN_BITS + mid)} THEN {self.bin_shift(v, lo, mid)} "
                f"ELSE {self.bin_shift(v, mid + 1, hi)} END")

    def log_bin(self, v: str, shift: str | None = None) -> str:
        """The histogram bin of a non-negative integer ``v``, its shift given (a column
        computed once with :meth:`bin_shift`) or computed here."""
        from tooldisc.canary.engine import BIN_BITS

        s = shift or f"({self.bin_shift(v)})"
        return f"({self.shift(s, str(BIN_BITS), True)} + {self.shift(v, s, False)})"

    def step_of(self, ts: str, step_us: int) -> str:
        """Which step of ``step_us`` microseconds a timestamp falls in (integer division)."""
        return self.int_div(self.epoch_us(ts), str(int(step_us)))

    def exact_int_type(self, col: Column, squared: bool) -> str:
        """*Engine-specific*: the integer type each value of an exact sum is cast to.

        DuckDB sums a BIGINT into a 128-bit integer (exact), and native integers add
        several times faster than DECIMAL(38,0); a value (or square) that might not fit
        64 bits is cast to HUGEINT, whose range covers DECIMAL(38,0)'s. Another engine
        may keep the portable DECIMAL(38,0).
        """
        if squared:
            return "HUGEINT"
        if col.kind == "int" or (col.max is not None and col.max * 1000 < 2**62):
            return "BIGINT"
        return "HUGEINT"

    def value_type(self, kind: str) -> str:
        """The SQL type of a parsed value (a UUID is its canonical text; ``types`` is the
        column type of an ingested table)."""
        return self.types["string"] if kind == "uuid" else self.types[kind]

    def null(self, kind: str) -> str:
        return f"CAST(NULL AS {self.value_type(kind)})"

    def literal(self, value: str | int | float | bool) -> str:
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int | float):
            return repr(value)
        return sql_literal(value)

    def conflict_row(self, columns: tuple[Column, ...], experiment: str, event_id: str) -> str:
        """The select list of the one row standing for an event id seen with different contents.

        Both engines group the copies and render this same list, so they cannot drift: a
        security flag is TRUE if any copy says so, unknown (NULL) if any copy lacks it, else
        FALSE; the experiment is the one judged; ``event_id`` is the engine's expression for
        the group's id; every other column is NULL.
        """
        out = []
        for c in columns:
            f = self.ident(c.name)
            if c.name in SECURITY_FLAGS:
                out.append(f"CASE WHEN bool_or({f}) THEN TRUE WHEN count({f}) < count(*) "
                           f"THEN NULL ELSE FALSE END AS {f}")
            elif c.name == "experiment":
                out.append(f"{self.literal(experiment)} AS experiment")
            elif c.name == "event_id":
                out.append(event_id)
            else:
                out.append(f"{self.null(c.kind)} AS {f}")
        return ", ".join(out)

    def order_statistics(self, query: AggregateQuery, source: str) -> str:
        """Rows (group columns…, ``__lv``, ``__v``): per group and level, the nearest-rank
        order statistic ``X_(max(1, ceil(k·n/10000)))`` of the valid rows' quantile column.

        Read from counts of distinct values with running totals, not by sorting every
        row: latencies repeat, so the counts are few, and both engines find the rank with
        the same integer arithmetic, so their values are identical.
        """
        q = query.quantile
        assert q is not None
        g = [self.ident(k) for k in query.group_by]
        gl = "".join(f"{x}, " for x in g)
        part = f"PARTITION BY {', '.join(g)} " if g else ""
        v = self.ident(q.column)
        where = f" AND {self.render(q.where)}" if q.where is not None else ""
        rank = f"greatest(1, {self.int_div('__lv * __n + 9999', '10000')})"
        hist = (f"SELECT {gl}{v} AS __v, count(*) AS __c FROM {source} "
                f"WHERE _reason IS NULL AND {v} IS NOT NULL{where} GROUP BY {gl}{v}")
        cum = (f"SELECT {gl}__v, __c, sum(__c) OVER ({part}ORDER BY __v ROWS BETWEEN UNBOUNDED "
               f"PRECEDING AND CURRENT ROW) AS __cum, sum(__c) OVER ({part.strip()}) AS __n "
               f"FROM ({hist}) __h")
        return (f"SELECT {gl}__lv, __v FROM ({cum}) __w CROSS JOIN ({self.levels_table(q.levels)}) __l "
                f"WHERE __cum - __c < {rank} AND {rank} <= __cum")

    def render(self, cond: Cond, reason_col: str = "_reason") -> str:
        """SQL boolean for a condition over typed columns (NULL-safe where it matters)."""
        c = self.ident(cond.column) if hasattr(cond, "column") else ""
        if isinstance(cond, IsTrue):
            return c
        if isinstance(cond, IsNull):
            return f"{c} IS NULL"
        if isinstance(cond, Eq):
            return f"{c} = {self.literal(cond.value)}"
        if isinstance(cond, Lt):
            return f"{c} < {self.literal(cond.value)}"
        if isinstance(cond, Gt):
            return f"{c} > {self.literal(cond.value)}"
        if isinstance(cond, In):
            return f"{c} IN ({', '.join(self.literal(v) for v in cond.values)})"
        if isinstance(cond, NotFinite):
            return self.not_finite(c)
        if isinstance(cond, OffStep):
            inv = round(1 / cond.step)
            return f"abs({c} * {inv} - round({c} * {inv})) > 1e-6"
        if isinstance(cond, Matches):
            return self.full_match(c, cond.regex)
        if isinstance(cond, LongerThan):
            return f"length({c}) > {int(cond.limit)}"
        if isinstance(cond, LengthNe):
            return f"length({c}) <> {self.ident(cond.other)}"
        if isinstance(cond, StartsWith):
            return f"substr({c}, 1, {len(cond.prefix)}) = {self.literal(cond.prefix)}"
        if isinstance(cond, Contains):
            return f"instr({c}, {self.literal(cond.text)}) > 0"
        if isinstance(cond, MoreOf):
            # n(letter) > n(than)  ⇔  len − n(than) > len − n(letter); the same in every dialect
            return (f"length(replace({c}, {self.literal(cond.than)}, '')) > "
                    f"length(replace({c}, {self.literal(cond.letter)}, ''))")
        if isinstance(cond, Not):
            return f"NOT ({self.render(cond.cond, reason_col)})"
        if isinstance(cond, All):
            return "(" + " AND ".join(self.render(x, reason_col) for x in cond.conds) + ")" if cond.conds else "TRUE"
        if isinstance(cond, Any_):
            return "(" + " OR ".join(self.render(x, reason_col) for x in cond.conds) + ")" if cond.conds else "FALSE"
        if isinstance(cond, Valid):
            return f"{reason_col} IS NULL"
        raise TypeError(f"not a condition: {cond!r}")


DUCKDB = Dialect()
