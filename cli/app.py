"""The ``tooldisc`` command: registers each command module and renders errors.

Every deliberate error (:class:`tooldisc.errors.ToolDiscError`) becomes one line on
stderr — escaped, at most 300 bytes — and exit code 2; a traceback appears only with
``--debug``.
"""

from __future__ import annotations

import os
import sys

import typer

app = typer.Typer(
    name="tooldisc",
    help="Security-first tool discovery for LLM agents: discover, evaluate, canary.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    """Eager, so it runs while options are parsed: a group without a subcommand would
    otherwise stop at "Missing command" (exit 2) before its callback ever ran."""
    if value:
        from tooldisc import __version__

        typer.echo(f"tooldisc {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 callback=_print_version, is_eager=True),
) -> None:
    """Security-first tool discovery for LLM agents: discover, evaluate, canary.

    Add --debug to any command to see a traceback instead of a one-line error.
    """


def _register() -> None:
    """Each command module adds its commands to ``app``.

    A module that fails to import is an error, never a silently missing command.
    """
    import importlib

    for module in (
        "discover_cmd",
        "catalog_cmd",
        "gold_cmd",
        "eval_cmd",
        "tune_cmd",
        "learn_cmd",
        "bench_cmd",
        "kernels_cmd",
        "cache_cmd",
        "canary_cmd",
        "plan_cmd",
        "serve_cmd",
    ):
        importlib.import_module(f"tooldisc.cli.{module}").register(app)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    from tooldisc.errors import ToolDiscError, error_line

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("TOOLDISC_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    try:
        app(args=args, prog_name="tooldisc", standalone_mode=True)
    except ToolDiscError as exc:
        if debug:
            raise
        sys.stderr.write(error_line(exc) + "\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
