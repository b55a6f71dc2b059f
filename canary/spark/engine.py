"""The Spark engine: the same aggregates as DuckDB, computed where the telemetry lives.

Implements :class:`tooldisc.canary.engine.Engine` and its parity contract (read that
docstring: attribution, de-duplication, cells, quantiles, quarantine). Nothing here
restates a validation rule: :class:`SparkDialect` overrides only what differs in
Spark SQL (identifier and literal quoting, regular expressions, finiteness, and how a
raw string becomes a typed value), and :func:`tooldisc.canary.validation.typed_select`
renders the schema's one declarative rule list with it.

Only aggregates are collected to the driver: counts, sums, minima and maxima, the
distinct values of low-cardinality columns, and one value per requested order
statistic. Rows, ids and request text stay in Spark.

Exact quantiles (the nearest-rank order statistic ``X_(max(1, ceil(k·n/10000)))``)
are found without sorting rows on one machine: values are counted per group, a
running total over the sorted distinct values is taken per group, and the value
whose running total first reaches each rank is kept. The rank is integer arithmetic,
so no floating-point rounding can pick a neighbour.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from tooldisc.canary.engine import (
    CONFLICT_REASON,
    LAST_STEPS,
    AggregateQuery,
    AggregateResult,
    Duplicates,
    Measure,
    exact_value,
    look_order,
    total,
    unpack_last,
)
from tooldisc.canary.events import INT_RE, ISO_TS, UUID_RE, Column, RowSchema
from tooldisc.canary.spark.read import (
    CORRUPT,
    LINE,
    Location,
    display_names,
    hive_keys,
    hive_sql,
    read_raw,
    reading,
)
from tooldisc.canary.sql import Dialect
from tooldisc.errors import DataError

# What DuckDB's TRY_CAST(… AS DOUBLE) accepts (bar digit separators), so a string Spark
# alone would take (``1.5d``, ``0x1p3``) is refused by both engines.
NUMBER_RE = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(?i:nan|inf|infinity)"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ISO_FIXES = (
    (r"^(.{10}.\d{2}:\d{2})([Zz+-])", "$1:00$2"),
    (r"([+-]\d{2})(\d{2})$", "$1:$2"),
    ("z$", "Z"),
)


def spark_literal(text: str) -> str:
    """A Spark SQL string literal: backslash and quote escaped (Spark reads ``\\`` escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


class SparkDialect(Dialect):
    """Spark SQL: the engine-specific half of :class:`tooldisc.canary.sql.Dialect`."""

    name = "spark"
    types: ClassVar[dict[str, str]] = {
        "int": "BIGINT", "version": "BIGINT", "number": "DOUBLE", "percent": "DOUBLE",
        "bool": "BOOLEAN", "string": "STRING", "enum": "STRING", "ts": "TIMESTAMP",
        "uuid": "STRING", "teams": "STRING",
    }

    # JSON value types are tagged in the source by :func:`_json_tag`, already by these names
    json_tags: ClassVar[dict[str, tuple[str, ...]]] = {
        t: (t,) for t in ("string", "bool", "int", "float", "null", "other")}

    def ident(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def exact_int_type(self, col: Column, squared: bool) -> str:
        return "DECIMAL(38,0)"

    def int_div(self, a: str, b: str) -> str:
        return f"({a}) div ({b})"

    def levels_table(self, levels: tuple[int, ...]) -> str:
        return f"SELECT explode(array({', '.join(str(int(lv)) for lv in levels)})) AS __lv"

    def literal(self, value: str | int | float | bool) -> str:
        if isinstance(value, str):
            return spark_literal(value)
        return super().literal(value)

    def full_match(self, expr: str, regex: str) -> str:
        # RLIKE finds; the anchors make it a whole-string match (\z: no trailing newline).
        return f"({expr} RLIKE {spark_literal('^(?:' + regex + ')' + chr(92) + 'z')})"

    def not_finite(self, expr: str) -> str:
        return f"(isnan({expr}) OR abs({expr}) = double('Infinity'))"

    def category(self, source_type: str) -> str:
        t = source_type.lower()
        if t == "string" or t.startswith(("varchar", "char")):
            return "str"
        if t == "boolean":
            return "bool"
        if t in {"tinyint", "smallint", "int", "bigint"}:
            return "int"
        if t in {"float", "double"} or t.startswith("decimal"):
            return "float"
        if t == "timestamp":
            return "tstz"  # Spark's TIMESTAMP is an instant (with local time zone)
        if t == "timestamp_ntz":
            return "ts"
        if t == "void":
            return "null"
        return "other"

    def parse(self, col: Column, raw: str, cat: str) -> tuple[str, bool]:
        kind = col.kind
        if kind in {"number", "percent"} and cat == "str":
            return (f"CASE WHEN {self.full_match(f'trim({raw})', NUMBER_RE)} "
                    f"THEN TRY_CAST(trim({raw}) AS DOUBLE) END"), True
        if kind in {"int", "version"} and cat == "float":
            return (f"CASE WHEN NOT {self.not_finite(raw)} AND {raw} % 1 = 0 "
                    f"THEN TRY_CAST({raw} AS BIGINT) END"), True
        if kind == "ts" and cat == "str":
            return (f"CASE WHEN {self.full_match(f'trim({raw})', ISO_TS)} "
                    f"THEN TRY_CAST({self._iso(f'trim({raw})')} AS TIMESTAMP) END"), True
        if kind == "uuid" and cat == "str":
            return (f"CASE WHEN {self.full_match(f'trim({raw})', UUID_RE)} "
                    f"THEN lower(trim({raw})) END"), True
        if kind in {"int", "version"} and cat == "str":
            return (f"CASE WHEN {self.full_match(f'trim({raw})', INT_RE)} "
                    f"THEN TRY_CAST(trim({raw}) AS BIGINT) END"), True
        return super().parse(col, raw, cat)

    def _iso(self, expr: str) -> str:
        """An ISO_TS-matching string in the form Spark's cast reads, as DuckDB reads it:
        seconds added when absent, ``+HHMM`` written ``+HH:MM``, ``z`` as ``Z``."""
        for pattern, replacement in _ISO_FIXES:
            expr = f"regexp_replace({expr}, {spark_literal(pattern)}, {spark_literal(replacement)})"
        return expr

    def count_if(self, cond: str) -> str:
        return f"count_if({cond})"

    def shift(self, expr: str, bits: str, left: bool) -> str:
        return f"{'shiftleft' if left else 'shiftright'}({expr}, {bits})"

    def epoch_us(self, expr: str) -> str:
        return f"unix_micros({expr})"


SPARK = SparkDialect()
D = SPARK
FILE = "__tooldisc_file"  # each row's file (Spark's _metadata.file_path)
F_FILE = f"_metadata.file_path AS {FILE}"


def attribution(experiment: str, in_window: str = "TRUE") -> str:
    """Which rows count for ``experiment`` (an SQL expression): the engine contract's §1,
    as :func:`tooldisc.canary.duckdb.engine.attribution` renders it for DuckDB."""
    return (f"({experiment} = experiment OR experiment IS NULL OR experiment = '') "
            f"AND (ts IS NULL OR ({in_window}))")


def _micros_to_datetime(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(microseconds=int(value))


class SparkEngine:
    """Typed rows with ``_reason`` as a Spark temp view; aggregates on request."""

    name = "spark"
    _views = itertools.count()

    def __init__(self, spark: Any, view: str, schema: RowSchema, label: str,
                 names: Mapping[str, str] | None = None):
        self.spark = spark
        self.view = view
        self.schema = schema
        self.label = label
        self._experiments: dict[str, int] | None = None
        self._files: tuple[tuple[str, int], ...] | None = None
        self._names = dict(names or {})  # a local file (absolute) -> its name in reports

    @classmethod
    def open(cls, spark: Any, location: Location, schema: RowSchema) -> SparkEngine:
        """Read ``location`` and register its typed, validated rows (nothing runs yet,
        except the per-file column check of JSONL, which must look at every line).

        The rows are persisted (memory, spilling to disk) on first use: every later
        query of the verdict reads them from there instead of parsing and validating
        the source again."""
        from tooldisc.canary.validation import typed_select

        bodies = []
        for part in location.parts or ((),):
            piece = replace(location, files=part) if part else location
            raw = read_raw(spark, piece)
            source, types, extra, typed = _source(spark, raw, piece, schema, next(cls._views))
            bodies.append(typed_select(schema, source, types, {}, location.label,
                                       extra_reason=extra, dialect=SPARK,
                                       file_column=FILE if location.table is None else None,
                                       typed=typed))
        body = "\nUNION ALL\n".join(f"SELECT * FROM ({b})" for b in bodies)
        view = f"__tooldisc_rows_{next(cls._views)}"
        with reading(location.label):
            spark.sql(body).persist().createOrReplaceTempView(view)
        return cls(spark, view, schema, location.label, display_names(location))

    def close(self) -> None:
        import contextlib

        with contextlib.suppress(Exception):
            self.spark.table(self.view).unpersist()
        with contextlib.suppress(Exception):
            self.spark.catalog.dropTempView(self.view)

    def _sql(self, text: str, args: Mapping[str, Any] | None = None) -> Any:
        return self.spark.sql(text, args=dict(args)) if args else self.spark.sql(text)

    def _collect(self, text: str, args: Mapping[str, Any] | None = None) -> list[Any]:
        with reading(self.label):
            return self._sql(text, args).collect()

    def experiments(self) -> dict[str, int]:
        """Rows per experiment; counted once per engine (its rows are fixed once opened),
        by the same query that counts each file's rows (:meth:`files`)."""
        if self._experiments is None:
            from tooldisc.canary.duckdb.engine import per_experiment_and_file

            rows = self._collect(
                f"SELECT _file, experiment, count(*) AS n FROM {self.view} GROUP BY _file, experiment")
            self._experiments, self._files = per_experiment_and_file(
                [(self._name(r["_file"]), r["experiment"], r["n"]) for r in rows])
        return dict(self._experiments)

    def files(self) -> tuple[tuple[str, int], ...]:
        """Each file judged (named as DuckDB names it) with its rows; a table: its name."""
        if self._files is None:
            self.experiments()
        assert self._files is not None
        return self._files

    def _name(self, uri: str) -> str:
        """A file Spark read, as reports name it: relative to the root given (local files),
        else the URI as Spark gives it; a table, its name."""
        if uri == self.label:
            return uri
        return self._names.get(os.path.abspath(_local_name(uri)), uri)

    # -- aggregation ------------------------------------------------------------------

    def aggregate(self, query: AggregateQuery) -> AggregateResult:
        args: dict[str, Any] = {"experiment": query.experiment}
        window = []
        if query.since is not None:
            window.append("ts >= :since")
            args["since"] = query.since
        if query.until is not None:
            window.append("ts < :until")
            args["until"] = query.until
        conds = [attribution(":experiment", " AND ".join(window) or "TRUE")]
        cols = ", ".join(D.ident(c) for c in query.schema.names)
        attributed = f"__tooldisc_attr_{next(self._views)}"
        with reading(self.label):
            self._sql(f"SELECT {cols}, _reason FROM {self.view} WHERE {' AND '.join(conds)}",
                      args).createOrReplaceTempView(attributed)
        views = [attributed]
        try:
            source, dups = self._deduplicated(query, attributed, views)
            return self._aggregate(query, source, dups)
        finally:
            for v in reversed(views):
                self._sql(f"UNCACHE TABLE IF EXISTS {v}")
                self.spark.catalog.dropTempView(v)

    def _deduplicated(self, query: AggregateQuery, attributed: str,
                      views: list[str]) -> tuple[str, Duplicates]:
        """Rows with duplicates resolved, exactly as the engine contract says.

        A row's key is its ``event_id``, or for a v1 row a 64-bit hash of all its columns
        (as DuckDB's ``hash``; rows that collide stay apart, because only rows identical
        in every column and reason are merged). Keys seen more than once are found with
        one hash aggregation (over a 64-bit hash of the key; see below), cached lazily as
        they are counted; every other row streams through. Without repeats this is the
        only query. With repeats, the few rows behind them are grouped per distinct
        content once (cached lazily as the duplicate counts are taken from them), and
        the verdict's two aggregations read them from there: four queries per verdict,
        whatever the number of repeated keys (measured in docs/canary.md).
        Rows identical in every column share a key, so per-key distinct contents are
        the global ones.
        """
        if not query.dedup:
            return attributed, Duplicates()
        names = query.schema.names
        has_id = "event_id" in names
        cols = ", ".join(D.ident(c) for c in names)
        v1 = ", ".join(D.ident(c) for c in names if c != "event_id")
        v1_cond = "schema_version = 1" if has_id else "schema_version IS NOT NULL"
        key = f"CASE WHEN {v1_cond} THEN concat('h', CAST(xxhash64({v1}) AS STRING)) END"
        khash = f"CASE WHEN {v1_cond} THEN xxhash64('h', xxhash64({v1})) END"
        if has_id:
            key = f"CASE WHEN event_id IS NOT NULL THEN concat('i', event_id) ELSE {key} END"
            khash = f"CASE WHEN event_id IS NOT NULL THEN xxhash64('i', event_id) ELSE {khash} END"
        # Candidates are found by a 64-bit hash of the key (NULL where there is none),
        # computed from the id or the v1 row hash without building the key string: one
        # hash aggregation over longs. A key whose hash collides with another's is a
        # candidate that turns out single below (its group has one row): exact.
        keyed = self._view(views, f"SELECT *, {key} AS __k, {khash} AS __h FROM {attributed}")
        repeated = self._view(views, f"SELECT __h FROM {keyed} WHERE __h IS NOT NULL "
                                     "GROUP BY __h HAVING count(*) > 1", cache=True)
        with reading(self.label):
            if self.spark.table(repeated).isEmpty():
                return attributed, Duplicates()  # the common case: one query
        # Each distinct content behind a repeated key, with its multiplicity (few rows),
        # and per key: how many distinct contents, how many rows, and one row to count it.
        per_key = self._view(views, f"""
            SELECT *, count(*) OVER (PARTITION BY __k) AS __dc,
                   sum(__n) OVER (PARTITION BY __k) AS __kn,
                   row_number() OVER (PARTITION BY __k ORDER BY __n) = 1 AS __first
            FROM (SELECT {cols}, _reason, __k, count(*) AS __n, substr(__k, 1, 1) = 'i' AS __v2
                  FROM {keyed} LEFT SEMI JOIN {repeated} ON {keyed}.__h = {repeated}.__h
                  GROUP BY {cols}, _reason, __k)""", cache=True)
        stats = self._collect(f"""
            SELECT coalesce(sum(__n), 0) AS dup,
                   count_if(NOT __v2) + count_if(__v2 AND __first) AS kept,
                   coalesce(sum(IF(__v2, 0, __n - 1)), 0) AS v1_removed,
                   count_if(__v2 AND __first AND __kn > 1) AS repeated,
                   count_if(__v2 AND __first AND __dc > 1) AS conflicting
            FROM {per_key}""")[0]
        source = self._view(views, (
            f"SELECT {cols}, _reason FROM {keyed} LEFT ANTI JOIN {repeated} "
            f"ON {keyed}.__h = {repeated}.__h "
            f"UNION ALL SELECT {cols}, _reason FROM {per_key} WHERE NOT (__v2 AND __dc > 1) "
            f"UNION ALL SELECT {D.conflict_row(query.schema.columns, query.experiment, 'first(event_id) AS event_id')}, "
            f"{D.literal(CONFLICT_REASON)} AS _reason "
            f"FROM {per_key} WHERE __v2 AND __dc > 1 GROUP BY __k"))
        return source, Duplicates(rows_removed=int(stats["dup"] - stats["kept"]),
                                  v1_rows_removed=int(stats["v1_removed"]),
                                  v2_ids_repeated=int(stats["repeated"]),
                                  v2_ids_conflicting=int(stats["conflicting"]))

    def _view(self, views: list[str], sql: str, cache: bool = False) -> str:
        """A temp view of ``sql`` (dropped after the query); ``cache``: small and reused,
        so kept once computed (``CACHE LAZY TABLE``: filled by the first query that reads
        it, which is one that must run anyway, and uncached after the verdict)."""
        name = f"__tooldisc_v{next(self._views)}"
        with reading(self.label):
            if cache:
                self._sql(f"CACHE LAZY TABLE {name} AS {sql}")
            else:
                self._sql(sql).createOrReplaceTempView(name)
        views.append(name)
        return name

    def _measure_sql(self, m: Measure) -> str:
        col = D.ident(m.column) if m.column else None
        where = D.render(m.where) if m.where is not None else None
        filt = f" FILTER (WHERE {where})" if where else ""
        if m.op == "count":
            return f"count(*){filt}"
        if m.op == "count_if":
            return f"count(*) FILTER (WHERE {where or 'TRUE'})"
        if m.op == "count_nonnull":
            return f"count({col}){filt}"
        if m.op in ("sum", "sum_sq"):
            assert m.column is not None
            return D.exact_sum(self.schema.column(m.column), m.op == "sum_sq", where)
        if m.op in ("min", "max"):
            return f"{m.op}({_orderable(self.schema, m.column)}){filt}"
        if m.op == "last":
            # as DuckDB's, packed into one decimal (engine.unpack_last): a max() of a
            # decimal keeps the cells a hash aggregation, where a max() of a struct made
            # them a sort aggregation (every row sorted by the group keys first). Valid
            # rows only: a quarantined value may not convert, and nothing reads it.
            order = _orderable(self.schema, m.order_by or "ts")
            packed = (f"CAST({order} AS DECIMAL(20,0)) * {LAST_STEPS} "
                      f"+ CAST(round({col} * 100) AS DECIMAL(20,0))")
            return f"max(CASE WHEN _reason IS NULL THEN {packed} END){filt}"
        if m.op == "distinct":
            return f"array_sort(collect_set({col}){filt})"
        raise ValueError(f"unknown measure op {m.op!r}")

    def _plain(self, m: Measure, v: Any) -> Any:
        if m.op in ("sum", "sum_sq"):
            assert m.column is not None
            return exact_value(self.schema.column(m.column).kind, m.op, v)
        if m.op == "last":
            return unpack_last(v)
        if m.op in ("min", "max"):
            return self._from_orderable(m.column, v)
        if m.op == "distinct":
            return [str(x) for x in (v or [])]
        if m.op in ("count", "count_if", "count_nonnull"):
            return int(v or 0)
        return v

    def _from_orderable(self, column: str | None, v: Any) -> Any:
        if column is not None and _is_ts(self.schema, column):
            return _micros_to_datetime(v)
        return v

    def _aggregate(self, query: AggregateQuery, source: str, dups: Duplicates) -> AggregateResult:
        measures = (*query.measures, *query.quarantine_measures)
        keys = (*query.group_by, *query.segments)
        sel = [f"{self._measure_sql(m)} AS {D.ident('m_' + m.name)}" for m in measures]
        group = ", ".join(["_reason", *(D.ident(k) for k in keys)])
        key_cols = "".join(f"{D.ident(k)}, " for k in keys)
        cells_sql = f"SELECT {key_cols}_reason, {', '.join(sel)} FROM {source} GROUP BY {group}"
        looks: list[tuple[tuple[str | None, ...], int, int | None, dict[str, Any]]] = []
        if query.looks is not None:
            # the looks are one more aggregation in the same action, over the same
            # (persisted) rows: no second read of the telemetry (engine contract, 6)
            cells_sql = (f"SELECT {key_cols}_reason, 0 AS __g, CAST(NULL AS BIGINT) AS __look, "
                         f"CAST(NULL AS BIGINT) AS __bin, {', '.join(sel)} FROM {source} GROUP BY {group}"
                         f" UNION ALL {self._looks_sql(query, source, measures)}")
        rows = self._collect(cells_sql)
        cells: list[tuple[tuple[str | None, ...], dict[str, Any]]] = []
        reasons: dict[str, int] = {}
        quarantine_rows: list[dict[str, Any]] = []
        count_name = next(m.name for m in measures if m.op == "count" and m.where is None)
        groups: set[tuple[str | None, ...]] = set()
        look_measures = query.looks.measures if query.looks is not None else ()
        for row in rows:
            if query.looks is not None and row["__g"] == 3:
                group_key = tuple(None if row[k] is None else str(row[k]) for k in query.group_by)
                looks.append((group_key, int(row["__look"]),
                              None if row["__bin"] is None else int(row["__bin"]),
                              {m.name: self._plain(m, row["m_" + m.name]) for m in look_measures}))
                continue
            key = tuple(None if row[k] is None else str(row[k]) for k in keys)
            vals = {m.name: self._plain(m, row["m_" + m.name]) for m in measures}
            if row["_reason"] is not None:
                reasons[row["_reason"]] = reasons.get(row["_reason"], 0) + int(vals[count_name])
                quarantine_rows.append(vals)
                continue
            cells.append((key, {m.name: vals[m.name] for m in query.measures}))
            groups.add(key[:len(query.group_by)])
        cells.sort(key=lambda kv: _sort_key(kv[0]))
        quantiles: dict[tuple[str | None, ...], tuple[float | None, ...]] = {}
        if query.quantile is not None and groups:
            found = self._quantiles(query, source)
            for g in groups:
                quantiles[g] = found.get(g, ())
        return AggregateResult(
            cells=tuple(cells),
            quantiles=dict(sorted(quantiles.items(), key=lambda kv: _sort_key(kv[0]))),
            quarantine_reasons=dict(sorted(reasons.items())),
            quarantine_values=total(query.quarantine_measures, quarantine_rows),
            duplicates=dups, looks=tuple(sorted(looks, key=look_order)))

    def _looks_sql(self, query: AggregateQuery, source: str, measures: tuple[Measure, ...]) -> str:
        """The union branch of the looks: the cells' columns in the same order (a union
        matches by position), the look measures computed, every other measure NULL."""
        spec = query.looks
        assert spec is not None
        wanted = {m.name for m in spec.measures}
        keys = (*query.group_by, *query.segments)
        cols = [D.ident(k) if k in query.group_by else f"CAST(NULL AS STRING) AS {D.ident(k)}" for k in keys]
        sel = [f"{self._measure_sql(m)} AS {D.ident('m_' + m.name)}" if m.name in wanted
               else f"NULL AS {D.ident('m_' + m.name)}" for m in measures]
        col = D.ident(spec.histogram)
        g = ", ".join(D.ident(k) for k in query.group_by)
        # the value, then its shift, each computed once per row (nested selects)
        rows = (f"SELECT *, {D.step_of(D.ident(spec.column), spec.step_us)} AS __look, "
                f"{D.thousandths(col)} AS __v FROM {source} WHERE _reason IS NULL")
        binned = (f"SELECT *, CASE WHEN __v IS NOT NULL THEN {D.log_bin('__v', '__s')} END AS __bin "
                  f"FROM (SELECT *, {D.bin_shift('__v')} AS __s FROM ({rows}))")
        return (f"SELECT {''.join(c + ', ' for c in cols)}CAST(NULL AS STRING) AS _reason, 3 AS __g, "
                f"__look, __bin, {', '.join(sel)} FROM ({binned}) GROUP BY {g + ', ' if g else ''}__look, __bin")

    def _quantiles(self, query: AggregateQuery, source: str) -> dict[tuple[str | None, ...],
                                                                     tuple[float | None, ...]]:
        """Nearest-rank order statistics per group (:meth:`Dialect.order_statistics`)."""
        q = query.quantile
        assert q is not None
        rows = self._collect(D.order_statistics(query, source))
        by_group: dict[tuple[str | None, ...], dict[int, float]] = {}
        for row in rows:
            key = tuple(None if row[k] is None else str(row[k]) for k in query.group_by)
            by_group.setdefault(key, {})[int(row["__lv"])] = float(row["__v"])
        return {key: tuple(found.get(lv) for lv in q.levels) for key, found in by_group.items()}


def _sort_key(key: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple("" if x is None else x for x in key)


def _is_ts(schema: RowSchema, column: str) -> bool:
    return column in schema.names and schema.column(column).kind == "ts"


def _orderable(schema: RowSchema, column: str | None) -> str:
    """Timestamps leave Spark as epoch microseconds: no Python-side time zone guesswork."""
    assert column is not None
    return f"unix_micros({D.ident(column)})" if _is_ts(schema, column) else D.ident(column)


def _source(spark: Any, raw: Any, loc: Location, schema: RowSchema,
            n: int) -> tuple[str, dict[str, str], str | None, set[str]]:
    """A temp view of source columns (and the file of each row, :data:`FILE`), their
    Spark types, the structural-reason column, and the columns typed by the source.

    ``key=value`` folders of local files are read as DuckDB reads them: a Parquet file's
    hive value replaces its own column, a CSV or JSONL file's fills a column it lacks."""
    fields = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
    view = f"__tooldisc_raw_{n}"
    hive = hive_keys(loc, schema.names)
    if loc.table is None:
        raw = raw.selectExpr("*", F_FILE)
    if loc.format == "jsonl":
        return (*_json_source(spark, raw, loc, schema, fields, view, hive), set())
    if loc.format == "parquet":
        hive_cols = {k: hive_sql(k, FILE) for k in hive}
    else:  # csv: only what the header lacks
        hive_cols = {k: hive_sql(k, FILE) for k in hive if k not in fields}
    present = {c: t for c, t in fields.items() if c in schema.names and c not in hive_cols}
    missing = [c for c in schema.required if c not in present and c not in hive_cols]
    if missing:
        raise DataError(f"lacks required columns: {', '.join(missing)}", file=loc.label)
    file_col = f", {FILE}" if loc.table is None else ""
    types = {**present, **dict.fromkeys(hive_cols, "string")}
    if loc.format == "csv":
        # A row Spark cannot split into the header's columns: all columns NULL, as DuckDB
        # rejects it; the reason names too many or too few fields.
        width = list(fields).index(CORRUPT)  # header columns come first, hive ones after
        from_csv = (f"from_csv({CORRUPT}, {spark_literal(_csv_probe(width))}, "
                    "map('escape', '\"'))")
        cols = ", ".join([f"CASE WHEN {CORRUPT} IS NULL THEN {D.ident(c)} END AS {D.ident(c)}"
                          for c in present]
                         + [f"CASE WHEN {CORRUPT} IS NULL THEN {e} END AS {D.ident(k)}"
                            for k, e in hive_cols.items()])
        raw.createOrReplaceTempView(view + "_in")
        spark.sql(
            f"SELECT {cols}, CASE WHEN {CORRUPT} IS NOT NULL THEN CASE WHEN "
            f"{from_csv}.__extra IS NOT NULL THEN 'csv: too many columns' "
            f"ELSE 'csv: missing columns' END END AS __bad{file_col} FROM {view}_in"
        ).createOrReplaceTempView(view)
        return view, types, "__bad", set()
    if hive_cols:
        raw = raw.selectExpr(*(D.ident(c) for c in raw.columns if c not in hive_cols),
                             *(f"{e} AS {D.ident(k)}" for k, e in hive_cols.items()))
    raw.createOrReplaceTempView(view)
    # Parquet and tables carry their own types; hive folder values are text. Remotely,
    # Spark's own discovery adds the hive columns, as strings that look like any string
    # column: string columns are read as text there.
    if loc.path is not None and not loc.files:
        return view, types, None, {c for c, t in present.items() if D.category(t) != "str"}
    return view, types, None, set(present)


def _csv_probe(width: int) -> str:
    cols = ", ".join(f"c{i} STRING" for i in range(width))
    return f"{cols}, __extra STRING"


def _json_tag(v: str) -> str:
    """The JSON type of a variant value as :data:`tooldisc.canary.events.JSON_TYPES` tags
    it (DuckDB's ``json_type`` tagged alike): a decimal is a non-integer number, as JSON
    ``1.0`` is (Spark parses it as a decimal)."""
    t = f"schema_of_variant({v})"
    return (f"CASE WHEN {v} IS NULL THEN NULL WHEN {t} = 'STRING' THEN 'string' "
            f"WHEN {t} = 'BOOLEAN' THEN 'bool' WHEN {t} = 'BIGINT' THEN 'int' "
            f"WHEN {t} = 'DOUBLE' OR {t} LIKE 'DECIMAL%' THEN 'float' "
            f"WHEN {t} = 'VOID' THEN 'null' ELSE 'other' END")


def _json_source(spark: Any, raw: Any, loc: Location, schema: RowSchema, fields: Mapping[str, str],
                 view: str, local_hive: list[str]) -> tuple[str, dict[str, str], str | None]:
    """JSONL lines parsed once into a map of typed (variant) values; per file, every
    required key must appear. Each key's value is its text and JSON type, as DuckDB's
    reader gives them (:func:`tooldisc.canary.duckdb.ingest.json_rows`), and a key given twice
    is read by the same rule: a security flag true if any copy reads true, false if
    every copy is a valid false, else unknown; any other key unknown."""
    from tooldisc.canary.validation import JSON_TAG_PREFIX, JSON_VALUE

    found = [c for c in fields if c != LINE]  # hive columns Spark discovered (remote paths)
    hive = found + [k for k in local_hive if k not in found]
    raw.createOrReplaceTempView(view + "_lines")
    exprs = {h: D.ident(h) for h in found} | {k: hive_sql(k, FILE) for k in local_hive}
    parsed = (f"SELECT from_json({LINE}, 'map<string,variant>') AS __m, {LINE}, "
              f"{''.join(f'{e} AS {D.ident(h)}, ' for h, e in exprs.items())}{FILE} FROM {view}_lines "
              f"WHERE {LINE} IS NOT NULL AND trim({LINE}) <> ''")
    spark.sql(parsed).createOrReplaceTempView(view + "_parsed")
    has = ", ".join(f"max(map_contains_key(__m, {spark_literal(c)})) AS {D.ident(c)}"
                    for c in schema.names)
    with reading(loc.label):
        per_file = spark.sql(f"SELECT {FILE}, {has} FROM {view}_parsed GROUP BY {FILE}").collect()
    present: set[str] = set()
    for row in sorted(per_file, key=lambda r: r[FILE]):
        keys = {c for c in schema.names if row[c]}
        missing = [c for c in schema.required if c not in keys and c not in hive]
        if missing:
            raise DataError(f"lacks required columns: {', '.join(missing)}",
                            file=_local_name(row[FILE]))
        present |= keys
    dup = "size(__k) <> size(array_distinct(__k))"
    split = (f"SELECT *, CASE WHEN {dup} THEN array_distinct(filter(__k, (k, i) -> "
             f"array_position(__k, k) <> i + 1)) END AS __dups, CASE WHEN {dup} THEN "
             f"zip_with(__k, map_values(__m), (k, v) -> named_struct('k', k, 'v', CAST(v AS STRING), "
             f"'t', {_json_tag('v')})) END AS __kv FROM (SELECT *, map_keys(__m) AS __k "
             f"FROM {view}_parsed)")
    cols = []
    for name in (c for c in schema.names if c in present):
        value = f"__m[{spark_literal(name)}]"
        text, tag = f"CAST({value} AS STRING)", _json_tag(value)
        if name in schema.security:
            copies = f"filter(__kv, x -> x.k = {spark_literal(name)})"
            strict = D.parse_json(schema.column(name), "x.v", "x.t")[0]
            resolved = (f"CASE WHEN size({copies}) = 0 THEN NULL "
                        f"WHEN exists({copies}, x -> coalesce({D.reads_true('x.v')}, FALSE)) THEN 'true' "
                        f"WHEN forall({copies}, x -> coalesce(NOT {strict}, FALSE)) THEN 'false' END")
            cols.append(f"CASE WHEN __kv IS NULL THEN {text} ELSE {resolved} END AS {D.ident(name)}")
            cols.append(f"CASE WHEN __kv IS NULL THEN {tag} ELSE 'bool' END AS "
                        f"{D.ident(JSON_TAG_PREFIX + name)}")
            continue
        single = f"(__dups IS NULL OR NOT array_contains(__dups, {spark_literal(name)}))"
        cols.append(f"CASE WHEN {single} THEN {text} END AS {D.ident(name)}")
        cols.append(f"CASE WHEN {single} THEN {tag} END AS {D.ident(JSON_TAG_PREFIX + name)}")
    cols += [D.ident(h) for h in hive if h in schema.names and h not in present]
    bad = (f"CASE WHEN __m IS NULL THEN CASE WHEN get_json_object({LINE}, '$') IS NULL "
           f"THEN 'json: unparseable line' ELSE 'json: line is not an object' END "
           f"WHEN {dup} THEN 'json: duplicate key' END AS __bad")
    spark.sql(f"SELECT {', '.join([*cols, bad, FILE])} FROM ({split})").createOrReplaceTempView(view)
    types = {c: JSON_VALUE for c in schema.names if c in present}
    types |= {h: fields.get(h, "string") for h in hive if h in schema.names and h not in present}
    return view, types, "__bad"


def _local_name(uri: str) -> str:
    """``file:///a%20b/x.jsonl`` → ``/a b/x.jsonl``, as a user typed it; other URIs as is."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else uri
