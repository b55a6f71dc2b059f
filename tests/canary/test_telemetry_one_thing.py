"""Telemetry read as exactly one thing (issue 25, item 4), through the real commands.

A key given twice, a value of another type, an unreadable experiment, a column named
twice, a compressed or hidden file, a second ingest into a database in use: each case of
the issue, by example. The random search over the same re-encodings is
tests/canary/test_verdict_fuzz.py; Spark's parity tests/canary/test_spark.py.
"""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.canary import telemetry_fuzz as tf
from tests.conftest import ROOT, invoke_cli, run_cli
from tooldisc.canary.duckdb.ingest import connect, open_rows
from tooldisc.canary.events import EVENT_SCHEMA, encodings_markdown
from tooldisc.canary.verdict import run_verdict
from tooldisc.errors import DataError


def clean_lines(experiments: tuple[str, ...] = ("e1",), per_arm: int = 120, seed: int = 0) -> list[str]:
    """Rows that PROMOTE under ``tf.lenient_gates`` (one experiment per name)."""
    rng = random.Random(seed)
    return [json.dumps(tf.clean_row(rng, e, ("control", "experiment")[i % 2], i))
            for e in experiments for i in range(2 * per_arm)]


_SEEDS = iter(range(1000, 10**9))


def leak(experiment: object = "e1", **change: object) -> dict:
    """A row reporting a tenant leak (each with its own event id)."""
    row = tf.clean_row(random.Random(next(_SEEDS)), "e1", "experiment", 5)
    return {**row, "experiment": experiment, "tenant_leak": True, **change}


def verdict(events: Path, experiment: str, gates: Path) -> tuple[str, dict]:
    _, report = run_verdict(EVENT_SCHEMA, experiment, events=str(events), gates=str(gates))
    return report["verdict"], next(g for g in report["gates"] if g["name"] == "security")


@pytest.fixture()
def gates(tmp_path: Path) -> Path:
    return tf.lenient_gates(tmp_path / "gates.yaml")


# -- a key given twice ------------------------------------------------------------------------

TWICE = {
    "false then true": '"tenant_leak": false, "tenant_leak": true',
    "true then false": '"tenant_leak": true, "tenant_leak": false',
    "escaped key": '"tenant_leak": false, "tenant\\u005fleak": true',
    "three copies": '"tenant_leak": false, "tenant_leak": true, "tenant_leak": false',
    "a string copy": '"tenant_leak": false, "tenant_leak": "TRUE"',
}


def _twice(pair: str) -> str:
    row = leak()
    del row["tenant_leak"]
    return json.dumps(row)[:-1] + ", " + pair + "}"


@pytest.mark.parametrize("name", sorted(TWICE))
def test_a_key_given_twice_is_quarantined_and_true_if_any_copy_is(tmp_path: Path, gates: Path,
                                                                    name: str) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text("\n".join([*clean_lines(), _twice(TWICE[name])]) + "\n")
    outcome, security = verdict(events, "e1", gates)
    assert (outcome, security["status"]) == ("ROLLBACK", "fail")
    assert security["numbers"]["quarantined_rows_with_security_flag"] == 1


def test_a_key_given_twice_through_the_commands_events_and_db(tmp_path: Path, gates: Path) -> None:
    """The issue's case, each order, through ``verdict --events`` and ``ingest`` + ``--db``."""
    events = tmp_path / "e.jsonl"
    events.write_text("\n".join([*clean_lines(), _twice(TWICE["false then true"]),
                                 _twice(TWICE["true then false"])]) + "\n")
    db = tmp_path / "e.duckdb"
    assert run_cli("canary", "ingest", str(events), "--db", str(db)).returncode == 0
    outs = []
    for source in (["--events", str(events)], ["--db", str(db)]):
        res = run_cli("canary", "verdict", *source, "--experiment", "e1", "--gates", str(gates), "--json")
        assert res.returncode == 20, res.stderr
        outs.append(json.loads(res.stdout))
    assert outs[0] == outs[1]  # files listed alike too: the database remembers them
    assert outs[0]["quarantine"]["reasons"] == {"json: duplicate key": 2}
    assert outs[0]["files"] == [{"path": "e.jsonl", "rows": 242}]


