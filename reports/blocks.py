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
class Decision:
    """What a report decides, said first in every format: the HTML banner, the Markdown
    summary's opening line, the terminal's first lines.

    ``word`` is the verdict as text (PROMOTE, FAILED…: never colour alone), ``tone`` one
    of ``good``, ``warn``, ``bad`` or ``info`` (the banner's colour), ``why`` one sentence
    naming the deciding gate or measure, ``next`` what to do now (None when nothing).
    """

    word: str
    tone: Literal["good", "warn", "bad", "info"]
    why: str
    next: str | None = None


@dataclass(frozen=True)
class Lines:
    """Facts or notes, one per line (Markdown bullets, an HTML list, plain terminal lines).

    ``wrap=False``: the terminal writes each line whole, never wrapped at its width, as
    the commands that print lines (``catalog validate``, ``gold stats``…) always have.
    """

    items: tuple[str, ...]
    wrap: bool = True


@dataclass(frozen=True)
class Paragraph:
    """One sentence or two of prose; an empty one is a blank line in the terminal, nothing elsewhere."""

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
    widths: tuple[int, ...] = ()  # terminal: plain text columns this wide (see :func:`text_columns`), no box


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
    flagged: frozenset[tuple[int, int]] = frozenset()  # (row, column) cells marked as bad
    # The terminal only: a cell too narrow for a word folds it (or ends it in "…"); an empty
    # table is the ``empty`` line unless ``boxed_empty`` (then its box and headers); with
    # ``widths``, plain text columns this wide, headers first, no box, no wrapping and no title line.
    overflow: Literal["fold", "ellipsis"] = "fold"
    boxed_empty: bool = False
    widths: tuple[int, ...] = ()

    def alignment(self, i: int) -> Align:
        return self.align[i] if i < len(self.align) else "left"


@dataclass(frozen=True)
class Chart:
    """A chart drawn only in HTML (by :mod:`tooldisc.reports.charts`, as inline SVG).

    ``mark``: ``line`` and ``bar`` plot ``y`` against ``x``, one series per ``color``;
    ``interval`` draws each row's ``x`` with a whisker from ``low`` to ``high``, one
    line per ``y`` value (side by side per ``color``), with ``ref`` as a line (no
    difference) when given and the dot's form from the ``shape`` field (``shapes`` maps
    its values to Vega point shapes); ``forest`` is ``interval`` against a reference: each row also
    has ``ref`` (no difference, a line) and ``limit`` (the margin; the band between them
    is shaded), ``color`` names the outcome; ``band`` draws ``y`` over ``x`` with the
    ``low``–``high`` band around it and the same ``ref`` and ``limit`` lines. Rows are
    JSON-able records. ``note`` is a caption under the chart.
    """

    mark: Literal["line", "bar", "interval", "forest", "band"]
    rows: tuple[Mapping[str, Any], ...]
    x: str
    y: str
    title: str
    color: str | None = None
    x_title: str | None = None
    y_title: str | None = None
    heading: str | None = None
    x_max: float | None = None
    note: str | None = None
    colors: tuple[tuple[str, str], ...] = ()  # value of ``color`` → colour, when fixed
    ref: float | None = None
    shape: str | None = None
    shapes: tuple[tuple[str, str], ...] = ()  # value of ``shape`` → point shape


@dataclass(frozen=True)
class Details:
    """Blocks folded away under a one-line ``summary`` (HTML ``<details>``, closed): numbers
    a reader may want, after the decision. The terminal leaves them out (``--format json``
    has them all) unless ``in_terminal``: then it prints the summary as a heading and the
    blocks under it (a terminal cannot fold, and some lists belong in every format)."""

    summary: str
    blocks: tuple[Any, ...]
    in_terminal: bool = False


@dataclass(frozen=True)
class Grid:
    """Charts side by side where the page is wide, one under another where it is narrow."""

    charts: tuple[Chart, ...]
    heading: str | None = None
    note: str | None = None


Block = Lines | Paragraph | Fields | Table | Chart | Details | Grid


@dataclass(frozen=True)
class Report:
    """A title and its blocks. ``level`` is the Markdown level of the title: 2 for a
    report appended to a larger page (a CI step summary). ``terminal_title=False`` for the
    commands whose terminal output never had a title line (``discover``, ``bench``…): their
    table stays as it was, byte for byte, and Markdown and HTML still get a title."""

    title: str
    blocks: tuple[Block, ...] = field(default=())
    level: int = 1
    decision: Decision | None = None
    terminal_title: bool = True  # False: the terminal starts with the first block (a command's own layout)


def table(headers: list[str] | tuple[str, ...], rows: Any, title: str | None = None, *,
          align: tuple[Align, ...] = (), status: tuple[int, ...] = (), empty: str = "None.",
          flagged: frozenset[tuple[int, int]] = frozenset(), overflow: Literal["fold", "ellipsis"] = "fold",
          boxed_empty: bool = False, widths: tuple[int, ...] = ()) -> Table:
    """A :class:`Table` from any iterables, every cell made a string (None → ``n/a``)."""
    return Table(tuple(headers), tuple(tuple("n/a" if c is None else str(c) for c in row) for row in rows),
                 title, align, status, empty, flagged, overflow, boxed_empty, widths)


def text_columns(cells: tuple[str, ...], widths: tuple[int, ...], align: tuple[Align, ...] = ()) -> str:
    """One line of plain text columns: each cell padded to its width (never cut), one space between.

    A cell past the last width is written as is. The layout the line-printing commands have
    always used (``f"{label:<24} {n:>8}"``), kept by the terminal writer for tables and
    fields that carry ``widths``.
    """
    out = []
    for i, cell in enumerate(cells):
        if i >= len(widths):
            out.append(cell)
        else:
            right = i < len(align) and align[i] == "right"
            out.append(cell.rjust(widths[i]) if right else cell.ljust(widths[i]))
    return " ".join(out)


def numeric(n_text: int, n_numbers: int) -> tuple[Align, ...]:
    """Alignment for ``n_text`` text columns followed by ``n_numbers`` number columns."""
    return ("left",) * n_text + ("right",) * n_numbers
