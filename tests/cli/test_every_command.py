"""Every command has --help and, where it prints results, --format json with --json as alias."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.conftest import run_cli
from tooldisc.cli.app import app

# `serve` speaks MCP over stdio: its output is the protocol itself, so it has no --format.
COMMANDS = [
    "discover", "eval", "sweep", "compare", "fuse", "gate", "tune", "bench",
    "catalog validate", "catalog stats", "catalog convert", "catalog diff",
    "canary assign", "canary simulate", "canary synth", "canary ingest", "canary verdict",
    "plan validate", "gold validate", "gold stats", "gold split", "gold qrels", "kernels status", "kernels build",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_offers_format_json_and_its_alias(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "--format" in result.output and "--json" in result.output


def test_serve_has_help() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0 and "--catalog" in result.output


def test_canary_synth_json_summary(tmp_path) -> None:
    out = tmp_path / "events.jsonl"
    res = run_cli("canary", "synth", "--events", "1000", "--scenario", "slow", "--out", str(out), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["events"] == 1000 and doc["scenario"] == "slow" and doc["expected_verdict"] == "HOLD"
    assert out.exists()
