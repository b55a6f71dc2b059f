"""Markdown writer: any :class:`~tooldisc.reports.blocks.Report` as GitHub-flavoured Markdown.

Used for CI step summaries and PR comments, where raw HTML and links in a gold label
would render; every piece of data goes through :func:`~tooldisc.reports.escape.md_text`.
"""

from __future__ import annotations

from collections.abc import Sequence

from tooldisc.reports.blocks import (
    Block,
    Chart,
    Decision,
    Details,
    Fields,
    Grid,
    Lines,
    Paragraph,
    Report,
    Table,
)
from tooldisc.reports.escape import md_code, md_text


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
             align: Sequence[str] = ()) -> str:
    """A pipe table; every header and cell escaped, right-aligned where asked."""
    def rule(i: int) -> str:
        return "---:" if i < len(align) and align[i] == "right" else "---"

    out = ["| " + " | ".join(md_text(h, line_start=False) for h in headers) + " |",
           "|" + "|".join(rule(i) for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(md_text(c, line_start=False) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _heading(text: str, level: int) -> str:
    body = md_text(text, line_start=False)
    if body.endswith("#"):  # a trailing run of # would read as the heading's closing sequence
        body = body[:-1] + "\\#"
    return f"{'#' * level} {body}"


def _block(block: Block, level: int) -> list[str]:
    if isinstance(block, Lines):
        return [f"- {md_text(line)}" for line in block.items]
    if isinstance(block, Paragraph):
        return [md_text(block.text)] if block.text else []
    if isinstance(block, Fields):
        head = [_heading(block.title, level), ""] if block.title else []
        value = md_code if block.code else md_text
        return head + [f"- **{md_text(k)}**: {value(v)}" for k, v in block.pairs]
    if isinstance(block, Table):
        head = [_heading(block.title, level), ""] if block.title else []
        body = md_table(block.headers, block.rows, [block.alignment(i) for i in range(len(block.headers))])
        return [*head, body if block.rows else md_text(block.empty)]
    if isinstance(block, Chart):  # drawn only in HTML; its section heading stays
        return [_heading(block.heading, level)] if block.heading else []
    if isinstance(block, Grid):
        return []
    if isinstance(block, Details):
        # GitHub folds this away (a CI step summary stays short); the tags are ours, the
        # contents escaped as everywhere, with the blank lines GFM needs around them
        inner = [line for b in block.blocks for line in [*_block(b, level), ""]]
        return [f"<details><summary>{md_text(block.summary, line_start=False)}</summary>", "", *inner,
                "</details>"]
    raise TypeError(f"no Markdown for {type(block).__name__}")


def decision_line(decision: Decision) -> str:
    """The decision as one Markdown paragraph: the verdict word in bold, why, and next."""
    text = f"**{md_text(decision.word, line_start=False)}** — {md_text(decision.why, line_start=False)}"
    if decision.next:
        text += f" **Next:** {md_text(decision.next, line_start=False)}"
    return text


def write_markdown(report: Report) -> str:
    """The report as Markdown: the title at ``report.level``, then the decision line (if
    the report decides something), then sections one level below."""
    parts = [_heading(report.title, report.level)]
    if report.decision is not None:
        parts.append(decision_line(report.decision))
    for block in report.blocks:
        lines = _block(block, report.level + 1)
        if lines:
            parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"