def test_clean_copies_of_a_key_stay_clean_and_other_keys_given_twice_are_unknown(
        tmp_path: Path, gates: Path) -> None:
    events = tmp_path / "e.jsonl"
    both_false = _twice('"tenant_leak": false, "tenant_leak": 0')
    other = json.dumps({**leak(), "tenant_leak": False})[:-1] + ', "experiment": "e1"}'
    events.write_text("\n".join([*clean_lines(), both_false, other]) + "\n")
    outcome, security = verdict(events, "e1", gates)
    assert (outcome, security["status"]) == ("PROMOTE", "pass")
    con = connect()
    open_rows(con, str(events), EVENT_SCHEMA)
    rows = con.execute("SELECT experiment, tenant_leak, _reason FROM rows_all WHERE _reason IS NOT NULL "
                       "ORDER BY experiment NULLS LAST").fetchall()
    # the experiment given twice (even alike) is read as no one experiment
    assert rows == [("e1", False, "json: duplicate key"), (None, False, "json: duplicate key")]


# -- a value of another type --------------------------------------------------------------------

def test_an_experiment_of_another_type_taints_every_experiment_of_the_window(tmp_path: Path,
                                                                              gates: Path) -> None:
    """The issue's ``"experiment": ["indexed-retrieval-v1"]``: not another experiment, but
    no readable one, so the leak counts against every experiment in the window."""
    for value in (["e1"], {"name": "e1"}, 7, None):
        events = tmp_path / "e.jsonl"
        events.write_text("\n".join([*clean_lines(("e1", "e2")), json.dumps(leak(value))]) + "\n")
        for experiment in ("e1", "e2"):
            outcome, security = verdict(events, experiment, gates)
            assert (outcome, security["status"]) == ("ROLLBACK", "fail"), (value, experiment)
    # the leak unreadable as well: not judged (HOLD) for both, never PROMOTE
    events.write_text("\n".join([*clean_lines(("e1", "e2")),
                                 json.dumps(leak(["e1"], tenant_leak="maybe"))]) + "\n")
    for experiment in ("e1", "e2"):
        outcome, security = verdict(events, experiment, gates)
        assert (outcome, security["status"]) == ("HOLD", "not_judged"), experiment


@pytest.mark.parametrize(("value", "status"), [
    (True, "fail"), (1, "fail"), ("true", "fail"), (" TRUE ", "fail"), (1.0, "fail"), ("1", "fail"),
    ("yes", "not_judged"), ([True], "not_judged"), (None, "not_judged"), (0.5, "not_judged"),
    (False, "pass"), (0, "pass")])
def test_a_flag_of_another_type_is_true_in_any_reading_or_unknown(tmp_path: Path, gates: Path,
                                                                    value: object, status: str) -> None:
    """A flag must be a JSON boolean or 0/1; a row with anything else is quarantined, and
    its flag counts as an incident if any reading says true, else as unknown."""
    events = tmp_path / "e.jsonl"
    events.write_text("\n".join([*clean_lines(), json.dumps(leak(tenant_leak=value))]) + "\n")
    outcome, security = verdict(events, "e1", gates)
    assert security["status"] == status
    assert outcome == {"fail": "ROLLBACK", "not_judged": "HOLD", "pass": "PROMOTE"}[status]


def _reason(tmp_path: Path, name: str, data: bytes | str) -> str | None:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    con = connect()
    try:
        open_rows(con, str(path), EVENT_SCHEMA)
        return con.execute("SELECT _reason FROM rows_all WHERE experiment = 'p' OR experiment IS NULL "
                           "OR experiment = ''").fetchone()[0]
    finally:
        con.close()


def _probe_row() -> dict:
    return {**tf.clean_row(random.Random(1), "p", "control", 1)}


JSONL_PROBES = [  # (column, JSON value, reason or None: read)
    ("tenant_leak", True, None), ("tenant_leak", 1, None), ("tenant_leak", "true", "not a valid bool"),
    ("tenant_leak", 1.0, "not a valid bool"), ("tenant_leak", [True], "not a valid bool"),
    ("task_success", None, None), ("bucket", 12, None), ("bucket", 12.0, "not a valid int"),
    ("bucket", "12", "not a valid int"), ("latency_ms", 12, None), ("latency_ms", 1.25e2, None),
    ("latency_ms", "12.5", "not a valid number"), ("channel", "web", None),
    ("channel", 5, "not a valid string"), ("channel", ["web"], "not a valid string"),
    ("ts", "2025-01-01T00:00:00+01:00", None), ("ts", 1735689600, "not a timestamp with Z or an offset"),
    ("schema_version", 2, None), ("schema_version", "2", "not a valid version"),
]


@pytest.mark.parametrize(("column", "value", "reason"), JSONL_PROBES)
def test_jsonl_encodings_are_those_of_the_table(tmp_path: Path, column: str, value: object,
                                                reason: str | None) -> None:
    row = {**_probe_row(), column: value}
    got = _reason(tmp_path, "p.jsonl", json.dumps(row) + "\n")
    assert got == (None if reason is None else f"{column}: {reason}")


