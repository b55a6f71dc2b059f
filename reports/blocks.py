"""What a report says, independent of how it is written: a title and a few kinds of block.

Each report kind (eval, compare, a canary verdict…) turns its JSON document into a
:class:`Report` once; each format (Markdown, HTML, terminal table) writes any
:class:`Report`. So a kind is written once for every format, a format once for every
kind, and the formats cannot disagree about content. Blocks hold plain strings:
writers escape them, so a builder cannot forget to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Align = Literal["left", "right"]


@dataclass(frozen=True)
class Lines:
    """Facts or notes, one per line (Markdown bullets, an HTML list, plain terminal lines)."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Paragraph:
    """One sentence or two of prose."""

    text: str


@dataclass(frozen=True)
class Fields:
    """Named values: ``- **name**: value`` in Markdown, a two-column table elsewhere.

    ``code`` shows values verbatim (inline code), for machine-shaped values such as
    a gate's numbers; the values of ``status`` names also become their HTML class.
    """

    pairs: tuple[tuple[str, str], ...]
    title: str | None = None
    code: bool = False
    status: tuple[str, ...] = ()


@dataclass(frozen=True)
class Table:
    """A titled table; ``status`` columns also carry their value as the HTML cell's class
    (``pass``, ``fail``…) so the page can colour it. An empty table shows ``empty``."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str | None = None
    align: tuple[Align, ...] = ()
    status: tuple[int, ...] = ()
    empty: str = "None."

    def alignment(self, i: int) -> Align:
        return self.align[i] if i < len(self.align) else "left"


@dataclass(frozen=True)
class Chart:
    """A chart drawn only in HTML (by :mod:`tooldisc.reports.charts`, as inline SVG).

    ``mark``: ``line`` and ``bar`` plot ``y`` against ``x``, one series per ``color``;
    ``interval`` draws each row's ``x`` with a whisker from ``low`` to ``high``, one
    line per ``y`` value. Rows are JSON-able records.
    """

    mark: Literal["line", "bar", "interval"]
    rows: tuple[Mapping[str, Any], ...]
    x: str
    y: str
    title: str
    color: str | None = None
    x_title: str | None = None
    y_title: str | None = None
    heading: str | None = None
    x_max: float | None = None


Block = Lines | Paragraph | Fields | Table | Chart


@dataclass(frozen=True)
class Report:
    """A title and its blocks. ``level`` is the Markdown level of the title: 2 for a
    report appended to a larger page (a CI step summary)."""

    title: str
    blocks: tuple[Block, ...] = field(default=())
    level: int = 1


def table(headers: list[str] | tuple[str, ...], rows: Any, title: str | None = None, *,
          align: tuple[Align, ...] = (), status: tuple[int, ...] = (), empty: str = "None.") -> Table:
    """A :class:`Table` from any iterables, every cell made a string (None → ``n/a``)."""
    return Table(tuple(headers), tuple(tuple("n/a" if c is None else str(c) for c in row) for row in rows),
                 title, align, status, empty)


def numeric(n_text: int, n_numbers: int) -> tuple[Align, ...]:
    """Alignment for ``n_text`` text columns followed by ``n_numbers`` number columns."""
    return ("left",) * n_text + ("right",) * n_numbers
