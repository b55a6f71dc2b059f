from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tooldisc.canary.duckdb.ingest import connect, ingest, open_rows
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.canary.synthetic.events import synthesize
from tooldisc.canary.verdict import run_verdict
from tooldisc.errors import DataError

GOOD = {
    "schema_version": 1, "ts": "2025-01-01T10:00:00+03:30", "experiment": "e1", "percent": 10,
    "arm": "experiment", "bucket": 42, "channel": "web", "mode": "autonomous", "mutation": "read",
    "candidate_count": 100, "final_tool_count": 15, "k": 15, "index_hit": True, "fallback": False,
    "fallback_reason": None, "discovery_miss": 0, "schema_miss": False, "retrieval_miss": False,
    "authorization_failure": False, "unauthorized_candidate": False, "tenant_leak": False,
    "permission_violation": False, "tool_execution_success": None, "task_success": True,
    "latency_ms": 12.5, "schema_tokens": 2000, "kill_switch": False,
}


def write_jsonl(path: Path, rows: list[dict | str]) -> None:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")


def reasons(path: Path) -> dict[str | None, int]:
    con = connect()
    open_rows(con, str(path), EVENT_SCHEMA)
    return dict(con.execute("SELECT _reason, count(*) FROM rows_all GROUP BY 1").fetchall())


@pytest.mark.parametrize(("change", "reason"), [
    ({"ts": "2025-01-01T10:00:00"}, "ts: not a timestamp with Z or an offset"),
    ({"arm": "treatment"}, "arm: must be one of control, experiment"),
    ({"fallback": True}, "fallback_reason: required when fallback is true"),
    ({"fallback_reason": "empty"}, "fallback_reason: must be null when fallback is false"),
    ({"percent": 10.005}, "percent: must be in [0, 100] in steps of 0.01"),
    ({"tenant_leak": "yes"}, "tenant_leak: not a valid bool"),
    ({"tenant_leak": 2}, "tenant_leak: not a valid bool"),
    ({"schema_miss": "false"}, "schema_miss: not a valid bool"),  # a JSON string is not a flag
    ({"experiment": ["e1"]}, "experiment: not a valid string"),
    ({"experiment": 7}, "experiment: not a valid string"),
    ({"bucket": "42"}, "bucket: not a valid int"),
    ({"latency_ms": "12.5"}, "latency_ms: not a valid number"),
    ({"k": 1.5}, "k: not a valid int"),
    ({"bucket": 10_000}, "bucket: must be an integer >= 0 and <= 9999"),
    ({"schema_version": 4}, "schema_version: must be 1, 2 or 3"),
    ({"schema_version": 2}, "event_id: required when schema_version is 2"),
    ({"event_id": "6b1e8c52-3f0a-4c1b-9d7e-2a5f4e3d2c1b"}, "event_id: must be absent when schema_version is 1"),
    ({"schema_version": 2, "event_id": "alice@example.com"}, "event_id: not a UUID"),
    ({"latency_ms": None}, "latency_ms: missing"),
    ({"experiment": ""}, "experiment: must be non-empty"),
])
def test_bad_rows_are_quarantined_with_their_reason(tmp_path: Path, change: dict, reason: str) -> None:
    f = tmp_path / "e.jsonl"
    write_jsonl(f, [GOOD, {**GOOD, **change}])
    assert reasons(f) == {None: 1, reason: 1}


def test_unparseable_lines_are_counted_not_dropped(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    write_jsonl(f, [GOOD, "{not json", "[1, 2]", GOOD])
    assert reasons(f) == {None: 2, "json: unparseable line": 1, "json: line is not an object": 1}


def test_missing_required_column_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    write_jsonl(f, [{k: v for k, v in GOOD.items() if k != "kill_switch"}])
    with pytest.raises(DataError, match="lacks required columns: kill_switch") as exc:
        reasons(f)
    assert exc.value.file == str(f)


def test_unreadable_parquet_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "e.parquet"
    f.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DataError, match="cannot be read as parquet"):
        reasons(f)


