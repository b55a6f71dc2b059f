"""The DuckDB engine: telemetry files or an ingested database, aggregated in-process.

Implements :class:`tooldisc.canary.engine.Engine`. Rows are typed and validated by the
SQL that :mod:`tooldisc.canary.validation` renders from the schema's rules (from files),
or were validated once by ``canary ingest`` (from a database). A verdict
is one scan of the files: the attributed rows (a materialised common table expression,
only the columns used) feed the cells, the per-group quantiles and a duplicate check; only when some de-duplication key repeats does the exact path
resolve the candidates and aggregate again. From a database the duplicate check reads
the ingest's per-row ``_dup`` flags instead of hashing every key
(:func:`tooldisc.canary.duckdb.ingest.mark_duplicates`). Only aggregates are fetched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tooldisc.canary.duckdb.ingest import DUP_FLAG, candidate_keys
from tooldisc.canary.engine import (
    CONFLICT_REASON,
    LAST_STEPS,
    AggregateQuery,
    AggregateResult,
    Duplicates,
    Measure,
    exact_value,
    look_order,
    unpack_last,
)
from tooldisc.canary.events import RowSchema
from tooldisc.canary.sql import DUCKDB, sql_literal
from tooldisc.errors import DataError, UsageError

if TYPE_CHECKING:
    from tooldisc.canary.duckdb.ingest import DuckDBLimits

D = DUCKDB


def attribution(experiment: str, in_window: str = "TRUE") -> str:
    """Which rows count for the experiment ``experiment`` (an SQL expression), as the
    engine contract's §1 says: its own rows, and every row whose ``experiment`` is
    unreadable (NULL or empty: a quarantined row that cannot be shown to belong
    elsewhere counts against every experiment), inside the window or with an unreadable
    ``ts``."""
    return (f"({experiment} = experiment OR experiment IS NULL OR experiment = '') "
            f"AND (ts IS NULL OR ({in_window}))")


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


class DuckDBEngine:
    """An open DuckDB relation of typed rows with ``_reason`` (NULL for a valid row)."""

    name = "duckdb"

    def __init__(self, con: Any, relation: str, schema: RowSchema, dup_flag: bool = False,
                 db_files: tuple[tuple[str, int], ...] | None = None):
        self.con = con
        self.relation = relation
        self.schema = schema
        # ``relation`` has the ingest's ``_dup`` column (:func:`tooldisc.canary.duckdb.ingest.mark_duplicates`)
        self.dup_flag = dup_flag
        self._files = db_files  # from a database: its ingested files; from files: counted once
        self._experiments: dict[str, int] | None = None
        self._names: dict[str, str] = {}  # file as read -> as reports name it

    @classmethod
    def from_events(cls, pattern: str, schema: RowSchema,
                    on_file: Callable[[str], None] | None = None,
                    limits: DuckDBLimits | None = None) -> DuckDBEngine:
        from tooldisc.canary.duckdb.ingest import connect, display_name, locate_files, open_rows

        root, files = locate_files(pattern)
        con = connect(limits=limits)
        open_rows(con, pattern, schema, on_file, files=files)
        engine = cls(con, "rows_all", schema)
        engine._names = {f: display_name(root, f) for f in files}
        return engine

    @classmethod
    def from_db(cls, db: str, schema: RowSchema, limits: DuckDBLimits | None = None) -> DuckDBEngine:
        import duckdb

        from tooldisc.canary.duckdb.ingest import connect

        if not os.path.isfile(db):
            raise DataError("no such database", file=db)
        try:
            con = connect(db, limits)
            tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        except duckdb.Error as exc:
            raise DataError(f"cannot be opened as DuckDB: {' '.join(str(exc).split())[:200]}",
                            file=db) from exc
        if schema.table not in tables or f"{schema.table}_quarantine" not in tables:
            con.close()
            raise DataError(f"has no {schema.table} table; run `tooldisc canary ingest` first", file=db)
        present = {r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [schema.table]).fetchall()}
        names = ", ".join(
            D.ident(c.name) if c.name in present else f"{D.null(c.kind)} AS {D.ident(c.name)}"
            for c in schema.columns)
        # a database ingested before the flag existed reads as "not known" (NULL)
        flag = DUP_FLAG if DUP_FLAG in present else f"NULL::BOOLEAN AS {DUP_FLAG}"
        con.execute(
            f"CREATE TEMP VIEW rows_all AS SELECT {names}, NULL::VARCHAR AS _reason, {flag} "
            f"FROM {schema.table} UNION ALL SELECT {names}, _reason, {flag} FROM {schema.table}_quarantine"
        )
        named = {r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'ingested_files'").fetchall()}
        name = "coalesce(name, path)" if "name" in named else "path"  # (no name before it existed)
        files = tuple((str(p), int(n)) for p, n in con.execute(
            f"SELECT {name} AS n, rows + quarantined FROM ingested_files "
            "WHERE row_schema = ? ORDER BY n, content_sha256", [schema.name]).fetchall()) if named else ()
        return cls(con, "rows_all", schema, dup_flag=True, db_files=files)

    def close(self) -> None:
        self.con.close()

    def experiments(self) -> dict[str, int]:
        """Rows per experiment name among rows whose ``experiment`` parsed (counted once;
        from files, the same scan counts each file's rows for :meth:`files`)."""
        if self._experiments is None:
            if self._files is not None:
                rows = self.con.execute(
                    f"SELECT experiment, count(*) FROM {self.relation} WHERE experiment IS NOT NULL "
                    "AND experiment <> '' GROUP BY experiment").fetchall()
                self._experiments = {str(e): int(n) for e, n in rows}
            else:
                counts = self.con.execute(
                    f"SELECT _file, experiment, count(*) FROM {self.relation} GROUP BY ALL").fetchall()
                self._experiments, self._files = per_experiment_and_file(
                    [(self._names.get(f, f), e, n) for f, e, n in counts])
        return dict(self._experiments)

    def files(self) -> tuple[tuple[str, int], ...]:
        """Each file judged, as given (sorted), with the rows read from it: from a database,
        every file it ingested (rows kept and quarantined)."""
        if self._files is None:
            self.experiments()
        assert self._files is not None
        return self._files

    # -- aggregation --------------------------------------------------------------------

    def aggregate(self, query: AggregateQuery) -> AggregateResult:
        """The window's aggregates; running out of the memory limit is one line, not a traceback."""
        import duckdb

        try:
            return self._aggregate_window(query)
        except duckdb.OutOfMemoryException as exc:
            limit = self.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
            raise UsageError(f"DuckDB ran out of memory within its limit ({limit}); "
                             "raise --duckdb-memory-limit") from exc

    def _aggregate_window(self, query: AggregateQuery) -> AggregateResult:
        in_window, bounds = window_condition(query.since, query.until)
        attributed = attribution("?", in_window)
        params: list[Any] = [query.experiment, *bounds]
        plain = f"(SELECT * FROM {self.relation} WHERE {attributed})"
        # One pass first: the aggregates over the rows as they are, and — from the same
        # scan — whether any de-duplication key occurs twice (from an ingested database:
        # whether any row is flagged as a candidate, or not flagged at all). With none
        # (the usual case) those aggregates are the answer; otherwise the exact path below
        # resolves the candidates and aggregates again.
        result, candidates, unflagged = self._aggregate(query, plain, params, Duplicates(),
                                                        find_duplicates=query.dedup)
        if not candidates:
            return result
        try:
            source, dups = self._deduplicated(query, attributed, params,
                                              flagged=self.dup_flag and not unflagged)
            return self._aggregate(query, source, params, dups)[0]
        finally:
            self.con.execute("DROP TABLE IF EXISTS __dedup_rows")

    def _deduplicated(self, query: AggregateQuery, attributed: str,
                      params: list[Any], flagged: bool = False) -> tuple[str, Duplicates]:
        """The attributed rows with duplicates resolved (see the engine contract).

        Run only when the one-scan check found a repeated key hash (or a flagged row).
        The candidates are the rows the ingest flagged (``flagged``: every attributed row
        carries the flag), else found by two scans — ids seen twice (by a hash of the
        id), and a hash of v1 rows seen twice (computed only on v1 rows) — and only
        candidate rows are compared exactly. Neither scan reads ``_reason``, so they
        skip validation. A candidate that turns out unrepeated within the window is
        kept as it is, so a superset of the repeated rows gives the same answer.
        """
        plain = f"(SELECT * FROM {self.relation} WHERE {attributed})"
        if not query.dedup:
            return plain, Duplicates()
        names = query.schema.names
        has_id = "event_id" in names
        cols = ", ".join(D.ident(c) for c in names)
        v1_cond, v1_hash = candidate_keys(query.schema)[-1]
        parts: list[str] = []
        if flagged:
            parts.append(DUP_FLAG)
        elif has_id:
            # candidates by a 64-bit hash of the id: half the key width of the id (a
            # collision only adds a candidate, which the exact comparison below settles)
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE __dup_ids AS SELECT hash(event_id) AS __k "
                f"FROM {self.relation} WHERE {attributed} AND event_id IS NOT NULL "
                f"GROUP BY __k HAVING count(*) > 1", params)
            if self.con.execute("SELECT count(*) FROM __dup_ids").fetchone()[0]:
                parts.append("(event_id IS NOT NULL AND hash(event_id) IN (SELECT __k FROM __dup_ids))")
        if not flagged:
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE __dup_v1 AS SELECT k FROM (SELECT {v1_hash} AS k FROM "
                f"{self.relation} WHERE {attributed} AND {v1_cond}) GROUP BY k HAVING count(*) > 1",
                params)
            if self.con.execute("SELECT count(*) FROM __dup_v1").fetchone()[0]:
                parts.append(f"({v1_cond} AND {v1_hash} IN (SELECT k FROM __dup_v1))")
        if not parts:
            return plain, Duplicates()
        dup_pred = " OR ".join(parts)
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __dup_rows AS SELECT {cols}, _reason FROM {self.relation} "
            f"WHERE {attributed} AND ({dup_pred})", params)
        conflicts = "SELECT NULL::UUID AS event_id WHERE FALSE"
        if has_id:
            conflicts = (f"SELECT event_id FROM __dup_rows WHERE event_id IS NOT NULL GROUP BY event_id "
                         f"HAVING count(DISTINCT struct_pack({cols}, _reason)) > 1")
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE __conflicts AS {conflicts}")
        if has_id:
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE __dedup_rows AS SELECT DISTINCT {cols}, _reason "
                f"FROM __dup_rows WHERE event_id IS NULL OR "
                f"NOT (event_id IN (SELECT event_id FROM __conflicts))")
            self.con.execute(
                f"INSERT INTO __dedup_rows SELECT {D.conflict_row(query.schema.columns, query.experiment, 'event_id')}, "
                f"{sql_literal(CONFLICT_REASON)} AS _reason FROM __dup_rows "
                f"WHERE event_id IN (SELECT event_id FROM __conflicts) GROUP BY event_id")
        else:
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE __dedup_rows AS "
                             f"SELECT DISTINCT {cols}, _reason FROM __dup_rows")

        def one(sql: str) -> int:
            return int(self.con.execute(sql).fetchone()[0])

        dup_rows, kept_rows = one("SELECT count(*) FROM __dup_rows"), one("SELECT count(*) FROM __dedup_rows")
        repeated = conflicting = 0
        if has_id:
            v1_removed = (one("SELECT count(*) FROM __dup_rows WHERE event_id IS NULL")
                          - one("SELECT count(*) FROM __dedup_rows WHERE event_id IS NULL"))
            repeated = one("SELECT count(*) FROM (SELECT event_id FROM __dup_rows WHERE event_id IS NOT "
                           "NULL GROUP BY event_id HAVING count(*) > 1)")
            conflicting = one("SELECT count(*) FROM __conflicts")
        else:
            v1_removed = dup_rows - kept_rows
        self.con.execute("DROP TABLE IF EXISTS __dup_rows")
        source = (f"(SELECT {cols}, _reason FROM {self.relation} WHERE {attributed} "
                  f"AND NOT coalesce({dup_pred}, FALSE) "
                  f"UNION ALL SELECT {cols}, _reason FROM __dedup_rows)")
        return source, Duplicates(rows_removed=dup_rows - kept_rows, v1_rows_removed=v1_removed,
                                  v2_ids_repeated=repeated, v2_ids_conflicting=conflicting)

    def _measure_sql(self, m: Measure, valid_only: bool = False) -> str:
        col = D.ident(m.column) if m.column else None
        where = D.render(m.where) if m.where is not None else None
        if m.op == "count":
            return f"count(*) FILTER (WHERE {where})" if where else "count(*)"
        if m.op == "count_if":
            return D.count_if(where or "TRUE")
        filt = f" FILTER (WHERE {where})" if where else ""
        if m.op == "count_nonnull":
            return f"count({col}){filt}"
        if m.op in ("sum", "sum_sq"):
            assert m.column is not None
            return D.exact_sum(self.schema.column(m.column), m.op == "sum_sq", where, valid_only)
        if m.op in ("min", "max"):
            return f"{m.op}({col}){filt}"
        if m.op == "last":
            # (max order, max value at it) packed into one HUGEINT (engine.unpack_last)
            o = D.ident(m.order_by or "ts")
            return (f"max(epoch_us({o})::HUGEINT * {LAST_STEPS} + CAST(round({col} * 100) AS HUGEINT))"
                    f"{filt}")
        if m.op == "distinct":
            return f"list(DISTINCT {col} ORDER BY {col}){filt}"
        raise ValueError(f"unknown measure op {m.op!r}")

    def _aggregate(self, query: AggregateQuery, source: str, params: list[Any], dups: Duplicates,
                   find_duplicates: bool = False) -> tuple[AggregateResult, int, int]:
        """The aggregates over ``source``, and (``find_duplicates``) how many
        de-duplication keys repeat among its rows — from an ingested database, how many
        rows are flagged as candidates or not flagged, and how many are not flagged —
        all from one scan of the files:
        ``source`` is a common table expression read by every consumer (cells, per-group
        quantiles, each key's repeat count). DuckDB materialises it (EXPLAIN shows a CTE
        node) with only the columns the consumers use, so those are kept narrow."""
        from tooldisc.canary.engine import total

        measures = (*query.measures, *query.quarantine_measures)
        keys = (*query.group_by, *query.segments)
        count_name = _count_name(query)

        def select(ms: tuple[Measure, ...], valid_only: bool) -> str:
            return ", ".join(f"{self._measure_sql(m, valid_only)} AS {D.ident('m_' + m.name)}"
                             for m in ms)

        # Valid rows' cells get the measures, quarantined rows (few) only their count and
        # the quarantine measures per reason: no measure is computed for rows that never
        # read it, and no sum needs a per-row guard against a quarantined value.
        cell_set = ", ".join(D.ident(k) for k in keys) or "_reason"  # (NULL: no keys, one cell)
        key_cols = f"NULL::VARCHAR AS _reason, {cell_set}" if keys else cell_set
        quarantined = tuple(m for m in query.measures if m.name == count_name) + query.quarantine_measures
        parts = [f"SELECT {key_cols}, 0 AS __g, "
                 f"{select(query.measures, True)} FROM __src WHERE _reason IS NULL GROUP BY {cell_set}",
                 f"SELECT _reason, 0 AS __g, {select(quarantined, False)} FROM __src "
                 f"WHERE _reason IS NOT NULL GROUP BY _reason"]
        if query.quantile is not None:
            parts.append(_quantile_sql(query))
        if query.looks is not None:
            parts.append(self._looks_sql(query, select))
        if find_duplicates and self.dup_flag:
            # The ingest flagged every row whose key may repeat: reading a flag replaces
            # hashing every key (a row without a flag, NULL, counts as a candidate).
            parts.append(f"SELECT 2 AS __g, count(*) FILTER (WHERE {DUP_FLAG} IS NOT FALSE) AS __n, "
                         f"count(*) FILTER (WHERE {DUP_FLAG} IS NULL) AS __u FROM __src")
        elif find_duplicates:
            # Each key's hash is computed where the rows are read, so the shared scan
            # carries two 64-bit hashes instead of the 36-character ids (and, for the v1
            # key, every column); a row without that key has a NULL hash.
            hashed = [f"CASE WHEN {cond} THEN {key} END AS __k{i}"
                      for i, (cond, key) in enumerate(candidate_keys(query.schema))]
            source = f"(SELECT *, {', '.join(hashed)} FROM {source})"
            for i in range(len(hashed)):
                # rows beyond the first per key hash: 0 means no key repeats
                parts.append(f"SELECT 2 AS __g, count(__k{i}) - count(DISTINCT __k{i}) AS __n "
                             f"FROM __src")
        cur = self.con.execute(f"WITH __src AS {source}\n" + "\nUNION ALL BY NAME\n".join(parts),
                               params)
        names = [d[0] for d in cur.description]
        cells: list[tuple[tuple[str | None, ...], dict[str, Any]]] = []
        quantiles: dict[tuple[str | None, ...], tuple[float | None, ...]] = {}
        reasons: dict[str, int] = {}
        quarantine_rows: list[dict[str, Any]] = []
        n_group = len(query.group_by)
        candidates = unflagged = 0
        looks: list[tuple[tuple[str | None, ...], int, int | None, dict[str, Any]]] = []
        look_measures = query.looks.measures if query.looks is not None else ()
        for values in cur.fetchall():
            row = dict(zip(names, values, strict=True))
            if row["__g"] == 3:
                key = tuple(None if row[k] is None else str(row[k]) for k in query.group_by)
                looks.append((key, int(row["__look"]), None if row["__bin"] is None else int(row["__bin"]),
                              {m.name: _plain(self.schema, m, row["m_" + m.name]) for m in look_measures}))
                continue
            if row["__g"] == 2:
                candidates += int(row["__n"])
                unflagged += int(row.get("__u") or 0)
                continue
            if row["__g"] == 1:
                key = tuple(None if row[k] is None else str(row[k]) for k in query.group_by)
                quantiles[key[:n_group]] = tuple(None if v is None else float(v)
                                                 for v in (row["__q"] or []))
                continue
            key = tuple(None if row[k] is None else str(row[k]) for k in keys)
            vals = {m.name: _plain(self.schema, m, row["m_" + m.name]) for m in measures}
            if row["_reason"] is not None:
                reasons[row["_reason"]] = reasons.get(row["_reason"], 0) + int(vals[count_name])
                quarantine_rows.append(vals)
                continue
            cells.append((key, {m.name: vals[m.name] for m in query.measures}))
        if query.quantile is not None:
            # a group whose valid rows have no value to rank reads as no order statistics
            for group in {key[:n_group] for key, _ in cells} | (set() if n_group else {()}):
                quantiles.setdefault(group, ())
        cells.sort(key=lambda kv: tuple("" if x is None else x for x in kv[0]))
        result = AggregateResult(cells=tuple(cells), quantiles=dict(sorted(
                                     quantiles.items(), key=lambda kv: tuple("" if x is None else x for x in kv[0]))),
                                 quarantine_reasons=dict(sorted(reasons.items())),
                                 quarantine_values=total(query.quarantine_measures, quarantine_rows),
                                 duplicates=dups, looks=tuple(sorted(looks, key=look_order)))
        return result, candidates, unflagged

    def _looks_sql(self, query: AggregateQuery, select: Callable[[tuple[Measure, ...], bool], str]) -> str:
        """Valid rows per group, timestamp step and histogram bin (engine contract, 6):
        one more reader of the shared scan. Only named columns, so the materialised scan
        stays as narrow as its other readers need."""
        spec = query.looks
        assert spec is not None
        g = "".join(f"{D.ident(k)}, " for k in query.group_by)
        col = D.ident(spec.histogram)
        step = D.step_of(D.ident(spec.column), spec.step_us)
        # the value, then its shift, each computed once per row (nested selects)
        rows = f"SELECT *, {step} AS __look, {D.thousandths(col)} AS __v FROM __src WHERE _reason IS NULL"
        return (f"SELECT {g}3 AS __g, __look, CASE WHEN __v IS NOT NULL THEN {D.log_bin('__v', '__s')} END "
                f"AS __bin, {select(spec.measures, True)} FROM (SELECT *, {D.bin_shift('__v')} AS __s "
                f"FROM ({rows})) GROUP BY {g}__look, __bin")


