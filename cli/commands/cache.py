"""``tooldisc cache``: the on-disk cache of built text indexes (status, clear).

Thin glue over :mod:`tooldisc.discovery.indexes.cache`. Commands that build an index
(``discover``, ``eval``, ``sweep``, ``compare``, ``serve``) read and write it unless given
``--no-cache``; it holds ranking arrays only, never anything that authorizes.
"""

from __future__ import annotations

import typer

from tooldisc.cli.common import (
    FormatOption,
    echo,
    output_options,
    print_json,
)

cache_app = typer.Typer(name="cache", help="The on-disk index cache of warm one-shots: its size (without a "
                        "command: the status), and emptying it.",
                        invoke_without_command=True, add_completion=False, rich_markup_mode=None)


@cache_app.callback()
def _default(ctx: typer.Context) -> None:
    """Without a command: the status."""
    if ctx.invoked_subcommand is None:
        status_command()


@cache_app.command("status")
@output_options("cache-status")
def status_command(fmt: FormatOption = "table") -> None:
    """Where the index cache is, how many entries it holds and their size, and its bounds.

    The directory is $TOOLDISC_CACHE_DIR, else $XDG_CACHE_HOME/tooldisc/index (~/.cache/tooldisc/index).
    """
    from tooldisc.discovery.indexes.cache import IndexCache

    found = IndexCache.default().status()
    if fmt == "json":
        print_json(found.to_dict())
        return
    echo(f"directory: {found.directory}")
    echo(f"entries: {found.entries}, {found.bytes / 1e6:,.1f} MB (bound: {found.max_entries} entries, "
         f"{found.max_bytes / 1e6:,.0f} MB; the least recently used go first)")


@cache_app.command("clear")
@output_options("cache-clear")
def clear_command(fmt: FormatOption = "table") -> None:
    """Remove every cached index (the next command that builds one builds it fresh)."""
    from tooldisc.discovery.indexes.cache import IndexCache

    cache = IndexCache.default()
    removed = cache.clear()
    if fmt == "json":
        print_json({"directory": str(cache.directory), "removed": removed})
        return
    echo(f"removed {removed} cached index(es) from {cache.directory}")


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
