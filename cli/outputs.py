"""The output option bundle: every output path of every command is reserved while the options are parsed.

An option declared with :func:`output_option` (a file replaced atomically),
:func:`append_option` (a file appended to, such as a CI step summary),
:func:`folder_option` (a folder files are written into) or :func:`database_option`
(a database another library creates) is checked by :mod:`tooldisc.files` as soon as
click reads it — before the command's body runs, so before any input is read or any
work is done. A folder, a path under a regular file or an unwritable place is one
error line and exit 2. The command receives the reservation
(:class:`~tooldisc.files.Output`, …) instead of the string and writes through it.

Every reservation is discarded when the command ends without writing it (an error, an
interrupt, a failed check), through the root click context's close callbacks, which run
whatever ends the command. Two outputs of one command naming the same file are refused.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from tooldisc.errors import UsageError
from tooldisc.files import AppendOutput, Output, probe_folder, reserve, reserve_append

__all__ = ["AppendOutput", "Folder", "Output", "append_option", "database_option", "folder_option", "output_option"]

STDOUT = "-"
_SEEN = "tooldisc.outputs"  # root context meta: resolved path → the option that reserved it


def _name(param: Any) -> str:
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    return opts[0] if opts else str(getattr(param, "name", "output"))


def _claim(ctx: typer.Context, path: str, what: str) -> None:
    """Refuse a second output of the same command naming the same file (one would silently win)."""
    seen: dict[str, str] = ctx.find_root().meta.setdefault(_SEEN, {})
    key = os.path.realpath(path)
    if key in seen and not key.startswith(("/dev/", "/proc/")):
        raise UsageError(f"{what} names the same file as {seen[key]}", file=path)
    seen[key] = what


def _reserve(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> Output | str | None:
    if value is None:
        return None
    what = _name(param)
    if value == STDOUT and ctx.meta.get(f"{_SEEN}.stdout.{param.name}"):
        return STDOUT
    if not value:
        raise UsageError(f"{what} needs a file name; got an empty string")
    _claim(ctx, value, what)
    out = reserve(value, what)
    ctx.find_root().call_on_close(out.discard)
    return out


def _reserve_or_stdout(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> Output | str | None:
    ctx.meta[f"{_SEEN}.stdout.{param.name}"] = True
    return _reserve(ctx, param, value)


def _reserve_append(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> AppendOutput | None:
    if value is None:
        return None
    what = _name(param)
    if not value:
        raise UsageError(f"{what} needs a file name; got an empty string")
    _claim(ctx, value, what)
    out = reserve_append(value, what)
    ctx.find_root().call_on_close(out.discard)
    return out


class Folder:
    """A folder reserved for output files: created if absent and proven writable; files in it reserved on demand."""

    def __init__(self, ctx: typer.Context, path: str, what: str):
        self.path, self.what, self._ctx = path, what, ctx
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise UsageError("cannot be written: it is a file, not a folder", file=path, where=what)
        probe = reserve(folder / ".tooldisc-probe", what)  # makes the folder; proves a file can be created in it
        ctx.find_root().call_on_close(probe.discard)  # registered first, so run last: the folder is empty then

    def __str__(self) -> str:
        return self.path

    def reserve(self, name: str) -> Output:
        """Reserve the file ``name`` in the folder (call it before the work, as every output is)."""
        target = str(Path(self.path) / name)
        _claim(self._ctx, target, self.what)
        out = reserve(target, self.what)
        self._ctx.find_root().call_on_close(out.discard)
        return out


def _reserve_folder(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> Folder | None:
    if value is None:
        return None
    if not value:
        raise UsageError(f"{_name(param)} needs a folder name; got an empty string")
    return Folder(ctx, value, _name(param))


def _probe_database(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    if value is None:
        return None
    if not value:
        raise UsageError(f"{_name(param)} needs a file name; got an empty string")
    probe_folder(value, _name(param))
    return value


def output_option(*decls: str, help: str, stdout: bool = False, metavar: str = "PATH") -> Any:
    """A ``typer.Option`` for a file written atomically; the command gets an :class:`Output` (or None).

    With ``stdout``, ``-`` means standard output and arrives as the string ``"-"``.
    """
    return typer.Option(*decls, help=help, metavar=metavar, parser=str,
                        callback=_reserve_or_stdout if stdout else _reserve)


def append_option(*decls: str, help: str, metavar: str = "PATH") -> Any:
    """A ``typer.Option`` for a file appended to; the command gets an :class:`AppendOutput` (or None)."""
    return typer.Option(*decls, help=help, metavar=metavar, parser=str, callback=_reserve_append)


def folder_option(*decls: str, help: str, metavar: str = "DIR") -> Any:
    """A ``typer.Option`` for a folder of output files; the command gets a :class:`Folder`."""
    return typer.Option(*decls, help=help, metavar=metavar, parser=str, callback=_reserve_folder)


def database_option(*decls: str, help: str, metavar: str = "PATH") -> Any:
    """A ``typer.Option`` for a database file another library creates or opens: the place is probed, the path kept."""
    return typer.Option(*decls, help=help, metavar=metavar, callback=_probe_database)
