"""The escapers every report format uses: one for HTML, one for Markdown, one for terminals.

Everything a report shows that came from a document (a gold query, a tool name, an
experiment name) is data, never markup: a gold label such as ``<svg onload=…>`` must
reach the reader as those characters, in every format. Writers call these on every
cell, heading and line they did not write themselves, so no format can forget.
"""

from __future__ import annotations

import html
import re
from typing import Any

# CommonMark: backslash escapes these anywhere; `<` starts raw HTML and autolinks, `[`
# links and images, `|` a table cell, `$` math (GitHub), `&` an entity.
_MD_ANYWHERE = re.compile(r"([\\`*\[\]<|~&$])")
# `_` emphasises only at a word edge (``list_invoices`` stays readable); `@` after a
# non-word character is a GitHub mention.
_MD_EDGE = re.compile(r"(?<![^\W_])_|_(?![^\W_])|(?<![^\W_])@")
# What turns a line into a block (heading, quote, list, rule, setext underline) at its start.
_MD_BLOCK_START = re.compile(r"^(\s*)([#>+\-=]|\d+(?=[.)]))")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def visible(value: Any) -> str:
    """Control and bidi characters shown as ``\\x1b``/``\\u202e`` (None → empty).

    A tool name or query holding an ANSI escape, a newline or a direction override
    must not repaint a terminal or fake a table row; the reader sees the code instead.
    The rule is :func:`tooldisc.terminal.escape`, the one every CLI line also uses.
    """
    from tooldisc.terminal import escape

    return escape(value)


def html_text(value: Any) -> str:
    """Text for an HTML text node or a quoted attribute value (None → empty).

    Escaping ``& < > " '`` is all HTML needs for data to stay data; a URL quoted in a
    query stays visible text, which fetches nothing. Control characters are shown as
    codes, as everywhere (a page may also be read with ``cat``).
    """
    return html.escape(visible(value), quote=True)


def md_text(value: Any, *, line_start: bool = True) -> str:
    """Inline Markdown that renders as exactly ``value`` on one line: no HTML, link,
    emphasis, mention, math or block syntax survives (None → empty).

    ``line_start=False`` is for table cells, which GitHub parses as inline text only,
    so ``-0.0123`` need not become ``\\-0.0123`` there.
    """
    text = visible(_text(value))
    text = _MD_ANYWHERE.sub(r"\\\1", text)
    text = _MD_EDGE.sub(lambda m: "\\" + m.group(), text)
    return _MD_BLOCK_START.sub(_escape_block_start, text, count=1) if line_start else text


def _escape_block_start(m: re.Match[str]) -> str:
    lead, mark = m.groups()
    return f"{lead}{mark}\\" if mark[0].isdigit() else f"{lead}\\{mark}"


def md_code(value: Any) -> str:
    """An inline code span holding ``value`` verbatim (fence longer than any backtick run)."""
    text = visible(_text(value))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
