"""Terminal writer: any :class:`~tooldisc.reports.blocks.Report` as rich tables, as a string.

Cells are :class:`rich.text.Text`, never markup, so a query holding ``[/x]`` prints as
typed instead of raising, and control or bidi characters are shown as codes
(:func:`~tooldisc.reports.escape.visible`) so a tool name cannot repaint the terminal
or print a fake row. Writing to a string keeps this a pure function; the CLI passes
the terminal's width and whether to colour.
"""

from __future__ import annotations

import io
from typing import Any

from tooldisc.reports.blocks import (
    Block,
    Chart,
    Details,
    Fields,
    Grid,
    Lines,
    Paragraph,
    Report,
    Table,
    text_columns,
)
from tooldisc.reports.escape import visible


class _Raw(str):
    """A line written as is (already escaped), never wrapped: the layout of the line-printing commands."""


def _text(value: str, style: str = "") -> Any:
    from rich.text import Text

    return Text(visible(value), style=style)


def _table(block: Table) -> list[Any]:
    from rich.table import Table as RichTable

    if block.widths:
        align = tuple(block.alignment(i) for i in range(len(block.headers)))
        # padded, then escaped: the layout of the lines ``gold split`` has always printed
        return [_Raw(visible(text_columns(row, block.widths, align))) for row in (block.headers, *block.rows)]
    if not block.rows and not block.boxed_empty:
        return [_text(f"{block.title}: {block.empty}" if block.title else block.empty)]
    out = RichTable(title=_text(block.title) if block.title else None)
    for i, h in enumerate(block.headers):
        out.add_column(_text(h), justify=block.alignment(i), overflow=block.overflow)
    for row in block.rows:
        out.add_row(*[_text(c) for c in row])
    return [out]


def _fields(block: Fields) -> list[Any]:
    from rich.table import Table as RichTable

    if block.widths:  # escaped, then padded (the stats commands' layout); a titled group indented under "title:"
        head = [_Raw(f"{visible(block.title)}:")] if block.title else []
        indent = "  " if block.title else ""
        return head + [_Raw(indent + text_columns((visible(k), visible(v)), block.widths, ("left", "right")))
                       for k, v in block.pairs]
    out = RichTable(title=_text(block.title) if block.title else None, show_header=False)
    out.add_column(overflow="fold")
    out.add_column(overflow="fold")
    for k, v in block.pairs:
        out.add_row(_text(k), _text(v))
    return [out]


def _block(block: Block) -> list[Any]:
    if isinstance(block, Lines):
        return [_text(line) if block.wrap else _Raw(visible(line)) for line in block.items]
    if isinstance(block, Paragraph):
        return [_text(block.text)]
    if isinstance(block, Fields):
        return _fields(block)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Chart):  # drawn only in HTML; its section heading stays
        return [_text(block.heading, "bold")] if block.heading else []
    if isinstance(block, Details) and block.in_terminal:
        return [_text(block.summary, "bold"), *(item for b in block.blocks for item in _block(b))]
    if isinstance(block, Grid | Details):
        return []  # raw numbers stay out of the terminal: --format json has them
    raise TypeError(f"no terminal rendering for {type(block).__name__}")


_TONES = {"good": "bold green", "warn": "bold yellow", "bad": "bold red", "info": "bold"}


class _AsciiBuffer(io.StringIO):
    """Text for a terminal whose encoding is not UTF: rich draws its boxes in ASCII for it."""

    encoding = "ascii"


def write_table(report: Report, *, width: int = 100, color: bool = False, ascii: bool = False) -> str:
    """The report as terminal text ``width`` columns wide; ANSI styles only with ``color``; boxes in ASCII
    with ``ascii``."""
    from rich.console import Console

    buf = _AsciiBuffer() if ascii else io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, markup=False, emoji=False, soft_wrap=False)
    if report.terminal_title:
        console.print(_text(report.title, "bold"))
    if (d := report.decision) is not None:
        console.print(_text(d.word, _TONES[d.tone]))
        console.print(_text(f"Why: {d.why}"))
        if d.next:
            console.print(_text(f"Next: {d.next}"))
    for block in report.blocks:
        for item in _block(block):
            if isinstance(item, _Raw):
                buf.write(f"{item}\n")
            else:
                console.print(item)
    return buf.getvalue()
