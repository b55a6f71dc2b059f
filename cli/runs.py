"""What eval, sweep, compare and gate share: the gold-set options, loading a run's inputs (notes to
stderr), discovering every gold query behind a progress bar, and choosing and writing the report format.

Public to the command modules, so no command imports another's private helpers.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from tooldisc.cli.options import ContextFlags
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
ProgressOption = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", help="Progress bar on stderr. Default: on for long runs on a terminal.")]

_PROGRESS_MIN = 300  # queries; shorter runs finish before a bar is worth drawing
def load_inputs(catalog: str | None, gold: str | None, config: str | None, flags: ContextFlags, *,
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
        from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog

        catalog = load_catalog(catalog or default_catalog_path(), fmt=declared, cache=cache)
    inputs = load_run_inputs(catalog, gold, config, context=asdict(flags), qrels=qrels, topics=topics,
                             learned=learned, cache=cache)
    for line in inputs.notes:
        note(line)
    if inputs.context.is_default and not quiet_context:
        note(default_context_note(inputs.context))
    return inputs


def discover_all(inputs: Any, k: int | str | None, progress: bool | None, *, label: str = "discovering",
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


def emit(text: str, out: Output | None) -> None:
    if out:
        from tooldisc.cli.common import note

        out.write(text)
        note(f"wrote {out}")
    else:
        sys.stdout.write(text)


def parse_by(text: str | None) -> tuple[str, ...] | None:
    """``--by`` fields, their syntax checked before any file is read (``None``: the defaults)."""
    from tooldisc.evaluation.slices import parse_by as parse

    return parse(text)


def check_by(gold: Any, fields: tuple[str, ...] | None) -> None:
    """Against the gold set, before discovery runs: a field that cannot slice is exit 2, a missing one a warning."""
    from tooldisc.cli.common import note
    from tooldisc.evaluation.slices import slice_groups

    for line in slice_groups(gold, fields).warnings:
        note(line)


def render(doc: dict[str, Any], fmt: str, out: Output | None, kind: str) -> None:
    """One document in one format, to ``out`` or stdout."""
    from tooldisc.cli.reporting import report_text

    emit(report_text(doc, kind, fmt), out)
