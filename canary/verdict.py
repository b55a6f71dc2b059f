"""One verdict end to end: open the telemetry, aggregate, judge, and build the report dict.

The CLI and library callers share this so ``--db`` and ``--events`` give the same
answer for the same rows.
"""

from __future__ import annotations

import os
from typing import Any

from tooldisc.canary.events import RowSchema
from tooldisc.canary.gates import Verdict

from tooldisc.errors import DataError, UsageError


def _open_db(schema: RowSchema, db: str) -> tuple[Any, str]:
    import duckdb
    from tooldisc.canary.ingest import connect

    if not os.path.isfile(db):
        raise DataError("no such database", file=db)
    try:
        con = connect(db)
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    except duckdb.Error as exc:
        raise DataError(f"cannot be opened as DuckDB: {' '.join(str(exc).split())[:200]}",
                        file=db) from exc
    if schema.table not in tables or f"{schema.table}_quarantine" not in tables:
        raise DataError(f"has no {schema.table} table; run `tooldisc canary ingest` first", file=db)
    names = ", ".join(f'"{c}"' for c in schema.names)
    con.execute(
        f"CREATE TEMP VIEW rows_all AS SELECT {names}, NULL::VARCHAR AS _reason FROM {schema.table} "
        f"UNION ALL SELECT {names}, _reason FROM {schema.table}_quarantine"
    )
    return con, "rows_all"


def run_verdict(schema: RowSchema, experiment: str, *, db: str | None = None,
                events: str | None = None, gates: str | None = None, since: str | None = None,
                until: str | None = None) -> tuple[Verdict, dict[str, Any]]:
    """Judge ``experiment`` from a database or from files; returns the verdict and report dict."""
    from tooldisc.canary.aggregate import aggregate, parse_time
    from tooldisc.canary.config import load_gates
    from tooldisc.canary.gates import judge
    from tooldisc.canary.ingest import connect, open_rows
    from tooldisc.reports.canary_report import verdict_dict

    if not experiment:
        raise UsageError("--experiment must be non-empty")
    cfg = load_gates(gates)
    t0, t1 = parse_time(since, "--since"), parse_time(until, "--until")
    if t0 is not None and t1 is not None and t0 >= t1:
        raise UsageError("--since must be before --until")
    if db is not None:
        con, relation = _open_db(schema, db)
    else:
        assert events is not None
        con = connect()
        open_rows(con, events, schema)
        relation = "rows_all"
    try:
        if schema.name == "shadow":
            from tooldisc.canary.shadow import judge_shadow, shadow_aggregate

            verdict = judge_shadow(shadow_aggregate(con, relation, experiment, t0, t1), experiment, cfg)
        else:
            ev = aggregate(con, relation, experiment, t0, t1,
                           quantiles=(cfg.latency_experiment_quantile, cfg.latency_control_quantile))
            verdict = judge(ev, cfg)
    finally:
        con.close()
    return verdict, verdict_dict(verdict, cfg.confidence)
