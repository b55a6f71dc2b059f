"""One verdict end to end: open an engine, aggregate, judge, and build the report dict.

The CLI and library callers share this so ``--db`` and ``--events`` give the same
answer for the same rows, whichever engine computed the aggregates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooldisc.canary.engine import Engine
from tooldisc.canary.events import RowSchema
from tooldisc.canary.gates import Verdict
from tooldisc.errors import DataError, UsageError

if TYPE_CHECKING:
    from tooldisc.canary.duckdb.ingest import DuckDBLimits


def open_engine(schema: RowSchema, *, db: str | None = None, events: str | None = None,
                limits: DuckDBLimits | None = None) -> Engine:
    """The DuckDB engine over an ingested database or telemetry files."""
    from tooldisc.canary.duckdb.engine import DuckDBEngine

    if (db is None) == (events is None):
        raise UsageError("give exactly one of --db or --events")
    if db is not None:
        return DuckDBEngine.from_db(db, schema, limits)
    assert events is not None
    return DuckDBEngine.from_events(events, schema, limits=limits)


def check_experiment(engine: Engine, experiment: str, source: str) -> None:
    """An experiment absent from the data is bad input (a typo must not read as HOLD)."""
    present = engine.experiments()
    if experiment not in present:
        names = ", ".join(sorted(present)[:20]) or "none"
        more = f" (and {len(present) - 20} more)" if len(present) > 20 else ""
        raise DataError(f"no rows for experiment {experiment!r}; experiments present: {names}{more}",
                        file=source)


def run_verdict(schema: RowSchema, experiment: str, *, db: str | None = None,
                events: str | None = None, gates: str | None = None, since: str | None = None,
                until: str | None = None, engine: Engine | None = None,
                profile_name: str | None = None,
                limits: DuckDBLimits | None = None) -> tuple[Verdict, dict[str, Any]]:
    """Judge ``experiment`` from a database, files or an open engine; verdict and report dict."""
    from tooldisc.canary.aggregate import parse_time
    from tooldisc.canary.config import load_gates
    from tooldisc.canary.document import verdict_dict
    from tooldisc.canary.profiles import profile, profiles

    if not experiment:
        raise UsageError("--experiment must be non-empty")
    if profile_name is None:
        profile_name = next(p.name for p in profiles().values() if p.schema == schema)
    prof = profile(profile_name)
    cfg = load_gates(gates)
    t0, t1 = parse_time(since, "--since"), parse_time(until, "--until")
    if t0 is not None and t1 is not None and t0 >= t1:
        raise UsageError("--since must be before --until")
    own = engine is None
    eng = engine if engine is not None else open_engine(prof.schema, db=db, events=events,
                                                                    limits=limits)
    try:
        check_experiment(eng, experiment, db or events or eng.name)
        verdict = prof.judge(prof.evidence(eng, experiment, t0, t1, cfg), experiment, cfg)
        files = [{"path": path, "rows": rows} for path, rows in eng.files()]
    finally:
        if own:
            eng.close()
    # every file judged, so a reader sees that nothing was skipped (paths as given)
    return verdict, {**verdict_dict(verdict, cfg.confidence), "files": files}
