"""``tooldisc eval``, ``sweep`` and ``gate`` (``compare`` and ``fuse``: :mod:`.compare_cmd`): measuring discovery.

Thin glue: options are parsed here, the work is done by :mod:`tooldisc.evaluation`
(which calls only the discovery chokepoint), and documents are rendered by
:func:`tooldisc.reports.render`. Everything heavy is imported inside the
commands so ``tooldisc --help`` stays instant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    JsonOption,
    formats,
    resolve_format,
)
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ConfigOption,
    ContextFileOption,
    ContextFlags,
    ForcedOption,
    KOption,
    LearnedOption,
    ModeOption,
    NoCacheOption,
    PermissionOption,
    RoleOption,
    TenantOption,
    context_flags,
    index_cache,
)
from tooldisc.cli.outputs import Output, output_option

GoldOption = Annotated[str | None, typer.Option(
    "--gold", "-g", help="Gold set (JSON/JSONL/YAML, or a benchmark queries.jsonl). Default: the shipped gold set.")]
QrelsOption = Annotated[str | None, typer.Option(
    "--qrels", help="TREC qrels as the gold set (grade >= 2 primary, 1 acceptable); needs --topics.")]
TopicsOption = Annotated[str | None, typer.Option(
    "--topics", help="The query text for --qrels: one 'qid<TAB>text' line per query, no header.")]
ByOption = Annotated[str | None, typer.Option(
    "--by", help="Slice by these gold-query labels (comma-separated): any string, boolean or small-integer "
                 "field, e.g. category, difficulty, intent, or a benchmark row's own (subset, n_gold_calls). "
                 "Default: category, difficulty, hard_case, intent, where some query has them.")]
OutOption = Annotated[Output | None, output_option(
    "--out", "-o", help="Write the report to PATH instead of stdout (format from --format, else from the extension).")]
TimingsOption = Annotated[bool, typer.Option(
    "--timings", help="Add discovery latency p50/p95 (ms); output is then no longer byte-identical across runs.")]
ProgressOption = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", help="Progress bar on stderr. Default: on for long runs on a terminal.")]
MissesOption = Annotated[int, count_option("listed", "--misses", help="How many of the worst misses to list.")]

_PROGRESS_MIN = 300  # queries; shorter runs finish before a bar is worth drawing
_SUFFIX_FORMAT = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def _inputs(catalog: str | None, gold: str | None, config: str | None, flags: ContextFlags, *,
            qrels: str | None = None, topics: str | None = None, quiet_context: bool = False,
            catalog_format: str | None = None, learned: str | None = None, cache: Any = None) -> Any:
    """The run's inputs from the library loader; its notes, and the default-context line, go to stderr.

    ``quiet_context`` drops the default-context line when the report on stdout
    already says which context was used; ``cache``: the on-disk cache the catalog's validated
    records may come from.
    """
    from dataclasses import asdict

    from tooldisc.cli import options
    from tooldisc.cli.common import note
    from tooldisc.cli.options import default_context_note
    from tooldisc.evaluation.inputs import load_run_inputs

    declared = options.catalog_format(catalog_format)
    if declared:  # read as the declared format (--catalog-format); notes follow as usual
        from tooldisc.discovery.catalog_io import default_catalog_path, load_catalog

        catalog = load_catalog(catalog or default_catalog_path(), fmt=declared, cache=cache)
    inputs = load_run_inputs(catalog, gold, config, context=asdict(flags), qrels=qrels, topics=topics,
                             learned=learned, cache=cache)
    for line in inputs.notes:
        note(line)
    if inputs.context.is_default and not quiet_context:
        note(default_context_note(inputs.context))
    return inputs


def _discover(inputs: Any, k: int | str | None, progress: bool | None, *, label: str = "discovering",
              engine: Any = None, cache: Any = None) -> Any:
    """Every gold query through the discovery chokepoint, with a progress bar when asked for;
    ``cache``: the on-disk index cache the engine is built with (None: built fresh)."""
    from tooldisc.cli.progress import progress_bar
    from tooldisc.evaluation.api import discover_gold

    if engine is None:
        from tooldisc.discovery.pipeline import Discoverer

        engine = Discoverer(inputs.catalog, inputs.config, learned=inputs.learned, cache=cache)
    total = len(inputs.gold)
    show = progress if progress is not None else (total >= _PROGRESS_MIN and sys.stderr.isatty())
    with progress_bar(label, total, enabled=show) as bar:
        return discover_gold(inputs, k, engine=engine, progress=bar.set if bar else None)


def _emit(text: str, out: Output | None) -> None:
    if out:
        from tooldisc.cli.common import note

        out.write(text)
        note(f"wrote {out}")
    else:
        sys.stdout.write(text)


def _out_format(fmt: str, json_: bool, out: Output | None, allowed: tuple[str, ...]) -> str:
    """``--format``/``--json``; with ``--out`` and no explicit format, the file extension decides."""
    if out and not json_ and fmt == "table":
        fmt = _SUFFIX_FORMAT.get(Path(out.path).suffix.lower(), "table")
        if fmt == "table":
            from tooldisc.errors import UsageError

            raise UsageError(f"--out {out}: say --format ({', '.join(a for a in allowed if a != 'table')}) "
                             "or use a .json/.md/.html name")
    return resolve_format(fmt, json_, allowed)


def _by(text: str | None) -> tuple[str, ...] | None:
    """``--by`` fields, their syntax checked before any file is read (``None``: the defaults)."""
    from tooldisc.evaluation.slices import parse_by

    return parse_by(text)


def _check_by(gold: Any, fields: tuple[str, ...] | None) -> None:
    """Against the gold set, before discovery runs: a field that cannot slice is exit 2, a missing one a warning."""
    from tooldisc.cli.common import note
    from tooldisc.evaluation.slices import slice_groups

    for line in slice_groups(gold, fields).warnings:
        note(line)


# --- eval ------------------------------------------------------------------------


def eval_command(
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
    json_: JsonOption = False,
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

    out_fmt = _out_format(fmt, json_, out, formats("eval"))
    by_fields = _by(by)
    kk = parse_k(k)
    pq_fmt = _per_query_format(per_query_out)
    if run_out:
        _check_run_tag(run_tag)
    flags = context_flags(tenant, role, permission, mode, forced, context_file)
    cache = index_cache(no_cache)
    inputs = _inputs(catalog, gold, config, flags, qrels=qrels, topics=topics, quiet_context=out_fmt == "table",
                     catalog_format=catalog_format, learned=learned, cache=cache)
    _check_by(inputs.gold, by_fields)
    engine = Discoverer(inputs.catalog, inputs.config, learned=inputs.learned, cache=cache)
    run = score_eval(_discover(inputs, kk, progress, engine=engine), timings=timings, notes=inputs.notes)
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
    _render_eval(doc, out_fmt, out)


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
    _render(doc, fmt, out, "eval")


def _render(doc: dict[str, Any], fmt: str, out: Output | None, kind: str) -> None:
    """One document in one format, to ``out`` or stdout."""
    from tooldisc.cli.reporting import report_text

    _emit(report_text(doc, kind, fmt), out)


# --- sweep -----------------------------------------------------------------------


def sweep_command(
    ks: Annotated[str, typer.Option("--k", help="The K values to read off one ranking, comma-separated.")] = "3,5,10,15,20,48",
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    gold: GoldOption = None,
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
    out: OutOption = None,
    progress: ProgressOption = None,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
    json_: JsonOption = False,
) -> None:
    """Measure every K from one ranking as deep as the largest K (discovery runs once).

    Schema tokens per offer are estimated with the agent package's calibrated token
    model (compact schemas); the output says so.
    """
    from tooldisc.evaluation.sweep import parse_ks, sweep_document

    out_fmt = _out_format(fmt, json_, out, formats("sweep"))
    k_values = parse_ks(ks)
    flags = context_flags(tenant, role, permission, mode, forced, context_file)
    cache = index_cache(no_cache)
    inputs = _inputs(catalog, gold, config, flags, qrels=qrels, topics=topics, quiet_context=out_fmt == "table",
                     catalog_format=catalog_format, learned=learned, cache=cache)
    _render(sweep_document(_discover(inputs, max(k_values), progress, cache=cache), k_values),
            out_fmt, out, "sweep")


def register(app: typer.Typer) -> None:
    from tooldisc.cli.commands import compare
    from tooldisc.cli.commands.gate import gate_command

    app.command("eval")(eval_command)
    app.command("sweep")(sweep_command)
    compare.register(app)  # compare, fuse
    app.command("gate")(gate_command)
