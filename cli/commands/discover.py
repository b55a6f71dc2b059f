"""``tooldisc discover``: one query through the pipeline, as a table or JSON."""

from __future__ import annotations

from typing import Annotated

import typer

from tooldisc.cli.common import (
    FormatOption,
    output_options,
    print_json,
    stdout_console,
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
    # The table always prints the effective context itself; JSON carries it under "context".
    ctx = build_context_from(cat, context,
                             quiet=fmt == "table")
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
    _render_table(offer, explanation, timings)


def context_line(ctx) -> str:
    """The effective context in one line, saying plainly what is absent (no tenant, no permissions).

    A partial context (``--role warehouse`` alone) has no permissions and no tenant,
    which silently narrows the offer; this line makes that visible. Tenant, roles and
    permissions come from a context file or flags, so each is escaped here, whatever
    prints the line.
    """
    from tooldisc.terminal import escape

    tenant = escape(repr(ctx.tenant))
    if ctx.is_default:
        return (f"context: default — every role ({len(ctx.roles)}) and permission ({len(ctx.permissions)}) "
                f"the catalog names, tenant {tenant}, mode {escape(ctx.mode)}")

    def listed(values, none: str) -> str:
        return ", ".join(escape(v) for v in sorted(values)) if values else none

    return (f"context: tenant {tenant}" if ctx.tenant else "context: no tenant") + (
        f"; roles {listed(ctx.roles, 'none')}; permissions {listed(ctx.permissions, 'none')}; mode {escape(ctx.mode)}"
        + (f"; forced {listed(ctx.forced, 'none')}" if ctx.forced else ""))


def _render_table(offer, explanation, timings: bool) -> None:
    from rich.table import Table

    console = stdout_console()
    console.print(context_line(offer.context), markup=False)
    features = sorted({f for c in offer.candidates for f in c.features})
    p = offer.confidence.probability
    shown = offer.confidence.level + (f" {p:.2f}" if p is not None else "")
    table = Table(title=f"{len(offer.candidates)} of {offer.authorized_count} authorized tools "
                        f"(K={offer.k}, mutation {offer.mutation}, confidence {shown})")
    table.add_column("#", justify="right")
    table.add_column("tool")
    table.add_column("score", justify="right")
    for f in features:
        table.add_column(f, justify="right")
    for i, c in enumerate(offer.candidates, 1):
        table.add_row(str(i), c.name, f"{c.score:.4f}", *[f"{c.features.get(f, 0.0):.4f}" for f in features])
    console.print(table)
    console.print(f"K: {offer.k_reason}")
    console.print(f"catalog {offer.catalog_hash[:16]}  offer {offer.offer_hash[:16]}")
    if timings:
        console.print("timings (ms): " + ", ".join(f"{k} {v:.3f}" for k, v in offer.timings.items()))
    if explanation is not None:
        console.print()
        console.print(f"explain {explanation['tool']}: {explanation['status']}"
                      + (f" at {explanation['step']}" if explanation.get("step") else "")
                      + f" — {explanation['reason']}")
        if explanation.get("features"):
            console.print("  features: " + ", ".join(f"{k} {v:.4f}" for k, v in explanation["features"].items()))
        if "matched_terms" in explanation:
            console.print("  matched terms: " + (", ".join(explanation["matched_terms"]) or "none"))


def register(app: typer.Typer) -> None:
    app.command("discover")(discover_command)
