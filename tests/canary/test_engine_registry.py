"""The telemetry-engine registry: ``--engine`` and its options are chosen in canary, never in the CLI.

A new engine is one :class:`~tooldisc.canary.engines.TelemetryEngine` record (its target, its
``simulate`` and ``verdict``) plus its tests, and its own options' flags in cli/engine_options.py;
the recipe test adds one and runs ``canary simulate`` and ``canary verdict`` on it through the CLI.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import Any

import pytest
from typer.testing import CliRunner

import tooldisc.canary.engines as engines
from tooldisc.errors import MissingExtraError, UsageError


def _cli(*args: str) -> Any:
    from tooldisc.cli.app import build_app

    return CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "300"})


def test_every_engine_list_is_the_registry() -> None:
    assert tuple(engines.ENGINES) == tuple(e.name for e in engines.REGISTRY) == ("duckdb", "spark")
    assert engines.DEFAULT_ENGINE == "duckdb"
    assert engines.engine_help() == "duckdb (default, in-process) or spark (needs tooldisc[spark])."
    assert [e.extra for e in engines.REGISTRY] == [None, "spark"]
    for args in (("canary", "simulate", "--help"), ("canary", "verdict", "--help")):
        assert engines.engine_help() in " ".join(_cli(*args).output.split())


@pytest.mark.parametrize(("name", "options", "message"), [
    ("flink", {}, "--engine must be one of duckdb, spark. Got 'flink' instead."),
    ("duckdb", {"--spark-master": "local[4]"}, "--spark-master need --engine spark"),
    ("duckdb", {"--spark-timeout": 3.0, "--spark-conf": ["a=b"]}, "--spark-timeout, --spark-conf need --engine spark"),
])
def test_choose_engine_refuses_what_the_chosen_engine_cannot_read(name: str, options: dict[str, Any],
                                                                 message: str) -> None:
    with pytest.raises(UsageError) as err:
        engines.choose_engine(name, options)
    assert str(err.value) == message


def test_duckdb_is_chosen_with_nothing_to_connect_and_simulates_like_the_library() -> None:
    from dataclasses import asdict

    from tooldisc.canary.duckdb.simulate import simulate

    chosen = engines.choose_engine("duckdb", {"--spark-master": None, "--spark-conf": None})
    assert chosen.name == "duckdb" and chosen.target is None
    salts = [("s1", 5.0)]
    assert asdict(chosen.simulate(salts, ids=2000)) == asdict(simulate(salts, ids=2000))


def test_spark_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    chosen = engines.choose_engine("spark", {"--spark-master": "local[1]"})
    with pytest.raises(MissingExtraError, match=r"pip install 'tooldisc\[spark\]'"):
        chosen.simulate([("s1", 5.0)], ids=100)


def _memory_simulate(target: Any, salts: Any, ids: Any, ids_file: Any, progress: Any) -> Any:
    from tooldisc.canary.duckdb.simulate import simulate

    with progress(f"hashing ids in {target}"):
        return simulate(salts, ids=ids, ids_file=ids_file)


def _memory_verdict(target: Any, schema: Any, inputs: engines.VerdictInputs, progress: Any) -> Any:
    from tooldisc.canary.verdict import run_verdict

    with progress("judging in memory"):
        return run_verdict(schema, inputs.experiment, events=inputs.events, gates=inputs.gates,
                           profile_name=inputs.profile)


def test_recipe_one_record_adds_an_engine(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    memory = engines.TelemetryEngine("memory", "in this process, for the test",
                                     lambda options: options.get("--memory-name") or "memory",
                                     _memory_simulate, _memory_verdict, options=("--memory-name",))
    registry = (*engines.REGISTRY, memory)
    monkeypatch.setattr(engines, "REGISTRY", registry)
    monkeypatch.setattr(engines, "ENGINES", {e.name: e for e in registry})
    labels: list[str] = []

    @contextmanager
    def progress(label: str) -> Any:
        labels.append(label)
        yield None

    assert "memory (in this process, for the test)" in engines.engine_help()
    with pytest.raises(UsageError, match="--memory-name need --engine memory"):
        engines.choose_engine("duckdb", {"--memory-name": "x"})
    chosen = engines.choose_engine("memory", {"--memory-name": "ram"})
    assert chosen.simulate([("s1", 5.0)], ids=500, progress=progress).ids == 500
    assert labels == ["hashing ids in ram"]

    res = _cli("canary", "simulate", "--salt", "s1", "--percent", "5", "--ids", "300", "--engine", "memory",
               "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["ids"] == 300
    events = tmp_path / "events.parquet"
    assert _cli("canary", "synth", "--scenario", "healthy", "--events", "2000", "--out", str(events)).exit_code == 0
    res = _cli("canary", "verdict", "--experiment", "indexed-retrieval-v1", "--events", str(events),
               "--engine", "memory", "--format", "json")
    assert res.exit_code in (0, 10, 20), res.output
    assert json.loads(res.output)["engine"] == "memory"
