"""Options that pick the engine a canary command runs on, declared once for every command.

``--engine duckdb`` (the default) needs nothing more. ``--engine spark`` needs the
``tooldisc[spark]`` extra and runs in local mode unless ``--spark-master`` or
``--spark-remote`` names a cluster; the ``--spark-*`` options are refused without it,
so a typo never silently runs on the wrong engine.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tooldisc.errors import UsageError

ENGINES = ("duckdb", "spark")

EngineOption = Annotated[str, typer.Option(
    "--engine", help="duckdb (default, in-process) or spark (needs tooldisc[spark]).")]
SparkMasterOption = Annotated[str | None, typer.Option(
    "--spark-master", help="Spark master: local[N] (default local[2]), spark://host:7077, "
                           "yarn or k8s://…; under spark-submit, its master.")]
SparkRemoteOption = Annotated[str | None, typer.Option(
    "--spark-remote", help="Spark Connect endpoint, e.g. sc://host:15002 (instead of a master).")]
SparkTimeoutOption = Annotated[float | None, typer.Option(
    "--spark-timeout", help="Seconds to wait for Spark to start and answer (default 180).")]
SparkConfOption = Annotated[list[str] | None, typer.Option(
    "--spark-conf", help="Extra Spark setting KEY=VALUE (repeatable), e.g. spark.driver.memory=4g.")]


def spark_target(engine: str, master: str | None, remote: str | None, timeout: float | None,
                 conf: list[str] | None) -> Any:
    """The :class:`~tooldisc.canary.spark.session.SparkTarget` for ``--engine spark``, else None."""
    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    if engine != "spark":
        given = [name for name, value in (("--spark-master", master), ("--spark-remote", remote),
                                          ("--spark-timeout", timeout), ("--spark-conf", conf))
                 if value]
        if given:
            raise UsageError(f"{', '.join(given)} need --engine spark")
        return None
    from tooldisc.canary.spark.session import target_from_options

    return target_from_options(master, remote, timeout, conf)
