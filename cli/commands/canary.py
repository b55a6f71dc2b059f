"""``tooldisc canary``: assign, simulate, synth, ingest, verdict.

Thin glue: each command parses options, calls one library function in
:mod:`tooldisc.canary`, and renders. Verdict exit codes: 0 PROMOTE, 10 HOLD,
20 ROLLBACK; bad input exits 2 with one line on stderr (rendered by ``cli/app.py``).
Heavy imports (duckdb, numpy, scipy) happen inside the commands.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    JsonOption,
    formats,
    note,
    output_options,
    print_json,
    print_report,
    resolve_format,
)
from tooldisc.cli.engine_options import (
    EngineOption,
    SparkConfOption,
    SparkMasterOption,
    SparkRemoteOption,
    SparkTimeoutOption,
    engine_choice,
)
from tooldisc.cli.limits import count_option
from tooldisc.cli.outputs import AppendOutput, Output, append_option, database_option, output_option
from tooldisc.cli.progress import progress_bar

canary_app = typer.Typer(
    help="Canary: stable SHA-256 arm assignment, telemetry in DuckDB, promotion gates, verdicts.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def _library_io_errors() -> tuple[type[BaseException], ...]:
    """DuckDB's own I/O error (a full disk under ``--out``), which is not an ``OSError``."""
    import duckdb

    return (duckdb.IOException,)


def register(app: typer.Typer) -> None:
    app.add_typer(canary_app, name="canary")


@canary_app.command("assign")
@output_options("canary-assign")
def assign_cmd(
    salt: Annotated[str, typer.Option("--salt", help="Experiment salt (its name).")],
    percent: Annotated[float, typer.Option("--percent", help="Rollout percent, 0-100 in 0.01 steps.")],
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant id (raw UTF-8; ':' allowed).")],
    user: Annotated[str, typer.Option("--user", help="User id (raw UTF-8; ':' allowed).")],
    fmt: FormatOption = "table",
) -> None:
    """Bucket (0-9999) and arm of one (tenant, user) pair."""
    from tooldisc.canary.assignment import assign

    a = assign(salt, tenant, user, percent)
    if fmt == "json":
        print_json({"salt": a.salt, "percent": percent, "bucket": a.bucket, "arm": a.arm})
    else:
        sys.stdout.write(f"bucket {a.bucket}\narm {a.arm}\n")


