"""Through the real command in a subprocess: exit codes, formats, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import invoke_cli, run_cli
from tooldisc.canary.synthetic.events import synthesize

EXP = "indexed-retrieval-v1"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("canary_cli")
    out = {}
    for s in ("healthy", "slow", "security_leak"):
        out[s] = d / f"{s}.parquet"
        synthesize(out[s], 40_000 if s == "healthy" else 6_000, s, percent=25, seed=5)
    return out


def one_line_error(res) -> str:
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


def test_assign_json_and_text() -> None:
    res = invoke_cli("canary", "assign", "--salt", "s1", "--percent", "88.17", "--tenant", "t1",
                  "--user", "u1", "--format", "json")
    assert res.returncode == 0
    assert json.loads(res.stdout) == {"arm": "control", "bucket": 8817, "percent": 88.17, "salt": "s1"}
    res = invoke_cli("canary", "assign", "--salt", "indexed-retrieval-v1", "--percent", "82.35",
                  "--tenant", "biz-42", "--user", "user-7")
    assert res.stdout == "bucket 8234\narm experiment\n"


def test_assign_accepts_colons_in_ids() -> None:
    res = invoke_cli("canary", "assign", "--salt", "s", "--percent", "5", "--tenant", "a:b", "--user", "c",
                  "--json")
    other = invoke_cli("canary", "assign", "--salt", "s", "--percent", "5", "--tenant", "a", "--user",
                    "b:c", "--json")
    assert res.returncode == other.returncode == 0, res.stderr
    assert json.loads(res.stdout)["bucket"] == json.loads(other.stdout)["bucket"]
    assert "must be a non-empty" in one_line_error(
        invoke_cli("canary", "assign", "--salt", "s", "--percent", "5", "--tenant", "", "--user", "u"))


@pytest.mark.parametrize(("scenario", "code", "verdict"),
                         [("healthy", 0, "PROMOTE"), ("slow", 10, "HOLD"), ("security_leak", 20, "ROLLBACK")])
def test_verdict_exit_codes_and_json(files: dict[str, Path], scenario: str, code: int, verdict: str) -> None:
    res = invoke_cli("canary", "verdict", "--events", str(files[scenario]), "--experiment", EXP, "--json")
    assert res.returncode == code, res.stderr
    d = json.loads(res.stdout)
    assert d["verdict"] == verdict
    assert {"verdict", "next_percent", "gates", "arms", "quarantined"} <= set(d)
    assert set(d["arms"]) == {"control", "experiment"}
    assert all({"name", "status", "reason"} <= set(g) for g in d["gates"])
    assert d["next_percent"] == {"PROMOTE": 50, "HOLD": 25, "ROLLBACK": 0}[verdict]


def test_reports_are_byte_identical_and_self_contained(files: dict[str, Path], tmp_path: Path) -> None:
    outs = []
    for fmt in ("html", "html", "md", "json"):
        out = tmp_path / f"r{len(outs)}.{fmt}"
        res = invoke_cli("canary", "verdict", "--events", str(files["slow"]), "--experiment", EXP,
                      "--format", fmt, "--out", str(out))
        assert res.returncode == 10, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    html = outs[0].decode()
    assert "http" not in html.lower() and "<svg" in html and "<script" not in html
    for text in (html, outs[2].decode(), outs[3].decode()):
        assert str(files["slow"]) not in text  # no paths, and no ids exist to leak
        assert "user" not in text.lower()


def test_ingest_then_verdict_from_db(files: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    res = invoke_cli("canary", "ingest", str(files["healthy"]), "--db", str(db), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["rows"] == 40_000
    res = invoke_cli("canary", "ingest", str(files["healthy"]), "--db", str(db), "--json")
    assert json.loads(res.stdout)["skipped_duplicates"] == 1
    res = invoke_cli("canary", "verdict", "--db", str(db), "--experiment", EXP, "--format", "md")
    assert res.returncode == 0 and "| data | pass |" in res.stdout


def test_simulate_two_salts_json(tmp_path: Path) -> None:
    ids = tmp_path / "ids.csv"
    ids.write_text("tenant_id,user_id\n" + "".join(f"t{i % 7},u{i}\n" for i in range(3000)))
    res = invoke_cli("canary", "simulate", "--ids-file", str(ids), "--salt", "a", "--percent", "50",
                     "--salt2", "b", "--percent2", "50", "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["ids"] == 3000 and len(d["salts"]) == 2
    assert d["independence"]["p_value"] is not None
    res = invoke_cli("canary", "simulate", "--ids", "5000", "--salt", "a", "--percent", "10")
    assert res.returncode == 0 and "sample ratio" in res.stdout


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    garbage = tmp_path / "x.parquet"
    garbage.write_bytes(b"nope")
    assert "x.parquet: cannot be read as parquet" in one_line_error(
        run_cli("canary", "verdict", "--events", str(garbage), "--experiment", EXP))
    partial = tmp_path / "p.csv"
    partial.write_text("schema_version,ts\n1,2025-01-01T00:00:00Z\n")
    assert "p.csv: lacks required columns: experiment" in one_line_error(
        run_cli("canary", "ingest", str(partial), "--db", str(tmp_path / "d.duckdb")))
    gates = tmp_path / "gates.yaml"
    gates.write_text("min_requests_per_arm: 500\nconfidense: 0.9\n")
    line = one_line_error(run_cli("canary", "verdict", "--events", str(partial), "--experiment", EXP,
                                  "--gates", str(gates)))
    assert "gates.yaml: confidense: unknown field; did you mean 'confidence'?" in line
    gates.write_text("sample_ratio_alpha: 2\n")
    assert "gates.yaml: sample_ratio_alpha: The 'sample_ratio_alpha' parameter must be a number in the range (0, 1)" in one_line_error(
        run_cli("canary", "verdict", "--events", str(partial), "--experiment", EXP, "--gates", str(gates)))
    ids = tmp_path / "ids.csv"
    ids.write_text("tenant,user\na,b\n")
    assert "lacks required columns" in one_line_error(
        run_cli("canary", "simulate", "--ids-file", str(ids), "--salt", "a", "--percent", "5"))
    assert "no telemetry file matches" in one_line_error(
        run_cli("canary", "verdict", "--events", str(tmp_path / "none*.jsonl"), "--experiment", EXP))


def test_synth_cli_writes_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    res = invoke_cli("canary", "synth", "--events", "1000", "--scenario", "kill_switch", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert len(out.read_text().splitlines()) == 1000
    assert "unknown" not in res.stderr


def test_the_three_findings_through_the_cli(tmp_path: Path) -> None:
    # 1. a 5-point task-success drop at 1,250 requests and 50% used to PROMOTE
    small = tmp_path / "small.parquet"
    synthesize(small, 1_250, "small_drop", percent=50, seed=0)
    res = run_cli("canary", "verdict", "--events", str(small), "--experiment", EXP, "--json")
    assert res.returncode == 10, res.stderr
    d = json.loads(res.stdout)
    task = next(m for m in d["metrics"] if m["name"] == "task_success")
    assert task["outcome"] == "inconclusive" and d["verdict"] == "HOLD"
    # 2. rows whose security flag is missing or unparseable used to pass the security gate
    rows = [json.loads(line) for line in _jsonl(tmp_path, "healthy", 2_000)]
    rows[10]["tenant_leak"] = "maybe"
    rows[20]["permission_violation"] = None
    bad = tmp_path / "unknown.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = run_cli("canary", "verdict", "--events", str(bad), "--experiment", EXP, "--json")
    d = json.loads(res.stdout)
    sec = next(g for g in d["gates"] if g["name"] == "security")
    assert res.returncode == 10 and sec["status"] == "not_judged" and sec["outcome_if_failed"] == "HOLD"
    rows[30]["tenant_leak"] = "true"  # a string, not a flag: quarantined, but it reads true
    rows[30]["arm"] = "treatment"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = run_cli("canary", "verdict", "--events", str(bad), "--experiment", EXP, "--json")
    assert res.returncode == 20, res.stdout
    # 3. the same events written twice used to pass the >= 500-per-arm data gate
    few = [json.loads(line) for line in _jsonl(tmp_path, "healthy", 1_800)]  # < 500 experiment
    twice = tmp_path / "twice.jsonl"
    twice.write_text("".join(json.dumps(r) + "\n" for r in few + few))
    res = run_cli("canary", "verdict", "--events", str(twice), "--experiment", EXP, "--json")
    d = json.loads(res.stdout)
    assert res.returncode == 10
    assert next(g for g in d["gates"] if g["name"] == "data")["status"] == "fail"
    assert d["duplicates"]["v2_ids_repeated"] == 1_800
    v1 = [{k: v for k, v in r.items() if k != "event_id"} | {"schema_version": 1} for r in few]
    twice.write_text("".join(json.dumps(r) + "\n" for r in v1 + v1))
    d = json.loads(run_cli("canary", "verdict", "--events", str(twice), "--experiment", EXP,
                           "--json").stdout)
    assert d["duplicates"]["v1_rows_removed"] == 1_800
    assert sum(a["requests"] for a in d["arms"].values()) == 1_800


def _jsonl(tmp_path: Path, scenario: str, events: int) -> list[str]:
    out = tmp_path / f"{scenario}-{events}.jsonl"
    synthesize(out, events, scenario, percent=25, seed=2)
    return out.read_text().splitlines()


def test_absent_experiment_is_bad_input(files: dict[str, Path]) -> None:
    line = one_line_error(run_cli("canary", "verdict", "--events", str(files["slow"]),
                                  "--experiment", "indexed-retrieval-v2"))
    assert "no rows for experiment 'indexed-retrieval-v2'; experiments present: " \
           "indexed-retrieval-v1" in line


def test_the_summary_is_compact_and_the_terminal_leads_with_the_decision(files: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    res = invoke_cli("canary", "verdict", "--events", str(files["healthy"]), "--experiment", EXP,
                     "--summary", str(summary))
    assert res.returncode == 0, res.stderr
    text = summary.read_text()
    assert text.startswith("earlier step\n## Canary PROMOTE: indexed-retrieval-v1\n\n**PROMOTE** — Every gate "
                           "passes: each guarded metric is shown non-inferior within its margin and no segment is "
                           "shown worse. **Next:** Eligible for the next ladder step, 50 %; an operator decides.\n")
    assert "| task | pass |" in text and "| task_success | non_inferior |" in text
    assert "{" not in text  # no JSON blobs
    # the terminal: the decision first, and no gate-numbers dump at the end any more
    out = res.stdout.splitlines()
    assert out[0] == "Canary verdict (canary): indexed-retrieval-v1" and out[1] == "PROMOTE"
    assert out[2].startswith("Why: Every gate passes") and out[3].startswith("Next: Eligible for the next")
    assert "Gate numbers" not in res.stdout and '{"' not in res.stdout and len(out) < 70, len(out)


def test_duckdb_memory_limit_and_spill_folder(files: dict[str, Path], tmp_path: Path) -> None:
    """A small limit still judges (DuckDB spills to the folder given); a bad size is exit 2."""
    from tooldisc.canary.duckdb.ingest import DuckDBLimits
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.verdict import run_verdict

    events = str(files["slow"])
    _, small = run_verdict(EVENT_SCHEMA, EXP, events=events,
                           limits=DuckDBLimits("64MB", str(tmp_path)))
    assert small == run_verdict(EVENT_SCHEMA, EXP, events=events)[1]
    line = one_line_error(invoke_cli("canary", "verdict", "--events", events, "--experiment", EXP,
                                  "--duckdb-memory-limit", "lots"))
    assert "--duckdb-memory-limit must be a size" in line
    # a limit too small to judge at all: one line naming the limit, exit 2, no traceback
    line = one_line_error(invoke_cli("canary", "verdict", "--events", events, "--experiment", EXP,
                                  "--duckdb-memory-limit", "4MB"))
    assert "ran out of memory within its limit" in line and "--duckdb-memory-limit" in line
