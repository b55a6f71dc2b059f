"""What every command shares: output formats, JSON/atomic writing, error rendering.

Commands stay thin: parse options, call one library function, render with these.
Data goes to stdout; progress and notes go to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldisc.errors import UsageError

FORMAT_HELP = "Output format."

FormatOption = Annotated[
    str, typer.Option("--format", "-f", help=FORMAT_HELP, show_default=True)
]
JsonOption = Annotated[bool, typer.Option("--json", help="Alias of --format json.")]


def resolve_format(fmt: str, json_flag: bool, allowed: Iterable[str]) -> str:
    """``--json`` wins; anything outside ``allowed`` is a usage error (exit 2)."""
    allowed = tuple(allowed)
    chosen = "json" if json_flag else fmt
    if chosen not in allowed:
        raise UsageError(f"--format must be one of {', '.join(allowed)}; got {chosen!r}")
    return chosen


def dumps_json(obj: Any) -> str:
    """Stable JSON for machines: sorted keys, UTF-8 kept, trailing newline."""
    return json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def print_json(obj: Any) -> None:
    sys.stdout.write(dumps_json(obj))


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write to a temp file beside ``path`` and rename, so a reader never sees half a file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def note(message: str) -> None:
    """A human note on stderr (never mixed into machine output)."""
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(message)


def stdout_console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=max(100, _term_width()))


def _term_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120


def print_counts(stats: dict[str, Any]) -> None:
    """Render a (one-level nested) mapping of counts as aligned text: the stats commands' table."""
    import typer

    for key, value in stats.items():
        if isinstance(value, dict):
            typer.echo(f"{key}:")
            for k, v in value.items():
                typer.echo(f"  {k:<32} {v:>6}")
        else:
            typer.echo(f"{key:<34} {'n/a' if value is None else value}")