@canary_app.command("simulate")
@output_options("canary-simulate")
def simulate_cmd(
    salt: Annotated[str, typer.Option("--salt", help="Salt of the first experiment.")],
    percent: Annotated[float, typer.Option("--percent", help="Its rollout percent.")],
    ids: Annotated[int | None, count_option("ids", "--ids", help="Simulate N synthetic ids.")] = None,
    ids_file: Annotated[str | None, typer.Option(
        "--ids-file", help="CSV or Parquet with tenant_id and user_id columns (with --engine "
                           "spark: any path Spark reads).")] = None,
    salt2: Annotated[str | None, typer.Option("--salt2", help="Salt of a second experiment.")] = None,
    percent2: Annotated[float | None, typer.Option("--percent2", help="Its rollout percent.")] = None,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    spark_remote: SparkRemoteOption = None,
    spark_timeout: SparkTimeoutOption = None,
    spark_conf: SparkConfOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Arm shares with Wilson intervals, sample-ratio test, independence of two salts."""
    from dataclasses import asdict

    from tooldisc.errors import UsageError

    on = engine_choice(engine, spark_master, spark_remote, spark_timeout, spark_conf)
    if (salt2 is None) != (percent2 is None):
        raise UsageError("--salt2 and --percent2 go together")
    salts = [(salt, percent)] + ([(salt2, percent2)] if salt2 is not None and percent2 is not None else [])
    result = on.simulate(salts, ids=ids, ids_file=ids_file, progress=_progress)
    print_report(asdict(result), "canary-simulate", fmt)


@canary_app.command("synth")
@output_options("canary-synth")
def synth_cmd(
    events: Annotated[int, count_option("events", "--events", "--rows",
                                        help="Number of rows: events, or shadow-report rows "
                                             "with --profile shadow (>= 100).")],
    scenario: Annotated[str, typer.Option("--scenario", help="canary: healthy, too_few, srm, "
                                          "security_leak, task_regression, high_fallback, slow, "
                                          "kill_switch, corrupt_rows, unknown_security, duplicated, "
                                          "small_drop, margin_regression, segment_regression. "
                                          "shadow: healthy, stray_rows, "
                                          "corrupt_rows, unauthorized_proposal, shadow_execution, "
                                          "invalid_plan, golden_failure, premature_insufficient, "
                                          "unreviewed_divergence. interleaving: no_preference, b_better, "
                                          "b_worse, unbalanced, security_leak.")],
    out: Annotated[Output, output_option("--out", help="Output file: .parquet, .jsonl or .csv.")],
    profile: Annotated[str, typer.Option("--profile", help="canary (telemetry events), shadow "
                                         "(shadow-report rows) or interleaving (interleaved "
                                         "requests).")] = "canary",
    percent: Annotated[float | None, typer.Option("--percent", help="Rollout percent in force "
                                                  "(canary: default 10; interleaving: the share of "
                                                  "requests interleaved, default 50).")] = None,
    seed: Annotated[int, count_option("seed", "--seed", help="Random seed.")] = 0,
    experiment: Annotated[str | None, typer.Option("--experiment", help="Experiment name (default "
                                                   "indexed-retrieval-v1, capability-planner-v1 "
                                                   "for shadow, ranking-v2 for interleaving).")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Write seeded synthetic telemetry or shadow-report rows whose verdict is known."""
    from tooldisc.canary.profiles import profile as get_profile
    from tooldisc.canary.synthetic.events import check_out
    from tooldisc.errors import UsageError

    get_profile(profile)  # refuses an unknown profile
    check_out(out.path)  # the extension, before any row is generated
    if out.tmp is None:  # a device or a pipe: the writers need a file they can seek in
        raise UsageError("--out must be a regular file, not a device or a pipe", file=out.path)
    if profile == "shadow":
        from tooldisc.canary.synthetic.shadow import synthesize_shadow

        if percent is not None:
            raise UsageError("--percent applies to --profile canary only")
        experiment = experiment if experiment is not None else "capability-planner-v1"
        sh = out.fill(lambda tmp: synthesize_shadow(tmp, events, scenario, seed=seed, experiment=experiment),
                      also=_library_io_errors())
        if fmt == "json":
            print_json({"profile": "shadow", "rows": sh.rows, "bad_rows": sh.bad_rows,
                        "scenario": sh.scenario, "expected_verdict": sh.expected_verdict,
                        "failing_gate": sh.failing_gate, "path": out.path, "seed": seed,
                        "experiment": experiment})
            return
        note(f"wrote {sh.rows} shadow-report rows ({sh.scenario}, {sh.bad_rows} bad, expected "
             f"verdict {sh.expected_verdict}) to {out.path}")
        return
    if profile == "interleaving":
        from tooldisc.canary.synthetic.interleaving import (
            DEFAULT_EXPERIMENT,
            synthesize_interleaving,
        )

        percent = 50.0 if percent is None else percent
        experiment = experiment if experiment is not None else DEFAULT_EXPERIMENT
        with progress_bar(f"synth {scenario}", events, counts=False) as bar:
            il = out.fill(lambda tmp: synthesize_interleaving(
                tmp, events, scenario, percent=percent, seed=seed, experiment=experiment,
                on_chunk=bar.advance if bar else None), also=_library_io_errors())
        if fmt == "json":
            from tooldisc.canary.synthetic.interleaving import INTERLEAVING_SCENARIOS

            print_json({"profile": "interleaving", "events": il.events, "interleaved": il.interleaved,
                        "scenario": il.scenario, "expected_verdict": il.expected_verdict,
                        "failing_gate": il.failing_gate,
                        "true_effect": INTERLEAVING_SCENARIOS[il.scenario].description, "path": out.path,
                        "percent": percent, "seed": seed, "experiment": experiment})
            return
        note(f"wrote {il.events} events, {il.interleaved} interleaved ({il.scenario}, expected verdict "
             f"{il.expected_verdict}) to {out.path}")
        return
    from tooldisc.canary.synthetic.events import synthesize

    percent = 10.0 if percent is None else percent
    experiment = experiment if experiment is not None else "indexed-retrieval-v1"
    with progress_bar(f"synth {scenario}", events, counts=False) as bar:
        res = out.fill(lambda tmp: synthesize(tmp, events, scenario, percent=percent, seed=seed, experiment=experiment,
                                              on_chunk=bar.advance if bar else None), also=_library_io_errors())
    if fmt == "json":
        from tooldisc.canary.synthetic.events import SCENARIOS

        sc = SCENARIOS[res.scenario]
        print_json({"events": res.events, "scenario": res.scenario, "expected_verdict": res.expected_verdict,
                    "failing_gate": sc.failing_gate, "true_effect": sc.description,
                    "path": out.path, "percent": percent, "seed": seed, "experiment": experiment})
        return
    note(f"wrote {res.events} events ({res.scenario}, expected verdict {res.expected_verdict}) "
         f"to {out.path}")


def _progress(label: str) -> Any:
    """A transient bar for work of unknown length (what an engine runs a command under)."""
    return progress_bar(label, counts=False)


def _schema(profile: str) -> Any:
    from tooldisc.canary.profiles import profile as get_profile

    return get_profile(profile).schema


@canary_app.command("ingest")
def ingest_cmd(
    pattern: Annotated[str, typer.Argument(help="File, directory or glob (JSONL, Parquet, CSV).")],
    db: Annotated[str, database_option("--db", help="DuckDB database file (created when absent).")],
    profile: Annotated[str, typer.Option("--profile", help="Row schema: canary (also interleaving's) "
                                         "or shadow.")] = "canary",
    lock_timeout: Annotated[float, typer.Option(
        "--lock-timeout", help="Seconds to wait while another process writes the database "
                               "(then exit 2; nothing is written).")] = 30.0,
    fmt: FormatOption = "table",
    json_flag: JsonOption = False,
) -> None:
    """Load telemetry into DuckDB; bad rows go to a quarantine table with their reason."""
    from dataclasses import asdict

    from tooldisc.canary.duckdb.ingest import expand, ingest
    from tooldisc.errors import UsageError
    from tooldisc.params import Interval, checked

    checked(Interval(float, 0, 86_400, why="seconds"), lock_timeout, "--lock-timeout", UsageError)
    chosen = resolve_format(fmt, json_flag, formats("canary-ingest"))
    schema = _schema(profile)
    with progress_bar("ingesting", len(expand(pattern)), counts=False) as bar:
        res = ingest(db, pattern, schema, on_file=(lambda _p: bar.advance()) if bar else None,
                     lock_timeout=lock_timeout)
    document = {**asdict(res), "table": schema.table}  # where the rows went: every format names the table
    if chosen == "json":
        print_json(document)
        return
    print_report(document, "canary-ingest", chosen)


@canary_app.command("verdict")
@output_options("verdict")
def verdict_cmd(
    experiment: Annotated[str, typer.Option("--experiment", help="Experiment name to judge.")],
    db: Annotated[str | None, typer.Option("--db", help="DuckDB database from `canary ingest`.")] = None,
    events: Annotated[str | None, typer.Option("--events", help="Telemetry file, directory or glob.")] = None,
    gates: Annotated[str | None, typer.Option("--gates", help="gates.yaml overriding the defaults.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Window start (ISO 8601, inclusive).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Window end (ISO 8601, exclusive).")] = None,
    profile: Annotated[str, typer.Option("--profile", help="canary (A/B), interleaving (ranker B vs A "
                                         "on interleaved requests), or shadow for a shadow planner.")] = "canary",
    fmt: FormatOption = "table",
    out: Annotated[Output | None, output_option("--out", help="Write the report here instead of stdout.")] = None,
    summary: Annotated[AppendOutput | None, append_option(
        "--summary", help="Append a compact Markdown summary to this file (e.g. "
                          "$GITHUB_STEP_SUMMARY).")] = None,
    table: Annotated[str | None, typer.Option(
        "--table", help="A catalog table (db.events) instead of --events (--engine spark).")] = None,
    events_format: Annotated[str | None, typer.Option(
        "--events-format", help="jsonl, csv or parquet, when --events does not tell "
                                "(--engine spark; e.g. an s3a:// folder).")] = None,
    engine: EngineOption = "duckdb",
    spark_master: SparkMasterOption = None,
    spark_remote: SparkRemoteOption = None,
    spark_timeout: SparkTimeoutOption = None,
    spark_conf: SparkConfOption = None,
    duckdb_memory_limit: Annotated[str | None, typer.Option(
        "--duckdb-memory-limit", help="RAM DuckDB may use before it spills to disk "
                                      "(default 2GB).")] = None,
    duckdb_temp_dir: Annotated[str | None, typer.Option(
        "--duckdb-temp-dir", help="Where DuckDB spills (default: the system temp folder).")] = None,
) -> None:
    """PROMOTE (exit 0), HOLD (10) or ROLLBACK (20), with every gate's numbers and reason."""
    from tooldisc.canary.engines import VerdictInputs
    from tooldisc.errors import UsageError

    on = engine_choice(engine, spark_master, spark_remote, spark_timeout, spark_conf)
    if out is not None and fmt == "table":
        raise UsageError("--out needs --format json, md or html")
    schema = _schema(profile)
    verdict, report = on.verdict(schema, VerdictInputs(
        experiment, db=db, events=events, table=table, events_format=events_format, gates=gates, since=since,
        until=until, profile=profile, duckdb_memory_limit=duckdb_memory_limit, duckdb_temp_dir=duckdb_temp_dir,
    ), progress=_progress)
    report = {**report, "engine": engine}
    from tooldisc.cli.reporting import report_text

    if summary is not None:
        from tooldisc.reports.canary_report import summary_markdown

        summary.write(summary_markdown(report))
    text = report_text(report, "verdict", fmt)
    if out is not None:
        out.write(text)
        note(f"{verdict.verdict}: report written to {out}")
    else:
        sys.stdout.write(text)
    raise typer.Exit(verdict.exit_code)