def per_experiment_and_file(counts: list[Any]) -> tuple[dict[str, int], tuple[tuple[str, int], ...]]:
    """(rows per experiment, rows per file, sorted) from (file, experiment, rows) groups."""
    experiments: dict[str, int] = {}
    files: dict[str, int] = {}
    for path, experiment, n in counts:
        if experiment is not None and experiment != "":
            experiments[str(experiment)] = experiments.get(str(experiment), 0) + int(n)
        files[str(path)] = files.get(str(path), 0) + int(n)
    return dict(sorted(experiments.items())), tuple(sorted(files.items()))


def _quantile_sql(query: AggregateQuery) -> str:
    """Per group, the order statistics (:meth:`Dialect.order_statistics`) as a list in level order."""
    g = [D.ident(k) for k in query.group_by]
    gl = "".join(f"{x}, " for x in g)
    return (f"SELECT {gl}1 AS __g, list(__v ORDER BY __lv) AS __q "
            f"FROM ({D.order_statistics(query, '__src')}) __o"
            + (f" GROUP BY {', '.join(g)}" if g else ""))


def _count_name(query: AggregateQuery) -> str:
    for m in (*query.measures, *query.quarantine_measures):
        if m.op == "count" and m.where is None:
            return m.name
    raise ValueError("an aggregate query needs a plain row count measure")


def _plain(schema: RowSchema, m: Measure, v: Any) -> Any:
    if m.op in ("sum", "sum_sq"):
        assert m.column is not None
        return exact_value(schema.column(m.column).kind, m.op, v)
    if m.op == "last":
        return unpack_last(v)
    if m.op == "distinct":
        return [str(x) for x in (v or [])]
    if m.op in ("count", "count_if", "count_nonnull"):
        return int(v or 0)
    return v
