"""``tooldisc discover``: one query through the pipeline, as a table or JSON."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    output_options,
    print_json,
    print_report,
)
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ConfigOption,
    ContextFlags,
    KOption,
    LearnedOption,
    NoCacheOption,
    build_context_from,
    build_engine,
    context_options,
    index_cache,
    load_catalog_option,
    load_learned_option,
    parse_k,
)


@context_options
@output_options("discover")
def discover_command(
    query: Annotated[str, typer.Argument(help="The user's request.")],
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    k: KOption = None,
    context: ContextFlags = ContextFlags(),
    config: ConfigOption = None,
    learned: LearnedOption = None,
    history: Annotated[list[str] | None, typer.Option("--history", help="An earlier user turn, oldest first (repeatable).")] = None,
    explain: Annotated[str | None, typer.Option("--explain", help="Say which step removed TOOL, or where and why it ranked.")] = None,
    timings: Annotated[bool, typer.Option("--timings", help="Include per-step timings (never part of the offer hash).")] = False,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Rank the tools a request may see: security filter first, then BM25F ranking, then top-K."""
    from tooldisc.discovery.config import load_config

    cache = index_cache(no_cache)
    cat = load_catalog_option(catalog, catalog_format, cache)
    # The report always prints the effective context itself; JSON carries it under "context".
    ctx = build_context_from(cat, context,
                             quiet=fmt != "json")
    engine = build_engine(cat, load_config(config), load_learned_option(learned), cache)
    kk = parse_k(k)
    offer = engine.discover(query, ctx, kk, tuple(history or ()))
    explanation = engine.explain(query, explain, ctx, kk, tuple(history or ())) if explain else None
    if fmt == "json":
        body = offer.to_dict(timings=timings)
        if explanation is not None:
            body["explain"] = explanation
        print_json(body)
        return
    print_report(report_document(offer, explanation, timings), "discover", fmt)


def report_document(offer: Any, explanation: dict[str, Any] | None, timings: bool) -> dict[str, Any]:
    """The ``--format json`` document with the engine's figures unrounded, for the ``discover`` report.

    The table has always formatted scores, feature contributions, the probability and the
    timings from the engine's floats; JSON rounds them to 6 (timings 4) places, and
    formatting a rounded number can round it once more the other way.
    """
    body = offer.to_dict(timings=timings)
    body["candidates"] = [{"name": c.name, "score": c.score, "features": dict(c.features)} for c in offer.candidates]
    if offer.confidence.probability is not None:
        body["confidence"]["probability"] = offer.confidence.probability
    if timings:
        body["timings_ms"] = dict(offer.timings)
    if explanation is not None:
        body["explain"] = explanation
    return body


def context_line(ctx: Any) -> str:
    """The effective context in one line (:func:`tooldisc.reports.run_report.context_line` of ``ctx.to_dict()``)."""
    from tooldisc.reports.run_report import context_line as line

    return line(ctx.to_dict())


def register(app: typer.Typer) -> None:
    app.command("discover")(discover_command)
