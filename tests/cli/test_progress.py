"""The CLI's one progress bar: hidden unless asked for (or a terminal), never markup, one task per phase."""

from __future__ import annotations

import pytest

from tooldisc.cli.progress import progress_bar


def test_hidden_bar_is_none() -> None:
    with progress_bar("discovering", 10, enabled=False) as bar:
        assert bar is None


@pytest.mark.parametrize("counts", [True, False])
def test_shown_bar_counts_and_names_phases(counts: bool) -> None:
    with progress_bar("[bold]x[/bold] file.jsonl", 4, enabled=True, counts=counts) as bar:
        assert bar is not None
        bar.set(2)
        bar.advance()
        bar.set(5, 10, phase="index 10000")
        tasks = {t.description: t for t in bar._progress.tasks}
    assert tasks["[bold]x[/bold] file.jsonl"].completed == 3
    assert tasks["[bold]x[/bold] file.jsonl"].total == 4
    assert (tasks["index 10000"].completed, tasks["index 10000"].total) == (5, 10)
    assert bar._progress.columns[0].markup is False  # a file name is never read as rich markup
