"""Options that pick the engine a canary command runs on, declared once for every command.

``--engine duckdb`` (the default) needs nothing more. ``--engine spark`` needs the
``tooldisc[spark]`` extra and runs in local mode unless ``--spark-master`` or
``--spark-remote`` names a cluster; the ``--spark-*`` options are refused without it,
so a typo never silently runs on the wrong engine. The engines themselves, and the choice,
are :mod:`tooldisc.canary.engines`: these are only their flags.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tooldisc.canary.engines import engine_help

EngineOption = Annotated[str, typer.Option("--engine", help=engine_help())]
SparkMasterOption = Annotated[str | None, typer.Option(
    "--spark-master", help="Spark master: local[N] (default local[2]), spark://host:7077, "
                           "yarn or k8s://…; under spark-submit, its master.")]
SparkRemoteOption = Annotated[str | None, typer.Option(
    "--spark-remote", help="Spark Connect endpoint, e.g. sc://host:15002 (instead of a master).")]
SparkTimeoutOption = Annotated[float | None, typer.Option(
    "--spark-timeout", help="Seconds to wait for Spark to start and answer (default 180).")]
SparkConfOption = Annotated[list[str] | None, typer.Option(
    "--spark-conf", help="Extra Spark setting KEY=VALUE (repeatable), e.g. spark.driver.memory=4g.")]


def engine_choice(engine: str, master: str | None, remote: str | None, timeout: float | None,
                  conf: list[str] | None) -> Any:
    """The :class:`~tooldisc.canary.engines.ChosenEngine` of ``--engine`` and the ``--spark-*`` options."""
    from tooldisc.canary.engines import choose_engine

    return choose_engine(engine, {"--spark-master": master, "--spark-remote": remote, "--spark-timeout": timeout,
                                  "--spark-conf": conf})
