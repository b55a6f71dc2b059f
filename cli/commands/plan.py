"""``tooldisc plan validate``: check a plan against the catalog (seed 000, DESIGN §8).

Exit 0 when the plan is valid, 1 when it has findings, 2 for bad input.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tooldisc.cli.common import (
    FormatOption,
    output_options,
    print_report,
)
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    NoCacheOption,
    index_cache,
    load_catalog_option,
)

plan_app = typer.Typer(name="plan", help="Validate agent plans (read-only actions with $from references).",
                       no_args_is_help=True, add_completion=False, rich_markup_mode=None)


@plan_app.command("validate")
@output_options("plan")
def validate_command(
    plan: Annotated[str, typer.Argument(help="Plan file (JSON or YAML): decision and 1–8 actions.")],
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    routed: Annotated[str | None, typer.Option("--routed", help="Comma-separated tools the router chose (for premature 'insufficient').")] = None,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Report every finding in check order, each with a stable code."""
    from tooldisc.agent.plan import load_plan, validate_plan

    cat = load_catalog_option(catalog, catalog_format, index_cache(no_cache))
    parsed = load_plan(plan)
    routed_names = tuple(n.strip() for n in (routed or "").split(",") if n.strip())
    report = validate_plan(parsed, cat, routed_names)
    print_report(report.to_dict(), "plan", fmt)
    raise typer.Exit(0 if report.valid else 1)


def register(app: typer.Typer) -> None:
    app.add_typer(plan_app, name="plan")
