"""Hostile telemetry files (tests/data/bad/telemetry/canary_*) through the real commands.

Each runs in a subprocess under a 3 GB address-space limit and a 60 s timeout; none
may print a traceback, and what each must do is written here.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tooldisc.canary.duckdb.engine import DuckDBEngine
from tooldisc.canary.duckdb.ingest import connect
from tooldisc.canary.events import EVENT_SCHEMA

BAD = Path(__file__).resolve().parent.parent / "data" / "bad" / "telemetry"


def _limit() -> None:
    # 3 GB: pyarrow and DuckDB reserve address space up front (1 GB fails at connect)
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([sys.executable, "-m", "tooldisc.cli", *args], capture_output=True,
                         text=True, timeout=60, preexec_fn=_limit)
    assert "Traceback" not in res.stderr, res.stderr
    return res


def verdict(name: str) -> tuple[int, dict]:
    res = cli("canary", "verdict", "--events", str(BAD / name), "--experiment", "e1", "--json")
    return res.returncode, json.loads(res.stdout)


def gate(d: dict, name: str) -> dict:
    return next(g for g in d["gates"] if g["name"] == name)


def test_personal_columns_never_reach_the_database_even_for_quarantined_rows(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    res = cli("canary", "ingest", str(BAD / "canary_personal_extra_columns.jsonl"), "--db", str(db),
              "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["quarantined"] == 2
    con = connect(db)
    try:
        dump = json.dumps([con.execute(f"SELECT * FROM {t}").fetchall()
                           for t in ("events", "events_quarantine")], default=str)
        cols = {r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name LIKE 'events%'").fetchall()}
    finally:
        con.close()
    assert "alice@example.com" not in dump and "u-1234" not in dump
    assert not {"user_email", "user_id"} & cols


def test_an_email_as_event_id_is_quarantined() -> None:
    code, d = verdict("canary_event_id_not_uuid.jsonl")
    assert code == 10 and d["quarantine"]["reasons"] == {"event_id: not a UUID": 1}


def test_conflicting_copies_of_an_event_count_once_and_their_leak_rolls_back() -> None:
    code, d = verdict("canary_conflicting_event_ids.jsonl")
    assert code == 20
    assert d["duplicates"]["v2_ids_conflicting"] == 1 and d["duplicates"]["rows_removed"] == 1
    assert d["quarantine"]["reasons"] == {"event_id: repeated with different content": 1}
    assert sum(a["requests"] for a in d["arms"].values()) == 3


def test_unknown_security_flags_hold() -> None:
    code, d = verdict("canary_unknown_security_flags.jsonl")
    sec = gate(d, "security")
    assert code == 10 and sec["status"] == "not_judged" and sec["outcome_if_failed"] == "HOLD"
    assert sec["numbers"]["quarantined_rows_with_unknown_security_flag"] == 2


def test_event_id_must_match_the_schema_version() -> None:
    code, d = verdict("canary_event_id_version_mismatch.jsonl")
    assert code == 10
    assert d["quarantine"]["reasons"] == {"event_id: must be absent when schema_version is 1": 1,
                                          "event_id: required when schema_version is 2": 1}


# bad input as a whole (exit 2, one line naming the file): tests/cli/test_bad_input.py
REFUSED = {"canary_duplicate_column.parquet", "canary_hidden_file.d", "canary_unknown_file.d"}


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.glob("canary_*") if p.name not in REFUSED))
def test_every_canary_file_gives_a_verdict_without_a_traceback(name: str) -> None:
    engine = DuckDBEngine.from_events(str(BAD / name), EVENT_SCHEMA)
    try:
        assert engine.experiments() == {"e1": engine.experiments()["e1"]}
    finally:
        engine.close()


def test_a_key_given_twice_or_of_another_type_rolls_back_whatever_its_encoding() -> None:
    """The issue's findings as corpus files: each used to PROMOTE (or HOLD) a window whose
    one leak row was written twice, with an escaped key, or with an array experiment."""
    for name in ("canary_duplicate_key_escaped.jsonl", "canary_duplicate_key_true_first.jsonl",
                 "canary_experiment_array.jsonl", "canary_compressed_leak.d"):
        code, d = verdict(name)
        sec = gate(d, "security")
        assert code == 20 and sec["status"] == "fail", name
        assert sec["numbers"]["quarantined_rows_with_security_flag"] + sum(
            a["tenant_leak"] for a in sec["numbers"]["per_arm"].values()) == 1, name
    code, d = verdict("canary_compressed_leak.d")
    assert d["files"] == [{"path": "main.jsonl", "rows": 4}, {"path": "part-0001.jsonl.gz", "rows": 1}]
    # "true" and 1.0 read true (the row is quarantined either way); [true] reads nothing
    code, d = verdict("canary_flag_wrong_types.jsonl")
    sec = gate(d, "security")
    assert code == 20 and sec["numbers"]["quarantined_rows_with_security_flag"] == 2
    assert sec["numbers"]["quarantined_rows_with_unknown_security_flag"] == 1
