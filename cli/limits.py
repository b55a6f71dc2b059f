"""Count options with the documented range of :data:`tooldisc.limits.COUNTS`, declared once.

``--help`` shows each range (``[default: 5; 1<=x<=1000]``) and click refuses a value
outside it while parsing, before any work: one error line, exit 2.
"""

from __future__ import annotations

from typing import Any

import typer

from tooldisc.limits import COUNTS


def count_option(name: str, *decls: str, help: str, low: int | None = None) -> Any:
    """A ``typer.Option`` for the count ``name`` of :data:`~tooldisc.limits.COUNTS` (``low`` overrides its minimum)."""
    bound = COUNTS[name]
    return typer.Option(*decls, help=help, min=bound.low if low is None else low, max=bound.high)
