"""What every command shares: output formats, JSON/atomic writing, safe printing.

Commands stay thin: parse options, call one library function, render with these.
Data goes to stdout; progress and notes go to stderr. Everything printed passes
through :func:`tooldisc.terminal.escape` — :func:`echo` and :func:`note` for lines,
:func:`print_report` for tables (the report writers escape every cell, title and line),
:func:`dumps_json` for JSON — so a tool name or query cannot repaint the terminal or fake a row.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from tooldisc.errors import UsageError
from tooldisc.files import write_atomic
from tooldisc.terminal import clip, escape, escape_json, holds_unicode

__all__ = [
    "FORMAT_HELP",
    "FormatOption",
    "JsonOption",
    "dumps_json",
    "echo",
    "escape",
    "formats",
    "note",
    "output_options",
    "print_json",
    "print_report",
    "resolve_format",
    "write_atomic",
]

FORMAT_HELP = "Output format."

FormatOption = Annotated[
    str, typer.Option("--format", "-f", help=FORMAT_HELP, show_default=True)
]
JsonOption = Annotated[bool, typer.Option("--json", help="Alias of --format json.")]


def formats(kind: str) -> tuple[str, ...]:
    """The ``--format`` values a command printing a ``kind`` document allows: derived from
    :func:`tooldisc.reports.render.formats`, so a format or report kind is added in one place."""
    from tooldisc.reports.render import formats as kind_formats

    return kind_formats(kind)


F = TypeVar("F", bound=Callable[..., Any])


def output_options(kind: str, *, out: str | None = None) -> Callable[[F], F]:
    """``--format/-f`` and ``--json`` declared once: the command's ``fmt`` parameter stands where both appear
    in its help and arrives resolved — ``--json`` wins, a value outside :func:`formats` of ``kind`` is exit 2.

    ``out``: the command's ``--out`` parameter, whose extension picks the format when none is given
    (:func:`out_format`). Why a decorator: typer reads options from the signature, so the
    bundle rewrites it, as sqlite-utils' ``output_options`` stacks click options.
    """

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            params.append(param.replace(annotation=FormatOption, default="table") if param.name == "fmt" else param)
            if param.name == "fmt":
                params.append(inspect.Parameter("json_", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False,
                                                annotation=JsonOption))
        visible = signature.replace(parameters=params)

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = visible.bind(*args, **kwargs)
            bound.apply_defaults()
            values = dict(bound.arguments)
            json_flag = values.pop("json_")
            if out is not None:
                values["fmt"] = out_format(values["fmt"], json_flag, values[out], formats(kind))
            else:
                values["fmt"] = resolve_format(values["fmt"], json_flag, formats(kind))
            return command(**values)

        wrapper.__signature__ = visible  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
        return wrapper  # type: ignore[return-value]

    return decorate


def resolve_format(fmt: str, json_flag: bool, allowed: Iterable[str]) -> str:
    """``--json`` wins; anything outside ``allowed`` is a usage error (exit 2)."""
    allowed = tuple(allowed)
    chosen = "json" if json_flag else fmt
    if chosen not in allowed:
        raise UsageError(f"--format must be one of {', '.join(allowed)}; got {chosen!r}")
    return chosen


def dumps_json(obj: Any, *, ascii: bool = False) -> str:
    """Stable JSON for machines: sorted keys, UTF-8 kept, unsafe characters as ``\\uXXXX``; with ``ascii``,
    every character past ASCII escaped (the same JSON value, for a stream that cannot hold them)."""
    return escape_json(json.dumps(obj, ensure_ascii=ascii, indent=2, sort_keys=True)) + "\n"


def print_json(obj: Any) -> None:
    """``obj`` as :func:`dumps_json` on stdout; as ASCII (every other character a ``\\uXXXX`` escape, the same
    JSON value) where stdout's encoding cannot hold every character."""
    sys.stdout.write(dumps_json(obj, ascii=not holds_unicode(sys.stdout)))


def print_report(document: Any, kind: str, fmt: str) -> None:
    """``document`` on stdout in ``fmt``: as JSON (:func:`print_json`, as every command prints it), else
    through :func:`tooldisc.reports.render.render` as a ``kind`` report (the table fits the terminal)."""
    if fmt == "json":
        print_json(document)
        return
    from tooldisc.cli.reporting import report_text

    sys.stdout.write(report_text(document, kind, fmt))


def echo(line: str = "") -> None:
    """One line on stdout, escaped: a value holding a newline or an ANSI code stays on it."""
    typer.echo(escape(line))


def note(message: str) -> None:
    """A human note on stderr (never mixed into machine output): escaped, never markup,
    and no longer than an error line, so a hostile name cannot flood the terminal."""
    from rich.console import Console

    from tooldisc.errors import MAX_ERROR_LINE

    Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False).print(
        clip(escape(message), MAX_ERROR_LINE))


_SUFFIX_FORMAT = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def out_format(fmt: str, json_: bool, out: Any, allowed: tuple[str, ...]) -> str:
    """``--format``/``--json``; with ``--out`` and no explicit format, the file extension decides."""
    if out and not json_ and fmt == "table":
        fmt = _SUFFIX_FORMAT.get(Path(out.path).suffix.lower(), "table")
        if fmt == "table":
            from tooldisc.errors import UsageError

            raise UsageError(f"--out {out}: say --format ({', '.join(a for a in allowed if a != 'table')}) "
                             "or use a .json/.md/.html name")
    return resolve_format(fmt, json_, allowed)
