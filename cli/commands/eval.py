"""``tooldisc eval``, ``sweep`` and ``gate`` (``compare`` and ``fuse``: :mod:`.compare_cmd`): measuring discovery.

Thin glue: options are parsed here, the work is done by :mod:`tooldisc.evaluation`
(which calls only the discovery chokepoint), and documents are rendered by
:func:`tooldisc.reports.render`. Everything heavy is imported inside the
commands so ``tooldisc --help`` stays instant.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    output_options,
)
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ConfigOption,
    ContextFlags,
    KOption,
    LearnedOption,
    NoCacheOption,
    context_options,
    index_cache,
)
from tooldisc.cli.outputs import Output, output_option
from tooldisc.cli.runs import (
    ByOption,
    GoldOption,
    OutOption,
    ProgressOption,
    QrelsOption,
    TopicsOption,
    check_by,
    discover_all,
    load_inputs,
    parse_by,
    render,
)

TimingsOption = Annotated[bool, typer.Option(
    "--timings", help="Add discovery latency p50/p95 (ms); output is then no longer byte-identical across runs.")]
MissesOption = Annotated[int, count_option("listed", "--misses", help="How many of the worst misses to list.")]

# --- eval ------------------------------------------------------------------------


@context_options
@output_options("eval", out="out")
def eval_command(
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    gold: GoldOption = None,
    k: KOption = None,
    config: ConfigOption = None,
    learned: LearnedOption = None,
    context: ContextFlags = ContextFlags(),
    qrels: QrelsOption = None,
    topics: TopicsOption = None,
    by: ByOption = None,
    misses: MissesOption = 10,
    timings: TimingsOption = False,
    out: OutOption = None,
    per_query_out: Annotated[Output | None, output_option(
        "--per-query-out", help="Also write one row per query (measures, offer, forbidden tools offered) as "
                                ".parquet, .csv (list columns as JSON arrays) or .jsonl, by extension.")] = None,
    run_out: Annotated[Output | None, output_option(
        "--run-out", help="Also write the offers as a TREC run: discovery's scores, strictly decreasing "
                          "within a query.")] = None,
    run_tag: Annotated[str, typer.Option("--run-tag", help="The tag column of the --run-out file.")] = "tooldisc",
    progress: ProgressOption = None,
    schemas: Annotated[bool, typer.Option(
        "--schemas", help="Add schema tokens per request: full K=48 vs progressive K=15 + search_tools "
                          "(initial, incremental and wire tokens, and the wire saving).")] = False,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Run discovery over a gold set and report every measure, per-slice tables and the worst misses.

    With --k auto, measure names carry the config's adaptive.max_k (the largest offer
    adaptive K can give, so @K covers the whole offer) and avg_k reports the K used.
    --schemas adds a "schemas" section (independent of --k); without it the output is
    unchanged. --qrels with --topics reads a TREC collection as the gold set.
    """
    from tooldisc.cli.options import parse_k
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.api import score_eval

    by_fields = parse_by(by)
    kk = parse_k(k)
    pq_fmt = _per_query_format(per_query_out)
    if run_out:
        _check_run_tag(run_tag)
    cache = index_cache(no_cache)
    inputs = load_inputs(catalog, gold, config, context, qrels=qrels, topics=topics, quiet_context=fmt == "table",
                     catalog_format=catalog_format, learned=learned, cache=cache)
    check_by(inputs.gold, by_fields)
    engine = Discoverer(inputs.catalog, inputs.config, learned=inputs.learned, cache=cache)
    run = score_eval(discover_all(inputs, kk, progress, engine=engine), timings=timings, notes=inputs.notes)
    doc = run.document(by=by_fields, max_misses=misses)
    if schemas:
        from tooldisc.evaluation.schemas import schemas_section

        doc["schemas"] = schemas_section(run.result, engine=engine)
    if run_out:
        from tooldisc.gold.trec import run_text

        run_out.write(run_text(run.result.run(), run_tag, scores=run.result.scores()))
    if per_query_out and pq_fmt:
        from tooldisc.evaluation.per_query import per_query_bytes

        per_query_out.write(per_query_bytes(run.per_query, pq_fmt))
    _render_eval(doc, fmt, out)


def _per_query_format(out: Output | None) -> str | None:
    """The --per-query-out format, checked before any work is done."""
    if not out:
        return None
    from tooldisc.evaluation.per_query import per_query_format

    return per_query_format(out.path)


def _check_run_tag(tag: str) -> None:
    from tooldisc.errors import UsageError

    if not tag or any(ch.isspace() for ch in tag):
        raise UsageError(f"--run-tag must be one word (no whitespace); got {tag!r}")


def _render_eval(doc: dict[str, Any], fmt: str, out: Output | None) -> None:
    render(doc, fmt, out, "eval")


# --- sweep -----------------------------------------------------------------------


@context_options
@output_options("sweep", out="out")
def sweep_command(
    ks: Annotated[str, typer.Option("--k", help="The K values to read off one ranking, comma-separated.")] = "3,5,10,15,20,48",
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    gold: GoldOption = None,
    config: ConfigOption = None,
    learned: LearnedOption = None,
    context: ContextFlags = ContextFlags(),
    qrels: QrelsOption = None,
    topics: TopicsOption = None,
    out: OutOption = None,
    progress: ProgressOption = None,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Measure every K from one ranking as deep as the largest K (discovery runs once).

    Schema tokens per offer are estimated with the agent package's calibrated token
    model (compact schemas); the output says so.
    """
    from tooldisc.evaluation.sweep import parse_ks, sweep_document

    k_values = parse_ks(ks)
    cache = index_cache(no_cache)
    inputs = load_inputs(catalog, gold, config, context, qrels=qrels, topics=topics, quiet_context=fmt == "table",
                     catalog_format=catalog_format, learned=learned, cache=cache)
    render(sweep_document(discover_all(inputs, max(k_values), progress, cache=cache), k_values),
            fmt, out, "sweep")


def register(app: typer.Typer) -> None:
    from tooldisc.cli.commands import compare
    from tooldisc.cli.commands.gate import gate_command

    app.command("eval")(eval_command)
    app.command("sweep")(sweep_command)
    compare.register(app)  # compare, fuse
    app.command("gate")(gate_command)
