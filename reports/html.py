"""Standalone HTML writer: any :class:`~tooldisc.reports.blocks.Report` as one file.

Reports are opened from CI artifacts and mail attachments, often offline, so a page
is self-contained: inline CSS, charts as inline SVG, no script, and nothing that
makes a browser fetch (no ``src``, ``href`` or CSS ``url()`` pointing outside the
page). Data is escaped into text, so it can quote a URL — an experiment named
``http-cache-v2``, a query about a webhook — without the page referencing one;
:func:`page` checks the markup itself, not the text, before it returns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html.parser import HTMLParser

from tooldisc.reports.blocks import Block, Chart, Fields, Lines, Paragraph, Report, Table
from tooldisc.reports.escape import html_text as esc

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#222;max-width:72rem}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:0.3rem 0.6rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:0.85em;white-space:pre-wrap}
.note{color:#444}
.chart{margin:0.5rem 0 1rem}
.pass{color:#17692c}.fail,.FAIL{color:#b3261e;font-weight:bold}.not_judged{color:#8a5a00}.reported{color:#444}
.PROMOTE{color:#17692c}.HOLD{color:#8a5a00}.ROLLBACK{color:#b3261e}
""".strip()

# Elements that load or run something, and attributes that name a resource.
_FETCHING_TAGS = frozenset({"script", "iframe", "frame", "object", "embed", "link", "base", "img", "image",
                            "audio", "video", "source", "track", "form", "use", "feimage", "meta"})
_URL_ATTRS = frozenset({"href", "xlink:href", "src", "srcset", "action", "formaction", "poster", "data",
                        "background", "cite", "longdesc", "ping", "manifest", "codebase", "usemap"})
_CSS_URL = re.compile(r"url\(\s*(['\"]?)(?!#)|@import", re.IGNORECASE)


class _References(HTMLParser):
    """Collects every tag, attribute or CSS rule in a page that could fetch something."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _FETCHING_TAGS and not (tag == "meta" and set(dict(attrs)) == {"charset"}):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name in _URL_ATTRS and not (value or "").startswith("#"):
                self.found.append(f"<{tag} {name}=…>")
            elif name == "style" and value and _CSS_URL.search(value):
                self.found.append(f"<{tag} style=…url()>")
        self._in_style = tag == "style"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._in_style = False

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and _CSS_URL.search(data):
            self.found.append("<style> url()/@import")


def external_references(markup: str) -> list[str]:
    """Every place in ``markup`` (tags, attributes, CSS — not text) that could fetch a resource.

    Text is never a reference: ``http-cache-v2`` or a quoted ``https://…`` in a cell is
    shown, not loaded. In-page fragments (``url(#clip1)``, ``href="#x"``) are allowed.
    """
    parser = _References()
    parser.feed(markup)
    parser.close()
    return parser.found


def page(title: str, body: Sequence[str]) -> str:
    """A complete, self-contained HTML document: ``<h1>title</h1>`` then ``body`` (markup)."""
    out = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           f"<title>{esc(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n"
           f"<h1>{esc(title)}</h1>\n" + "\n".join(body) + "\n</body>\n</html>\n")
    refs = external_references(out)
    if refs:  # only code, never data, can put markup here: a bug to fix, not a report to write
        raise RuntimeError(f"HTML report would reference something outside itself: {refs[0]}")
    return out


def _cell(value: str, *, num: bool = False, status: bool = False, code: bool = False) -> str:
    text = esc(value)
    if status:
        text = f'<span class="{text}">{text}</span>'
    if code:
        text = f"<code>{text}</code>"
    return f'<td class="num">{text}</td>' if num else f"<td>{text}</td>"


def html_table(table: Table) -> str:
    """A table (its title as ``<h2>``); header and cells escaped."""
    parts = [f"<h2>{esc(table.title)}</h2>"] if table.title else []
    if not table.rows:
        return "\n".join([*parts, f"<p>{esc(table.empty)}</p>"])
    head = "".join(f"<th>{esc(h)}</th>" for h in table.headers)
    body = "\n".join(
        "<tr>" + "".join(_cell(c, num=table.alignment(i) == "right", status=i in table.status)
                         for i, c in enumerate(row)) + "</tr>"
        for row in table.rows)
    parts.append(f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>")
    return "\n".join(parts)


def _fields(block: Fields) -> str:
    parts = [f"<h2>{esc(block.title)}</h2>"] if block.title else []
    rows = "\n".join(f"<tr><th>{esc(k)}</th>{_cell(v, code=block.code, status=k in block.status)}</tr>"
                     for k, v in block.pairs)
    parts.append(f"<table>\n<tbody>\n{rows}\n</tbody>\n</table>")
    return "\n".join(parts)


def _block(block: Block) -> str:
    if isinstance(block, Lines):
        return '<ul class="note">' + "".join(f"<li>{esc(line)}</li>" for line in block.items) + "</ul>"
    if isinstance(block, Paragraph):
        return f"<p>{esc(block.text)}</p>"
    if isinstance(block, Fields):
        return _fields(block)
    if isinstance(block, Table):
        return html_table(block)
    if isinstance(block, Chart):
        from tooldisc.reports.charts import chart_svg

        head = f"<h2>{esc(block.heading)}</h2>\n" if block.heading else ""
        return f'{head}<div class="chart">{chart_svg(block)}</div>'
    raise TypeError(f"no HTML for {type(block).__name__}")


def write_html(report: Report) -> str:
    """The report as one standalone page."""
    return page(report.title, [_block(b) for b in report.blocks])