def test_hive_partitions_supply_columns(tmp_path: Path) -> None:
    d = tmp_path / "experiment=e1" / "percent=10"
    d.mkdir(parents=True)
    write_jsonl(d / "part.jsonl", [{k: v for k, v in GOOD.items() if k not in ("experiment", "percent")}])
    _, report = run_verdict(EVENT_SCHEMA, "e1", events=str(tmp_path / "**" / "*.jsonl"))
    assert report["arms"]["experiment"]["requests"] == 1
    assert report["current_percent"] == 10


def test_ingest_quarantines_and_is_idempotent_by_content(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    synthesize(src / "a.parquet", 2_000, "corrupt_rows", percent=50, seed=2)
    write_jsonl(src / "b.jsonl", [GOOD, "{oops"])
    db = tmp_path / "c.duckdb"
    first = ingest(db, str(src / "*"), EVENT_SCHEMA)
    assert first.ingested == 2 and first.skipped_duplicates == 0
    assert first.rows + first.quarantined == 2_002
    assert first.reasons["json: unparseable line"] == 1
    shutil.copy(src / "a.parquet", src / "a_copy.parquet")  # same content, new name
    again = ingest(db, str(src / "*"), EVENT_SCHEMA)
    assert (again.ingested, again.skipped_duplicates, again.rows, again.quarantined) == (0, 3, 0, 0)
    con = connect(db)
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == first.rows
    assert con.execute("SELECT count(*) FROM events_quarantine WHERE _raw IS NOT NULL").fetchone()[0] \
        == first.quarantined
    con.close()
    # --db and --events agree
    _, via_db = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", db=str(db))
    _, via_files = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(src / "a.parquet"))
    assert via_db["arms"] == via_files["arms"]
    assert via_db["quarantined"] == via_files["quarantined"] + 1  # the JSONL line lacks an experiment


def test_extra_columns_never_enter_the_database(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    write_jsonl(f, [{**GOOD, "user_id": "alice", "query": "secret"}])
    db = tmp_path / "c.duckdb"
    ingest(db, str(f), EVENT_SCHEMA)
    con = connect(db)
    cols = {r[0] for r in con.execute("SELECT column_name FROM (DESCRIBE events)").fetchall()}
    con.close()
    assert "user_id" not in cols and "query" not in cols


def test_window_filters_rows(tmp_path: Path) -> None:
    f = tmp_path / "e.parquet"
    synthesize(f, 4_000, "healthy", percent=50)
    _, whole = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(f))
    _, half = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(f),
                          since="2025-01-01T12:00:00Z", until="2025-01-02T00:00:00Z")
    _, empty = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(f),
                           since="2030-01-01T00:00:00Z")
    n = sum(a["requests"] for a in whole["arms"].values())
    m = sum(a["requests"] for a in half["arms"].values())
    assert n == 4_000 and 1_700 < m < 2_300
    assert empty["verdict"] == "HOLD" and empty["arms"] == {}


