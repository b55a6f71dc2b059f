"""`canary synth --profile shadow`: output and schema in-process; determinism across processes and errors
through the real command."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import invoke_cli, run_cli
from tooldisc.canary.events import load_json_schema
from tooldisc.canary.shadow import SHADOW_SCHEMA


def synth(out: Path, scenario: str = "corrupt_rows", rows: str = "400", seed: str = "5", *extra: str):
    return run_cli("canary", "synth", "--profile", "shadow", "--scenario", scenario, "--rows", rows,
                   "--seed", seed, "--out", str(out), *extra)


def one_line_error(res) -> str:
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


def test_json_output_and_rows_validate_except_the_bad_ones(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    res = invoke_cli("canary", "synth", "--profile", "shadow", "--scenario", "corrupt_rows", "--rows", "400",
                     "--seed", "5", "--out", str(out), "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert (d["profile"], d["rows"], d["bad_rows"], d["expected_verdict"], d["failing_gate"]) == (
        "shadow", 400, 12, "HOLD", "quarantine")
    validator = jsonschema.Draft202012Validator(load_json_schema(SHADOW_SCHEMA),
                                                format_checker=jsonschema.FormatChecker())
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 400
    invalid = [r for r in rows if list(validator.iter_errors(r))]
    assert len(invalid) == 12
    assert {r["kind"] for r in rows} >= {"golden", "turn"}
    assert all(set(r) == set(SHADOW_SCHEMA.names) for r in rows)  # no ids, prompts or values


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_byte_identical_for_a_seed(tmp_path: Path, suffix: str) -> None:
    a, b, c = (tmp_path / f"{n}{suffix}" for n in "abc")
    for path, seed in ((a, "9"), (b, "9"), (c, "10")):
        assert synth(path, "stray_rows", "300", seed).returncode == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_bad_options_are_one_line_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    assert "--scenario must be one of healthy" in one_line_error(synth(out, "slow"))
    assert "--rows must be an integer >= 100" in one_line_error(synth(out, "healthy", "99"))
    assert "--percent applies to --profile canary only" in one_line_error(
        synth(out, "healthy", "200", "0", "--percent", "5"))
    assert "--out must end in .parquet, .jsonl or .csv" in one_line_error(synth(tmp_path / "s.txt"))
    assert "--profile must be one of canary, shadow" in one_line_error(
        invoke_cli("canary", "synth", "--profile", "x", "--scenario", "healthy", "--rows", "200",
                "--out", str(out)))
    assert not out.exists()
    res = invoke_cli("canary", "synth", "--help")
    assert res.returncode == 0 and "--profile" in res.stdout and "--rows" in res.stdout
