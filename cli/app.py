"""The ``tooldisc`` command: registers each command module and renders errors.

Every deliberate error (:class:`tooldisc.errors.ToolDiscError`) becomes one line on
stderr — escaped, at most 300 bytes — and exit code 2; a traceback appears only with
``--debug``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass

import typer


def _new_app() -> typer.Typer:
    """The root ``tooldisc`` group, without commands."""
    root = typer.Typer(
        name="tooldisc",
        help="Security-first tool discovery for LLM agents: discover, evaluate, canary.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    root.callback()(_root)
    return root


def _print_version(value: bool) -> None:
    """Eager, so it runs while options are parsed: a group without a subcommand would
    otherwise stop at "Missing command" (exit 2) before its callback ever ran."""
    if value:
        from tooldisc import __version__

        typer.echo(f"tooldisc {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 callback=_print_version, is_eager=True),
) -> None:
    """Security-first tool discovery for LLM agents: discover, evaluate, canary.

    Add --debug to any command to see a traceback instead of a one-line error.
    """


@dataclass(frozen=True)
class Command:
    """One top-level command: its name and the module under ``tooldisc.cli.commands`` that registers it.

    Its help is the command function's docstring, kept in one place.
    """

    name: str
    module: str


# The one list of top-level commands, in the order ``tooldisc --help`` shows them (commands, then groups, each
# in the order their modules register). A one-shot builds (and typer builds, parameter by parameter) the
# invoked command's module only: building all thirty was a tenth of a one-shot. MODULES and the tests derive
# from it; tests/cli/test_startup.py checks it against what the modules register.
COMMAND_LIST: tuple[Command, ...] = (
    Command("discover", "discover"), Command("catalog", "catalog"), Command("gold", "gold"),
    Command("eval", "eval"), Command("sweep", "eval"), Command("compare", "eval"), Command("fuse", "eval"),
    Command("gate", "eval"), Command("tune", "tune"), Command("learn", "learn"), Command("bench", "bench"),
    Command("kernels", "kernels"), Command("cache", "cache"), Command("canary", "canary"),
    Command("plan", "plan"), Command("serve", "serve"),
)
COMMANDS: dict[str, str] = {c.name: c.module for c in COMMAND_LIST}
MODULES: tuple[str, ...] = tuple(dict.fromkeys(c.module for c in COMMAND_LIST))


def build_app(modules: tuple[str, ...] = MODULES) -> typer.Typer:
    """The ``tooldisc`` group with the commands of ``modules`` (all of them by default).

    A module that fails to import is an error, never a silently missing command.
    """
    import importlib

    root = _new_app()
    for module in modules:
        importlib.import_module(f"tooldisc.cli.commands.{module}").register(root)
    return root


def __getattr__(name: str) -> typer.Typer:
    """``app``: every command (``tooldisc --help``, the test runner), built on first use."""
    if name == "app":
        built = globals()["app"] = build_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Console entry point.

    Usage errors (an unknown option, a missing argument, a bad value) are one line on
    stderr and exit 2, like every other bad input, instead of click's usage box;
    ``tooldisc`` or a group without a command still prints its help. SIGTERM unwinds
    like an interrupt, so outputs reserved before the work are removed again.
    """
    from tooldisc.errors import ToolDiscError, error_line

    if argv is None:  # the console entry: this process ends with the command
        _skip_the_final_collection()
        _open_closed_streams()
        _escape_what_the_streams_cannot_encode()
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("TOOLDISC_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    _terminate_unwinds()
    # a run of one known command builds that command's module only; anything else (help, a typo) the whole app
    cli = build_app((COMMANDS[args[0]],)) if args and args[0] in COMMANDS else __getattr__("app")
    try:
        code = cli(args=args, prog_name="tooldisc", standalone_mode=False)
        sys.stdout.flush()  # a write that fails (a full disk) fails here, not in the interpreter's exit
    except ToolDiscError as exc:
        if debug:
            raise
        sys.stderr.write(error_line(exc) + "\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except MemoryError:  # a catalog too large for the memory the process may use (ulimit, a container's limit)
        if debug:
            raise
        sys.stderr.write("error: out of memory: the command needed more than this process may allocate\n")
        sys.exit(2)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly with 1, as click does for a write
        _discard_stdout()
        sys.exit(1)
    except OSError as exc:  # the output cannot be written (a full disk, an I/O error): one line, not a traceback
        if debug:
            raise
        _discard_stdout()
        sys.stderr.write(error_line(ToolDiscError(exc.strerror or str(exc), file=exc.filename)) + "\n")
        sys.exit(2)
    except Exception as exc:  # click's own errors: usage, abort
        _click_error(exc, debug)
        raise
    sys.exit(code if isinstance(code, int) else 0)


def _skip_the_final_collection() -> None:
    """At exit, freeze what is alive instead of letting the interpreter's last collection walk it.

    A one-shot's catalog and index are millions of objects at 100,000 tools; the collection the
    interpreter runs as it shuts down walks every one of them (about 0.9 s there) to free memory the
    process is about to return anyway. Frozen objects are skipped. Outputs are closed by their writers
    (written to a temporary file and renamed), and the standard streams are flushed as always."""
    import atexit
    import gc

    atexit.register(gc.freeze)


def _open_closed_streams() -> None:
    """A standard stream the parent closed (``>&-``, ``<&-``) is ``None`` in Python: the command reads an
    empty input (``serve`` ends at once) and writes to ``/dev/null`` there, as ``print`` would, instead of
    failing with an AttributeError."""
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - the process's stream, closed at exit
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's stream, closed at exit
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def _discard_stdout() -> None:
    """Standard output pointed at ``/dev/null``: what is still buffered for it is dropped at exit instead
    of failing a second time there."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _escape_what_the_streams_cannot_encode() -> None:
    """On a terminal or pipe whose encoding cannot hold every character (a Latin-1 locale,
    ``PYTHONIOENCODING=ascii``), write a character it lacks as a backslash escape: an em dash in a note or
    a Persian description stopped the command with a traceback. JSON is written as ASCII there
    (:func:`tooldisc.cli.common.print_json`), so it stays valid."""
    from tooldisc.terminal import holds_unicode

    for stream in (sys.stdout, sys.stderr):
        if not holds_unicode(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _click_error(exc: Exception, debug: bool) -> None:
    """A click usage error as one ``error:`` line (exit 2); returns for anything that is not click's."""
    from typer._click import exceptions as click_errors  # typer's vendored click

    from tooldisc.errors import UsageError, error_line

    if isinstance(exc, typer.Abort):
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    if not isinstance(exc, click_errors.ClickException):
        return
    if isinstance(exc, click_errors.NoArgsIsHelpError) or debug:
        exc.show()  # the help text: what a bare command is asked for
        sys.exit(exc.exit_code)
    where = None
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.parent is not None:
        where = ctx.command_path
    sys.stderr.write(error_line(UsageError(exc.format_message(), file=where)) + "\n")
    sys.exit(exc.exit_code)


def _terminate_unwinds() -> None:
    """SIGTERM raises SystemExit(143) in the main thread: ``finally`` blocks and context exits run
    (reserved outputs are removed, a bench worker is stopped) instead of the process just vanishing."""
    import signal

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _exit)
    except ValueError:  # not the main thread (an embedding host): leave signals alone
        pass


if __name__ == "__main__":
    main()