def test_parquet_uuid_typed_event_ids_still_read(tmp_path: Path) -> None:
    """synth writes ids as text; a file whose ids use Parquet's UUID type reads the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    synthesize(tmp_path / "text.parquet", 1_000, "duplicated", percent=50, seed=2)
    table = pq.read_table(tmp_path / "text.parquet")
    as_uuid = pa.array([__import__("uuid").UUID(x).bytes for x in table["event_id"].to_pylist()],
                       type=pa.binary(16))
    typed = table.set_column(table.schema.get_field_index("event_id"), "event_id",
                             pa.ExtensionArray.from_storage(pa.uuid(), as_uuid))
    pq.write_table(typed, tmp_path / "uuid.parquet")
    assert pq.read_schema(tmp_path / "uuid.parquet").field("event_id").type == pa.uuid()
    exp = "indexed-retrieval-v1"
    _, text = run_verdict(EVENT_SCHEMA, exp, events=str(tmp_path / "text.parquet"))
    _, uuid = run_verdict(EVENT_SCHEMA, exp, events=str(tmp_path / "uuid.parquet"))
    assert text.pop("files") == [{"path": "text.parquet", "rows": 2_000}]
    assert uuid.pop("files") == [{"path": "uuid.parquet", "rows": 2_000}]
    assert text == uuid and text["quarantine"]["count"] == 0
    assert text["duplicates"]["v2_ids_repeated"] == 1_000


def test_parquet_files_of_one_schema_read_as_one_scan_like_one_view_each(tmp_path: Path) -> None:
    """Grouped Parquet reading (one scan per schema, for memory) yields exactly the rows,
    reasons and files that one view per file yields: hive-supplied values cast as the
    file alone is read, a hive key that is also a file column, and two schemas apart."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tooldisc.canary.duckdb.ingest import attach, expand

    synthesize(tmp_path / "base.parquet", 300, "corrupt_rows", percent=50, seed=3)
    table = pq.read_table(tmp_path / "base.parquet")
    no_pct = table.drop_columns(["percent"])
    layout = {"percent=10/a.parquet": no_pct, "percent=10/b.parquet": no_pct,
              "percent=12.5/c.parquet": no_pct, "percent=20/d.parquet": table,
              "flat/e.parquet": table, "flat/f.parquet": table,
              "flat/g.parquet": table.set_column(table.schema.get_field_index("bucket"), "bucket",
                                                 table.column("bucket").cast(pa.int64()))}
    for name, t in layout.items():
        (tmp_path / "d" / name).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(t, tmp_path / "d" / name)
    pattern = str(tmp_path / "d")
    cols = "* EXCLUDE (_file), replace(_file, " + repr(str(tmp_path)) + ", '') AS f"

    class Recorded:
        """The connection, recording each statement."""

        def __init__(self, con: object) -> None:
            self.con, self.sql = con, []

        def execute(self, sql: str, *args: object) -> object:
            self.sql.append(sql)
            return self.con.execute(sql, *args)

    con = connect()
    recorded = Recorded(con)
    sources = open_rows(recorded, pattern, EVENT_SCHEMA)
    # e+f and a+b+c one scan each (hive values are text, 10 and 12.5 alike); g (bucket
    # int64) alone; d on its own (hive key percent is also a column in the file)
    assert [s.view for s in sources] == ["src_6", "pq_0", "src_8", "pq_2"]
    # each file's metadata is described once, also for the files read alone
    for path in expand(pattern):
        needle = f"DESCRIBE SELECT * FROM read_parquet('{path}', hive_types_autocast = false))"
        assert sum(needle in sql for sql in recorded.sql) == 1, path
    grouped = con.execute(f"SELECT {cols} FROM rows_all").fetchall()
    ref = connect()
    views = [attach(ref, p, EVENT_SCHEMA, i).view for i, p in enumerate(expand(pattern))]
    ref.execute("CREATE TEMP VIEW each AS " + " UNION ALL BY NAME ".join(f"SELECT * FROM {v}" for v in views))
    each = ref.execute(f"SELECT {cols} FROM each").fetchall()
    assert len(grouped) == len(each) == 7 * 300
    key = repr
    assert sorted(grouped, key=key) == sorted(each, key=key)
    assert {r[-1] for r in grouped} == {"/d/" + n for n in layout}


def test_a_write_the_disk_refuses_rolls_back_in_one_line_and_keeps_what_was_there(tmp_path: Path) -> None:
    """A full disk under --db was two DuckDB tracebacks (the failed COMMIT, then a ROLLBACK with no transaction
    left, which hid the first). Through the real command, under a file-size limit (EFBIG, as ENOSPC): one line
    naming the database, exit 2, and the rows ingested before are all still there."""
    import resource
    import subprocess
    import sys

    small, big = tmp_path / "small.jsonl", tmp_path / "big.parquet"
    write_jsonl(small, [GOOD])
    synthesize(big, 20_000, "healthy", seed=3)
    db = tmp_path / "c.duckdb"
    assert ingest(db, str(small), EVENT_SCHEMA).rows == 1
    limit = db.stat().st_size + 200_000  # room for what is there, not for 20,000 more rows

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "tooldisc.cli", "canary", "ingest", str(big), "--db", str(db)],
                          capture_output=True, text=True, timeout=300, preexec_fn=capped, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-600:]
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: {db}: nothing was ingested (rolled back): ") and "File too large" in line
    con = connect(db)
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM ingested_files").fetchone()[0] == 1
    con.close()
