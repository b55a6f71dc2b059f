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

from tooldisc.cli.commands.eval import (
    GoldOption,
    OutOption,
    ProgressOption,
    QrelsOption,
    TopicsOption,
    _discover,
    _emit,
    _inputs,
    _out_format,
)
from tooldisc.cli.common import (
    FormatOption,
    JsonOption,
    formats,
)
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ConfigOption,
    ContextFileOption,
    ForcedOption,
    KOption,
    LearnedOption,
    ModeOption,
    PermissionOption,
    RoleOption,
    TenantOption,
    context_flags,
)
from tooldisc.cli.outputs import AppendOutput, Output, append_option, output_option


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
    mode: ModeOption = None,
    role: RoleOption = None,
    permission: PermissionOption = None,
    tenant: TenantOption = None,
    forced: ForcedOption = None,
    context_file: ContextFileOption = None,
    qrels: QrelsOption = None,
    topics: TopicsOption = None,
    junit: Annotated[Output | None, output_option("--junit", help="Write a JUnit XML report to PATH.")] = None,
    summary: Annotated[AppendOutput | None, append_option(
        "--summary", help="Append a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY).")] = None,
    out: OutOption = None,
    progress: ProgressOption = None,
    fmt: FormatOption = "table",
    json_: JsonOption = False,
) -> None:
    """Check eval measures against thresholds: exit 0 when all hold, 1 when any fails, 2 on bad input.

    The report is a table, JSON, Markdown or one HTML page (--format), on stdout or in
    --out (format from the extension when --format is not given).

    Runs eval with the given flags (measures with a cutoff up to the run's K may be
    gated), or reads an eval JSON with --from. --max-drop thresholds are taken from
    the --baseline eval JSON; a baseline on another gold set, catalog or K is bad input.
    """
    from tooldisc.cli.common import note
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.gate import (
        baseline_thresholds,
        check,
        check_baseline,
        gate_document,
        junit_xml,
        load_eval_document,
        parse_max_drop,
        parse_thresholds,
    )

    out_fmt = _out_format(fmt, json_, out, formats("gate"))
    drops = [parse_max_drop(text) for text in max_drop or ()]
    if drops and not baseline:
        raise UsageError("--max-drop needs --baseline BASE.json (an earlier 'tooldisc eval --format json')")
    if baseline and not drops:
        raise UsageError("--baseline needs at least one --max-drop MEASURE=DROP")
    thresholds = parse_thresholds(min_ or (), max_ or (), required=not drops)
    base_doc = load_eval_document(baseline) if baseline else None
    relative = baseline_thresholds(drops, base_doc["metrics"], source=baseline) if base_doc else ()
    thresholds = (*thresholds, *relative)
    eval_flags = {"--catalog": catalog, "--gold": gold, "--k": k, "--config": config, "--mode": mode,
                  "--role": role, "--permission": permission, "--tenant": tenant, "--forced": forced,
                  "--context-file": context_file, "--qrels": qrels, "--topics": topics, "--learned": learned}
    if from_:
        given = [name for name, value in eval_flags.items() if value]
        if given:
            raise UsageError(f"--from reads finished eval results; it cannot be combined with {', '.join(given)}")
        current, source = load_eval_document(from_), from_
    else:
        from tooldisc.cli.options import parse_k
        from tooldisc.evaluation.summary import check_measurable, eval_document

        check_measurable([t.measure for t in thresholds])
        flags = context_flags(tenant, role, permission, mode, forced, context_file)
        inputs = _inputs(catalog, gold, config, flags, qrels=qrels, topics=topics, catalog_format=catalog_format,
                         learned=learned)
        kk = parse_k(k)
        if base_doc is not None and baseline:  # refuse an incomparable baseline before the run, not after
            check_baseline(base_doc, _identity(inputs, kk), source=baseline, context=False)
        result = _discover(inputs, kk, progress)
        deep = [t for t in thresholds if t.measure.cutoff is not None and t.measure.cutoff > result.cutoff]
        if deep:
            raise UsageError(f"{deep[0].measure} looks deeper than the run's offers (K={result.k}, at most "
                             f"{result.cutoff} tools); run with --k {deep[0].measure.cutoff} or more")
        current = eval_document(result, by=(), max_misses=0, extra=[t.measure for t in thresholds])
        source = None
    base_info = None
    if base_doc is not None and baseline:
        notes = check_baseline(base_doc, current, source=baseline)
        for line in notes:
            note(f"note: {line}")
        base_info = {"source": baseline, "config": base_doc.get("config"), "notes": notes}
    checks = check(thresholds, current["metrics"], source=source)
    gate_doc = gate_document(checks, source=source, baseline=base_info)
    from tooldisc.cli.reporting import report_text

    if junit:
        junit.write(junit_xml(checks))
    if summary:
        summary.write(report_text(gate_doc, "gate", "md"))
    _emit(report_text(gate_doc, "gate", out_fmt), out)
    if not gate_doc["passed"]:
        raise typer.Exit(1)


def _identity(inputs: Any, k: int | str | None) -> dict[str, Any]:
    """The parts of an eval document a baseline must share, known before discovery runs."""
    from tooldisc.evaluation.run import cutoff_for

    kk = inputs.config.k if k is None else k
    return {"gold": {"hash": inputs.gold.hash}, "catalog": {"hash": inputs.catalog.hash}, "k": kk,
            "cutoff": cutoff_for(inputs.config, kk)}
