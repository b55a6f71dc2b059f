"""Telemetry engines: one record per engine a canary command runs on (DuckDB, Spark).

A record says what the engine is called, how ``--engine``'s help describes it, the options
only it reads, how those options become what it connects to, and how it runs each command
(``simulate``, ``verdict``). :func:`choose_engine` turns ``--engine`` and its options into a
:class:`ChosenEngine`, and a command runs through that: the CLI never branches on an engine's
name. Nothing heavy is imported here (the CLI reads this module for ``--help``): DuckDB,
pyspark and the canary modules are imported by the functions that run a command. Spark stays
an optional extra: without ``tooldisc[spark]`` its session says what to install.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooldisc.errors import UsageError
from tooldisc.params import Options, checked

if TYPE_CHECKING:
    from tooldisc.canary.duckdb.simulate import Simulation
    from tooldisc.canary.events import RowSchema
    from tooldisc.canary.gates import Verdict

Progress = Callable[[str], AbstractContextManager[Any]]
"""Shows work of unknown length under a label while it runs (the CLI's progress bar; by default nothing)."""

Salts = list[tuple[str, float]]


def no_progress(label: str) -> AbstractContextManager[Any]:
    return nullcontext()


@dataclass(frozen=True)
class VerdictInputs:
    """What a verdict reads and how (the ``canary verdict`` options); each engine refuses what it cannot read."""

    experiment: str
    db: str | None = None
    events: str | None = None
    table: str | None = None
    events_format: str | None = None
    gates: str | None = None
    since: str | None = None
    until: str | None = None
    profile: str = "canary"
    duckdb_memory_limit: str | None = None
    duckdb_temp_dir: str | None = None


@dataclass(frozen=True)
class TelemetryEngine:
    """One engine. ``options``: the command-line options only it reads, refused with another engine;
    ``target``: those options (by option name) checked, as what it connects to (None: nothing);
    ``simulate`` and ``verdict``: the commands run on it, given that target; ``extra``: the
    optional install it needs (``tooldisc[<extra>]``), None when the base install has it.
    """

    name: str
    help: str
    target: Callable[[Mapping[str, Any]], Any]
    simulate: Callable[[Any, Salts, int | None, str | None, Progress], Simulation]
    verdict: Callable[[Any, RowSchema, VerdictInputs, Progress], tuple[Verdict, dict[str, Any]]]
    options: tuple[str, ...] = ()
    extra: str | None = None


@dataclass(frozen=True)
class ChosenEngine:
    """The engine a command runs on, its options already checked."""

    engine: TelemetryEngine
    target: Any = None

    @property
    def name(self) -> str:
        return self.engine.name

    def simulate(self, salts: Salts, ids: int | None = None, ids_file: str | None = None,
                 progress: Progress = no_progress) -> Simulation:
        """Arm shares, sample-ratio and independence tests of ``salts`` over ids (:mod:`.simulate`)."""
        return self.engine.simulate(self.target, salts, ids, ids_file, progress)

    def verdict(self, schema: RowSchema, inputs: VerdictInputs,
                progress: Progress = no_progress) -> tuple[Verdict, dict[str, Any]]:
        """The verdict and its report document (:func:`tooldisc.canary.verdict.run_verdict`)."""
        return self.engine.verdict(self.target, schema, inputs, progress)


# --- DuckDB: in-process, the default -------------------------------------------------------


def _duckdb_target(options: Mapping[str, Any]) -> None:
    return None


def _duckdb_simulate(target: None, salts: Salts, ids: int | None, ids_file: str | None,
                     progress: Progress) -> Simulation:
    from tooldisc.canary.duckdb.simulate import simulate

    with progress("hashing ids in DuckDB"):
        return simulate(salts, ids=ids, ids_file=ids_file)


def _duckdb_verdict(target: None, schema: RowSchema, inputs: VerdictInputs,
                    progress: Progress) -> tuple[Verdict, dict[str, Any]]:
    from tooldisc.canary.verdict import run_verdict

    if inputs.table is not None or inputs.events_format is not None:
        raise UsageError("--table and --events-format need --engine spark")
    if (inputs.db is None) == (inputs.events is None):
        raise UsageError("give exactly one of --db or --events")
    from tooldisc.canary.duckdb.ingest import DEFAULT_MEMORY_LIMIT, DuckDBLimits

    limits = DuckDBLimits(inputs.duckdb_memory_limit or DEFAULT_MEMORY_LIMIT, inputs.duckdb_temp_dir)
    with progress("judging"):
        return run_verdict(schema, inputs.experiment, db=inputs.db, events=inputs.events, gates=inputs.gates,
                           since=inputs.since, until=inputs.until, profile_name=inputs.profile, limits=limits)


# --- Spark: local mode, a cluster master or Spark Connect (tooldisc[spark]) ------------------

SPARK_OPTIONS = ("--spark-master", "--spark-remote", "--spark-timeout", "--spark-conf")


def _spark_target(options: Mapping[str, Any]) -> Any:
    from tooldisc.canary.spark.session import target_from_options

    master, remote, timeout, conf = (options.get(o) for o in SPARK_OPTIONS)
    return target_from_options(master, remote, timeout, conf)


def _spark_simulate(target: Any, salts: Salts, ids: int | None, ids_file: str | None,
                    progress: Progress) -> Simulation:
    from tooldisc.canary.duckdb.simulate import check_salts
    from tooldisc.canary.spark.session import session
    from tooldisc.canary.spark.simulate import prepare, simulate_spark

    check_salts(salts)
    prepare(ids, ids_file)  # a missing local file fails before Spark starts
    with progress(f"hashing ids on {target.describe()}"), session(target) as spark:
        return simulate_spark(spark, salts, ids=ids, ids_file=ids_file)


def _spark_verdict(target: Any, schema: RowSchema, inputs: VerdictInputs,
                   progress: Progress) -> tuple[Verdict, dict[str, Any]]:
    if inputs.duckdb_memory_limit is not None or inputs.duckdb_temp_dir is not None:
        raise UsageError("--duckdb-memory-limit and --duckdb-temp-dir need --engine duckdb")
    from tooldisc.canary.spark.engine import SparkEngine
    from tooldisc.canary.spark.read import locate
    from tooldisc.canary.spark.session import session
    from tooldisc.canary.verdict import run_verdict

    if inputs.db is not None:
        raise UsageError("--db is a DuckDB database; with --engine spark give --events or --table")
    location = locate(inputs.events, inputs.table, inputs.events_format)  # a local typo fails before Spark starts
    with progress(f"judging on {target.describe()}"), session(target) as spark:
        engine = SparkEngine.open(spark, location, schema)
        try:
            return run_verdict(schema, inputs.experiment, events=location.label, gates=inputs.gates,
                               since=inputs.since, until=inputs.until, engine=engine, profile_name=inputs.profile)
        finally:
            engine.close()


# The first is the default.
REGISTRY: tuple[TelemetryEngine, ...] = (
    TelemetryEngine("duckdb", "in-process", _duckdb_target, _duckdb_simulate, _duckdb_verdict),
    TelemetryEngine("spark", "needs tooldisc[spark]", _spark_target, _spark_simulate, _spark_verdict,
                    options=SPARK_OPTIONS, extra="spark"),
)
ENGINES: dict[str, TelemetryEngine] = {e.name: e for e in REGISTRY}
DEFAULT_ENGINE: str = REGISTRY[0].name


def engine_help() -> str:
    """``--engine``'s help: every engine, the default first (``duckdb (default, in-process) or spark (…)``)."""
    said = [f"{e.name} ({'default, ' if e.name == DEFAULT_ENGINE else ''}{e.help})" for e in REGISTRY]
    return f"{', '.join(said[:-1])} or {said[-1]}." if len(said) > 1 else f"{said[0]}."


def engine_rule() -> Options:
    """``--engine``'s constraint in the parameter rulebook: one of the registered engines (read on call)."""
    return Options(tuple(ENGINES))


def choose_engine(name: str, options: Mapping[str, Any] | None = None) -> ChosenEngine:
    """The engine ``--engine`` names, with ``options`` (by option name, unset ones falsy) checked.

    An option another engine reads is refused, so a typo never silently runs on the wrong engine.
    """
    checked(engine_rule(), name, "--engine", UsageError)
    engine = ENGINES[name]
    options = options or {}
    for other in REGISTRY:
        if other is not engine:
            given = [option for option in other.options if options.get(option)]
            if given:
                raise UsageError(f"{', '.join(given)} need --engine {other.name}")
    return ChosenEngine(engine, engine.target(options))
