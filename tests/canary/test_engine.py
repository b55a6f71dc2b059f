"""The DuckDB engine against its contract (tooldisc.canary.engine): quantiles, de-duplication,
old databases."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tooldisc.canary.aggregate import aggregate
from tooldisc.canary.duckdb.engine import DuckDBEngine
from tooldisc.canary.duckdb.ingest import connect, ingest
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.canary.sequential import rank
from tooldisc.canary.synthetic.events import synthesize

EXP = "indexed-retrieval-v1"


def test_quantiles_are_nearest_rank_order_statistics(tmp_path: Path) -> None:
    src = tmp_path / "a.parquet"
    synthesize(src, 30_011, "healthy", percent=37, seed=8)
    t = pq.read_table(src)
    rng = np.random.default_rng(0)  # high-resolution latencies, many ties removed
    lat = np.round(rng.lognormal(5, 0.7, t.num_rows), 6)
    arms = np.array(t.column("arm").to_pylist())
    ev = _judge_with_latencies(src, t, lat, arms)
    assert all(stats.latency_order.n == stats.requests for stats in ev.arms.values())


def test_quantiles_with_many_ties_and_a_tiny_arm(tmp_path: Path) -> None:
    """Order statistics are read from counts of distinct values: ties and an arm of
    one row must still give the nearest-rank values."""
    src = tmp_path / "a.parquet"
    synthesize(src, 4_001, "healthy", percent=37, seed=3)
    t = pq.read_table(src)
    rng = np.random.default_rng(1)
    lat = rng.choice([0.0, 1.5, 2.0, 2.5, 900.0], size=t.num_rows, p=[0.1, 0.5, 0.3, 0.09, 0.01])
    arms = np.array(t.column("arm").to_pylist())
    arms[1:] = np.where(arms[1:] == "experiment", "control", arms[1:])
    arms[0] = "experiment"
    ev = _judge_with_latencies(src, t, lat, arms)
    assert set(ev.arms) == {"control", "experiment"} and ev.arms["experiment"].requests == 1


def _judge_with_latencies(src: Path, t: pa.Table, lat: np.ndarray, arms: np.ndarray):
    """Write ``t`` with these latencies and arms, judge it, and check each arm's order
    statistics against the nearest-rank values computed here."""
    t = t.set_column(t.schema.get_field_index("latency_ms"), "latency_ms", pa.array(lat))
    t = t.set_column(t.schema.get_field_index("arm"), "arm", pa.array(arms.tolist()))
    pq.write_table(t, src)
    engine = DuckDBEngine.from_events(str(src), EVENT_SCHEMA)
    try:
        ev = aggregate(engine, EXP)
    finally:
        engine.close()
    for name, stats in ev.arms.items():
        xs = np.sort(lat[arms == name])
        os = stats.latency_order
        assert os is not None and os.n == xs.size
        assert list(os.values) == [float(xs[rank(k, xs.size) - 1]) for k in os.levels]
    return ev


def test_segments_add_up_to_the_arms(tmp_path: Path) -> None:
    src = tmp_path / "a.parquet"
    synthesize(src, 8_000, "corrupt_rows", percent=25, seed=2)
    engine = DuckDBEngine.from_events(str(src), EVENT_SCHEMA)
    try:
        ev = aggregate(engine, EXP)
    finally:
        engine.close()
    for seg, values in ev.segments.items():
        for arm, stats in ev.arms.items():
            parts = [v[arm] for v in values.values() if arm in v]
            assert sum(p.requests for p in parts) == stats.requests, seg
            assert sum(p.task_successes for p in parts) == stats.task_successes
            assert abs(sum(p.latency_sum for p in parts) - stats.latency_sum) < 1e-6 * stats.latency_sum


def test_an_old_database_without_event_id_still_ingests_and_judges(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    con = connect(db)
    cols = ", ".join(f'"{c.name}" VARCHAR' if c.kind == "uuid" else f'"{c.name}" '
                     + {"int": "BIGINT", "version": "BIGINT", "number": "DOUBLE",
                        "percent": "DOUBLE", "bool": "BOOLEAN", "string": "VARCHAR",
                        "enum": "VARCHAR", "ts": "TIMESTAMPTZ"}[c.kind]
                     for c in EVENT_SCHEMA.columns if not c.optional)  # before event_id, teams, credit
    con.execute(f"CREATE TABLE events ({cols}, _file VARCHAR)")
    con.execute(f"CREATE TABLE events_quarantine ({cols}, _reason VARCHAR, _file VARCHAR, _raw VARCHAR)")
    con.close()
    src = tmp_path / "e.jsonl"
    synthesize(src, 2_000, "healthy", percent=50, seed=1)
    res = ingest(db, str(src), EVENT_SCHEMA)
    assert res.rows == 2_000 and res.quarantined == 0
    engine = DuckDBEngine.from_db(str(db), EVENT_SCHEMA)
    try:
        ev = aggregate(engine, EXP)
    finally:
        engine.close()
    assert sum(a.requests for a in ev.arms.values()) == 2_000
    assert json.dumps(ev.duplicates.__dict__) == json.dumps(
        {"rows_removed": 0, "v1_rows_removed": 0, "v2_ids_repeated": 0, "v2_ids_conflicting": 0})


def test_an_id_in_upper_case_or_padded_is_the_same_event(tmp_path: Path) -> None:
    """Ids are compared as canonical UUID text: a copy of each event whose id is upper
    case and padded with spaces (the fast lower-case path does not apply) counts once."""
    synthesize(tmp_path / "a.jsonl", 300, "healthy", percent=50, seed=3)
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    for r in rows:
        r["event_id"] = f"  {r['event_id'].upper()} "
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    engine = DuckDBEngine.from_events(str(tmp_path / "*.jsonl"), EVENT_SCHEMA)
    try:
        ev = aggregate(engine, EXP)
    finally:
        engine.close()
    assert sum(a.requests for a in ev.arms.values()) == 300 and ev.quarantined == 0
    assert (ev.duplicates.v2_ids_repeated, ev.duplicates.rows_removed) == (300, 300)


def _repeats(tmp_path: Path) -> tuple[Path, Path]:
    """a.jsonl: 1,200 v2 events and 40 v1 rows; b.jsonl: 60 exact copies, 30 conflicting
    copies (a task outcome flipped), 20 repeated v1 rows, a repeated bad row, and new events."""
    synthesize(tmp_path / "a.jsonl", 1_500, "healthy", percent=50, seed=4)
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    rows, fresh = rows[:1_200], rows[1_200:]
    v1 = [{**{k: v for k, v in r.items() if k != "event_id"}, "schema_version": 1} for r in rows[-40:]]
    bad = {**v1[0], "latency_ms": -1}  # quarantined, and still a v1 row with a key
    a = rows[:-40] + v1 + [bad]
    b = [*rows[:60], *({**r, "task_success": not r["task_success"]} for r in rows[60:90]), *v1[:20],
         bad, *fresh]
    for name, part in (("a", a), ("b", b)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    return tmp_path / "a.jsonl", tmp_path / "b.jsonl"


def test_a_database_gives_the_files_verdict_when_events_repeat_across_ingests(tmp_path: Path) -> None:
    """Ingest flags every row whose key may repeat (here: rows of the first ingest that
    the second repeats), and the verdict from the database equals the files' verdict,
    de-duplication counts included; without flagged rows no key is hashed at all."""
    from tooldisc.canary.verdict import run_verdict

    a, b = _repeats(tmp_path)
    db = tmp_path / "c.duckdb"
    ingest(db, str(a), EVENT_SCHEMA)
    engine = DuckDBEngine.from_db(str(db), EVENT_SCHEMA)
    engine._deduplicated = None  # type: ignore[method-assign]  # must not be needed
    try:
        assert aggregate(engine, EXP).duplicates.rows_removed == 0
    finally:
        engine.close()
    ingest(db, str(b), EVENT_SCHEMA)
    con = connect(db)
    flagged = con.execute("SELECT count_if(_dup), count_if(_dup IS NULL) FROM "
                          "(SELECT _dup FROM events UNION ALL SELECT _dup FROM events_quarantine)").fetchone()
    con.close()
    assert flagged == (2 * (60 + 30 + 20 + 1), 0)
    _, via_db = run_verdict(EVENT_SCHEMA, EXP, db=str(db))
    _, via_files = run_verdict(EVENT_SCHEMA, EXP, events=str(tmp_path / "*.jsonl"))
    assert json.dumps(via_db) == json.dumps(via_files)
    assert via_db["duplicates"] == {"rows_removed": 60 + 30 + 20 + 1, "v1_rows_removed": 21,
                                    "v2_ids_repeated": 90, "v2_ids_conflicting": 30}
    # Copies written without the flag (an older version, or by hand) of rows flagged
    # unique: the verdict cannot trust the flags, and hashes every key itself.
    con = connect(db)
    con.execute("INSERT INTO events SELECT * REPLACE (NULL AS _dup) FROM events WHERE NOT _dup "
                "AND schema_version = 2 LIMIT 25")
    con.close()
    engine = DuckDBEngine.from_db(str(db), EVENT_SCHEMA)
    try:
        again = aggregate(engine, EXP).duplicates
    finally:
        engine.close()
    assert (again.rows_removed, again.v2_ids_repeated) == (136, 115)

