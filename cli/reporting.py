"""Rendering a report for this process's stdout: the one place the CLI calls ``render``.

:func:`tooldisc.reports.render` is pure; the terminal's width and whether stdout is
a terminal (colour) are I/O, so they are read here, at the edge.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any


def report_text(document: Mapping[str, Any], kind: str, fmt: str) -> str:
    """``render(document, kind, fmt)``; the table format fits the terminal (at least 100 columns)."""
    from tooldisc.reports import render

    if fmt != "table":
        return render(document, kind, fmt)
    try:
        width = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        width = 120
    from tooldisc.terminal import holds_unicode

    return render(document, kind, fmt, width=max(100, width), color=sys.stdout.isatty(),
                  ascii=not holds_unicode(sys.stdout))
