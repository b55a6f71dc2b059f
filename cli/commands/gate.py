"""``tooldisc gate``: eval measures checked against thresholds, absolute or from a baseline, for CI.

Thin glue over :mod:`tooldisc.evaluation.gate`: thresholds and the baseline are read
and checked before discovery runs, so a typo or an incomparable baseline fails in a
second; the checks are rendered as a table, JSON or Markdown, a JUnit file and an
appended step summary. Exit 0 when every threshold holds, 1 when one fails, 2 on bad
input.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    output_options,
)
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ConfigOption,
    ContextFlags,
    KOption,
    LearnedOption,
    context_options,
)
from tooldisc.cli.outputs import AppendOutput, Output, append_option, output_option
from tooldisc.cli.runs import (
    GoldOption,
    OutOption,
    ProgressOption,
    QrelsOption,
    TopicsOption,
    discover_all,
    emit,
    load_inputs,
)


@context_options
@output_options("gate", out="out")
def gate_command(
    min_: Annotated[list[str] | None, typer.Option("--min", help="MEASURE=VALUE that must be at least VALUE (repeatable).")] = None,
    max_: Annotated[list[str] | None, typer.Option("--max", help="MEASURE=VALUE that must be at most VALUE (repeatable).")] = None,
    max_drop: Annotated[list[str] | None, typer.Option(
        "--max-drop", help="MEASURE=DROP: at most DROP worse than in --baseline (down for quality, up for "
                           "forbidden, false_abstention, avg_k and latency; repeatable).")] = None,
    baseline: Annotated[str | None, typer.Option(
        "--baseline", help="An earlier 'tooldisc eval --format json' on the same gold set, catalog and K "
                           "(another ranker config is fine) that --max-drop is measured from.")] = None,
    from_: Annotated[str | None, typer.Option("--from", help="Read measures from an eval JSON (tooldisc eval --format json) instead of running eval.")] = None,
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    gold: GoldOption = None,
    k: KOption = None,
    config: ConfigOption = None,
    learned: LearnedOption = None,
    context: ContextFlags = ContextFlags(),
    qrels: QrelsOption = None,
    topics: TopicsOption = None,
    junit: Annotated[Output | None, output_option("--junit", help="Write a JUnit XML report to PATH.")] = None,
    summary: Annotated[AppendOutput | None, append_option(
        "--summary", help="Append a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY).")] = None,
    out: OutOption = None,
    progress: ProgressOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Check eval measures against thresholds: exit 0 when all hold, 1 when any fails, 2 on bad input.

    The report is a table, JSON, Markdown or one HTML page (--format), on stdout or in
    --out (format from the extension when --format is not given).

    Runs eval with the given flags (measures with a cutoff up to the run's K may be
    gated), or reads an eval JSON with --from. --max-drop thresholds are taken from
    the --baseline eval JSON; a baseline on another gold set, catalog or K is bad input.
    """
    from tooldisc.cli.common import note
    from tooldisc.cli.reporting import report_text
    from tooldisc.evaluation.gate import GateRequest, junit_xml, run_gate

    run_flags = (*(name for name, value in {"--catalog": catalog, "--gold": gold, "--k": k, "--config": config}.items()
                   if value), *context.given(),
                 *(name for name, value in {"--qrels": qrels, "--topics": topics, "--learned": learned}.items() if value))
    request = GateRequest(tuple(min_ or ()), tuple(max_ or ()), tuple(max_drop or ()), baseline, from_, run_flags)

    def load() -> tuple[Any, int | str | None]:
        from tooldisc.cli.options import parse_k

        inputs = load_inputs(catalog, gold, config, context, qrels=qrels, topics=topics,
                             catalog_format=catalog_format, learned=learned)
        return inputs, parse_k(k)

    result = run_gate(request, load=load, discover=lambda inputs, kk: discover_all(inputs, kk, progress), note=note)
    if junit:
        junit.write(junit_xml(result.checks))
    if summary:
        summary.write(report_text(result.document, "gate", "md"))
    emit(report_text(result.document, "gate", fmt), out)
    if not result.passed:
        raise typer.Exit(1)
