"""Every command has --help and, where it prints results, --format json with --json as alias."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.conftest import invoke_cli, run_cli
from tooldisc.cli import app as app_module
from tooldisc.cli.app import app


def _leaves() -> list[str]:
    """Every command that runs (groups expanded), derived from the app that the command table builds."""
    names = [c.name for c in app.registered_commands]
    for group in app.registered_groups:
        names += [f"{group.name} {c.name}" for c in group.typer_instance.registered_commands]
    return names


# `serve` speaks MCP over stdio: its output is the protocol itself, so it has no --format.
COMMANDS = [name for name in _leaves() if name != "serve"]


def test_the_list_covers_every_registered_command() -> None:
    assert len(COMMANDS) == 27 and {c.split()[0] for c in COMMANDS} | {"serve"} == set(app_module.COMMANDS)


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
    res = invoke_cli("canary", "synth", "--events", "1000", "--scenario", "slow", "--out", str(out), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["events"] == 1000 and doc["scenario"] == "slow" and doc["expected_verdict"] == "HOLD"
    assert out.exists()


@pytest.mark.parametrize("command", ["discover", "eval", "sweep", "compare", "gate", "serve"])
def test_the_context_bundle_declares_the_six_flags(command: str) -> None:
    """One declaration (cli.options.context_options) gives every discovering command the same six flags."""
    result = CliRunner().invoke(app, [command, "--help"])
    for flag in ("--mode", "--role", "--permission", "--tenant", "--forced", "--context-file"):
        assert flag in result.output, (command, flag)


@pytest.mark.parametrize("args", [("discover", "unpaid invoices", "--json"), ("discover", "x", "--k", "0"),
                                  ("catalog", "stats", "nosuch.yaml"), ("gold", "stats", "--help")])
def test_the_in_process_runner_prints_what_the_real_command_prints(args: tuple[str, ...]) -> None:
    """invoke_cli (tests that check output) and run_cli (the real process) agree on streams and exit code."""
    real, here = run_cli(*args), invoke_cli(*args)
    assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr)