CSV_PROBES = [("tenant_leak", "TRUE", None), ("tenant_leak", " 1 ", None), ("tenant_leak", "yes", "not a valid bool"),
              ("bucket", "+12", None), ("bucket", "12.0", "not a valid int"), ("latency_ms", "1.25e2", None),
              ("task_success", "", None), ("channel", "", "missing")]


@pytest.mark.parametrize(("column", "text", "reason"), CSV_PROBES)
def test_csv_encodings_are_those_of_the_table(tmp_path: Path, column: str, text: str,
                                              reason: str | None) -> None:
    row = {k: tf.csv_text(v) for k, v in _probe_row().items()} | {column: text}
    data = ",".join(row) + "\n" + ",".join(f'"{v}"' for v in row.values()) + "\n"
    assert _reason(tmp_path, "p.csv", data) == (None if reason is None else f"{column}: {reason}")


def test_parquet_encodings_are_those_of_the_table(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = _probe_row()
    probes = [("tenant_leak", pa.bool_(), True, None), ("tenant_leak", pa.int64(), 1, None),
              ("tenant_leak", pa.int8(), 0, None), ("tenant_leak", pa.float64(), 1.0, "not a valid bool"),
              ("tenant_leak", pa.string(), "true", "not a valid bool"),
              ("experiment", pa.int64(), 5, "not a valid string"),
              ("experiment", pa.list_(pa.string()), ["p"], "not a valid string"),
              ("bucket", pa.float64(), 3.0, "not a valid int"), ("latency_ms", pa.int32(), 12, None),
              ("ts", pa.timestamp("us"), 0, "not a timestamp with a time zone"),
              ("ts", pa.timestamp("us", tz="UTC"), 0, None), ("fallback_reason", pa.null(), None, None)]
    for i, (column, typ, value, reason) in enumerate(probes):
        table = tf._table([row], {column: (typ, [value])})
        pq.write_table(table, tmp_path / f"p{i}.parquet")
        con = connect()
        try:
            open_rows(con, str(tmp_path / f"p{i}.parquet"), EVENT_SCHEMA)
            got = con.execute("SELECT _reason FROM rows_all").fetchone()[0]
        finally:
            con.close()
        assert got == (None if reason is None else f"{column}: {reason}"), (column, typ)


def test_the_encodings_table_is_in_the_docs() -> None:
    assert encodings_markdown() in (ROOT / "docs" / "canary.md").read_text()


# -- a column named twice ------------------------------------------------------------------------

def test_a_parquet_or_csv_file_naming_a_column_twice_is_bad_input(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tf._table([_probe_row()])
    pq.write_table(table.append_column(pa.field("TENANT_LEAK", pa.bool_()), pa.array([True])),
                   tmp_path / "twice.parquet")
    (tmp_path / "twice.csv").write_text("tenant_leak,a,tenant_leak\nfalse,1,true\n")
    for name, fragment in (("twice.parquet", "its schema names column 'tenant_leak' twice "
                                              "(as 'tenant_leak' and 'TENANT_LEAK')"),
                           ("twice.csv", "line 1: the header names column 'tenant_leak' twice")):
        for command in (["verdict", "--events", str(tmp_path / name), "--experiment", "p"],
                        ["ingest", str(tmp_path / name), "--db", str(tmp_path / "c.duckdb")]):
            res = run_cli("canary", *command)
            lines = res.stderr.strip().splitlines()
            assert res.returncode == 2 and len(lines) == 1, res.stderr
            assert lines[0].startswith(f"error: {tmp_path / name}") and fragment in lines[0], lines[0]
    assert not (tmp_path / "c.duckdb").exists() or _rows(tmp_path / "c.duckdb") == 0


def _rows(db: Path) -> int:
    con = connect(db)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                   for t in ("events", "events_quarantine") if t in tables)
    finally:
        con.close()


# -- a directory or glob, read whole ----------------------------------------------------------------

def _zst(path: Path, text: str) -> None:
    window = tf.Window(path.parent, "jsonl", [])
    tf._store(window, path.name, text.encode())


def test_a_directory_is_read_whole_compressed_files_included(tmp_path: Path, gates: Path) -> None:
    """The issue's case: the leak row in ``part-0001.jsonl.gz`` of the directory, once
    skipped (PROMOTE); and in a zstd file, and a CSV pair; the verdict lists every file."""
    root = tmp_path / "events"
    (root / "deep").mkdir(parents=True)
    (root / "main.jsonl").write_text("\n".join(clean_lines()) + "\n")
    (root / "part-0001.jsonl.gz").write_bytes(gzip.compress((json.dumps(leak()) + "\n").encode(), mtime=0))
    outcome, _ = verdict(root, "e1", gates)
    assert outcome == "ROLLBACK"
    (root / "part-0001.jsonl.gz").unlink()
    _zst(root / "deep" / "part.jsonl.zst", json.dumps(leak()) + "\n")
    res = invoke_cli("canary", "verdict", "--events", str(root), "--experiment", "e1", "--gates", str(gates),
                     "--json")
    assert res.returncode == 20, res.stderr
    assert json.loads(res.stdout)["files"] == [{"path": "deep/part.jsonl.zst", "rows": 1},
                                               {"path": "main.jsonl", "rows": 240}]
    again = invoke_cli("canary", "verdict", "--events", str(root), "--experiment", "e1", "--gates", str(gates),
                       "--json")
    assert again.stdout == res.stdout  # byte for byte, names relative to the folder given
    csv_root = tmp_path / "csv"
    csv_root.mkdir()
    header = list(tf.COLUMNS)
    lines = [",".join(header)] + [",".join(tf.csv_text(json.loads(r)[h]) for h in header) for r in clean_lines()]
    (csv_root / "a.csv").write_text("\n".join(lines) + "\n")
    (csv_root / "b.csv.gz").write_bytes(gzip.compress(
        (",".join(header) + "\n" + ",".join(tf.csv_text(leak()[h]) for h in header) + "\n").encode()))
    assert verdict(csv_root, "e1", gates)[0] == "ROLLBACK"


@pytest.mark.parametrize("name", [".part-0001.jsonl", "_part.jsonl", ".staging/part.jsonl",
                                  "part.jsonl.bz2", "notes.txt"])
def test_a_file_the_readers_would_skip_is_refused_naming_it(tmp_path: Path, name: str) -> None:
    """Hidden names (``.``, ``_``: Spark's listing skips them) and files of no known format
    make the whole directory bad input — never a silent skip. A glob that matches a hidden
    file refuses it too; one that does not match it reads the rest."""
    root = tmp_path / "events"
    root.mkdir()
    (root / "main.jsonl").write_text("\n".join(clean_lines()) + "\n")
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(json.dumps(leak()) + "\n")
    res = run_cli("canary", "verdict", "--events", str(root), "--experiment", "e1")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: {root / name}: "), lines[0]
    if name.endswith(".jsonl"):
        with pytest.raises(DataError, match="hidden name"):
            open_rows(connect(), str(root / "**" / "*.jsonl"), EVENT_SCHEMA)
    assert open_rows(connect(), str(root / "main.*"), EVENT_SCHEMA)


# -- a second ingest into a database in use ------------------------------------------------------

HOLD_DB = ("import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
           "print('locked', flush=True); time.sleep(float(sys.argv[2])); con.close()")


def _holder(db: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process writing the database (holding DuckDB's lock) for ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD_DB, str(db), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_ingest_waits_for_the_lock_then_exits_2_writing_nothing(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text("\n".join(clean_lines(per_arm=10)) + "\n")
    db = tmp_path / "c.duckdb"
    holder = _holder(db, 30)
    try:
        start = time.monotonic()
        res = run_cli("canary", "ingest", str(events), "--db", str(db), "--lock-timeout", "1")
        waited = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", res.stderr
    assert lines[0] == (f"error: {db}: in use by another process; still locked after waiting 1 s "
                        "(--lock-timeout)")
    assert waited >= 1
    assert _rows(db) == 0  # nothing half-written
    # a lock released within the timeout: the ingest waits, then writes everything
    holder = _holder(db, 1.5)
    try:
        res = run_cli("canary", "ingest", str(events), "--db", str(db), "--lock-timeout", "30", "--json")
    finally:
        holder.wait()
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["rows"] == 20 and _rows(db) == 20


def test_two_ingests_at_once_both_land_whole(tmp_path: Path) -> None:
    """Two real ``canary ingest`` processes into one new database at the same moment: one
    waits for the other; every row of both files is there once."""
    files = []
    for i in range(2):
        f = tmp_path / f"e{i}.jsonl"
        f.write_text("\n".join(clean_lines((f"e{i}",), per_arm=2000, seed=i)) + "\n")
        files.append(f)
    db = tmp_path / "c.duckdb"
    procs = [subprocess.Popen([sys.executable, "-m", "tooldisc.cli", "canary", "ingest", str(f), "--db",
                               str(db), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in files]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert sorted(json.loads(out)["rows"] for out, _ in results) == [4000, 4000]
    assert _rows(db) == 8000
