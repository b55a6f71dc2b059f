"""The one progress bar of the CLI: rich, on stderr, drawn only for a terminal (or when asked).

Library code reports progress through plain callbacks; this module turns them into a
bar, so every command's bar looks and behaves the same, and a bar never interprets
text as markup (descriptions can hold file names).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Bar:
    """Updates for one bar; each task is named by its description (bench shows one per phase)."""

    def __init__(self, progress: Any, label: str, total: float | None):
        self._progress = progress
        self._label, self._total = label, total
        self._tasks: dict[str, Any] = {}

    def _task(self, phase: str | None) -> Any:
        """The task of ``phase`` (default: the bar's own label), added on first use."""
        name = phase or self._label
        if name not in self._tasks:
            self._tasks[name] = self._progress.add_task(name, total=None if phase else self._total)
        return self._tasks[name]

    def set(self, done: float, total: float | None = None, phase: str | None = None) -> None:
        """``done`` of ``total`` (total unchanged when None)."""
        kwargs = {} if total is None else {"total": total}
        self._progress.update(self._task(phase), completed=done, **kwargs)

    def advance(self, n: float = 1) -> None:
        self._progress.advance(self._task(None), n)


@contextmanager
def progress_bar(label: str, total: float | None = None, *, enabled: bool | None = None,
                 counts: bool = True) -> Iterator[Bar | None]:
    """A transient bar on stderr; ``None`` when not shown (default: shown when stderr is a terminal).

    ``counts`` shows "done/total" and the time left; without it the bar shows the count
    so far and the time elapsed (for work of unknown size).
    """
    if not (enabled if enabled is not None else sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = ((MofNCompleteColumn(), TimeRemainingColumn()) if counts
               else (TextColumn("{task.completed:,.0f}"), TimeElapsedColumn()))
    with Progress(TextColumn("{task.description:<28}", markup=False), BarColumn(), *columns,
                  console=Console(stderr=True), transient=True) as progress:
        yield Bar(progress, label, total)
