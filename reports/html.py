"""Standalone HTML writer: any :class:`~tooldisc.reports.blocks.Report` as one file.

Reports are opened from CI artifacts and mail attachments, often offline, so a page
is self-contained: inline CSS, charts as inline SVG, no script, and nothing that
makes a browser fetch (no ``src``, ``href`` or CSS ``url()`` pointing outside the
page). Data is escaped into text, so it can quote a URL — an experiment named
``http-cache-v2``, a query about a webhook — without the page referencing one;
:func:`page` checks the markup itself, not the text, before it returns.

A page is read on a phone as often as on a desktop: a viewport, charts that shrink with
the screen, tables that scroll sideways inside their own box (the page never does),
``dir="auto"`` wherever user text appears (Persian reads right to left), and print
styles. A report's decision, if it has one, is the banner above everything else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html.parser import HTMLParser

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
from tooldisc.reports.escape import html_text as esc

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1rem auto;padding:0 1rem;color:#222;max-width:72rem;line-height:1.4;overflow-wrap:anywhere}
h1{font-size:1.5rem;margin:0.5rem 0}
h2{font-size:1.2rem;margin:1.5rem 0 0.5rem}
.scroll{overflow-x:auto;max-width:100%;margin:0.5rem 0 1.5rem}
table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:0.3rem 0.6rem;text-align:start;vertical-align:top;overflow-wrap:normal}
td:not(.num){min-width:7rem}
@media (max-width:48rem){table{width:max-content}td:not(.num){max-width:22rem}}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.flag{background:#fbe3d9;color:#8c2a00;font-weight:bold}
code{font-size:0.85em;white-space:pre-wrap;overflow-wrap:anywhere}
.note{color:#444}
figure.chart{margin:0.5rem 0 1rem}
figure.chart svg{display:block;width:100%;height:auto}
figcaption{color:#444;font-size:0.9em}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,26rem),1fr));gap:0.5rem 1.5rem}
.banner{border:2px solid;border-inline-start-width:0.6rem;border-radius:4px;padding:0.6rem 1rem;margin:0.5rem 0 1rem}
.banner p{margin:0.25rem 0}
.banner .word{font-size:1.6rem;font-weight:bold;letter-spacing:0.03em}
.banner.good{border-color:#1b7837;background:#edf8ee}.banner.good .word{color:#14612b}
.banner.warn{border-color:#a66a00;background:#fff6e0}.banner.warn .word{color:#7a4d00}
.banner.bad{border-color:#b3261e;background:#fdecea}.banner.bad .word{color:#9b1c14}
.banner.info{border-color:#5a6b7b;background:#f2f5f8}.banner.info .word{color:#33404d}
details{margin:1rem 0}
summary{cursor:pointer;font-weight:bold}
.pass{color:#17692c}.fail,.FAIL{color:#b3261e;font-weight:bold}.not_judged{color:#8a5a00}.reported{color:#444}
.PROMOTE{color:#17692c}.HOLD{color:#8a5a00}.ROLLBACK{color:#b3261e}
.worse{color:#b3261e;font-weight:bold}.inconclusive{color:#8a5a00}.non_inferior{color:#17692c}
@media print{
body{max-width:none;margin:0;padding:0;font-size:10pt}
.scroll{overflow:visible}
.banner,figure.chart,tr{break-inside:avoid}
h2{break-after:avoid}
.banner,td.flag,th{print-color-adjust:exact;-webkit-print-color-adjust:exact}
details::details-content{content-visibility:visible;display:contents}
summary{list-style:none}
}
""".strip()

# Elements that load or run something, and attributes that name a resource.
_FETCHING_TAGS = frozenset({"script", "iframe", "frame", "object", "embed", "link", "base", "img", "image",
                            "audio", "video", "source", "track", "form", "use", "feimage", "meta"})
_URL_ATTRS = frozenset({"href", "xlink:href", "src", "srcset", "action", "formaction", "poster", "data",
                        "background", "cite", "longdesc", "ping", "manifest", "codebase", "usemap"})
_CSS_URL = re.compile(r"url\(\s*(['\"]?)(?!#)|@import", re.IGNORECASE)


def _harmless_meta(attrs: dict[str, str | None]) -> bool:
    """``<meta charset>`` and ``<meta name="viewport">`` fetch nothing; ``http-equiv``
    (a refresh to a URL) and anything else are refused."""
    if set(attrs) == {"charset"}:
        return True
    return set(attrs) == {"name", "content"} and attrs["name"] == "viewport" and \
        re.fullmatch(r"[a-z0-9=.,\- ]*", attrs["content"] or "") is not None


class _References(HTMLParser):
    """Collects every tag, attribute or CSS rule in a page that could fetch something."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _FETCHING_TAGS and not (tag == "meta" and _harmless_meta(dict(attrs))):
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


VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'


def page(title: str, body: Sequence[str]) -> str:
    """A complete, self-contained HTML document: ``<h1>title</h1>`` then ``body`` (markup).

    It fits any screen (a viewport, charts that scale, wide tables scrolling inside their
    own box), reads right to left where its data does (``dir="auto"`` on every element
    holding text), and prints cleanly; no script, nothing loaded from elsewhere.
    """
    out = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           f"{VIEWPORT}\n<title>{esc(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n"
           f"<h1 dir=\"auto\">{esc(title)}</h1>\n" + "\n".join(body) + "\n</body>\n</html>\n")
    refs = external_references(out)
    if refs:  # only code, never data, can put markup here: a bug to fix, not a report to write
        raise RuntimeError(f"HTML report would reference something outside itself: {refs[0]}")
    return out


# A token this long with no space (a tool name such as ``crm.contacts.merge_duplicate_records``)
# gets break opportunities after ``_ . / :``, so its column can narrow and a table fits its
# page instead of scrolling. ``<wbr>`` is markup, not text: copying the name copies it whole.
_LONG_TOKEN = re.compile(r"\S{24,}")
_BREAK_AFTER = re.compile(r"([_./:])(?=[^_./:])")


def _breakable(escaped: str) -> str:
    return _LONG_TOKEN.sub(lambda m: _BREAK_AFTER.sub(r"\1<wbr>", m.group(0)), escaped)


def _cell(value: str, *, num: bool = False, status: bool = False, code: bool = False,
          flag: bool = False) -> str:
    text = esc(value) if num or status or code else _breakable(esc(value))
    if status:
        text = f'<span class="{text}">{text}</span>'
    if code:
        text = f"<code>{text}</code>"
    if num:  # a number is never user text: no direction of its own
        return f'<td class="num{" flag" if flag else ""}">{text}</td>'
    return f'<td class="flag" dir="auto">{text}</td>' if flag else f'<td dir="auto">{text}</td>'


def _h2(text: str | None) -> list[str]:
    return [f'<h2 dir="auto">{esc(text)}</h2>'] if text else []


def html_table(table: Table) -> str:
    """A table (its title as ``<h2>``) in a box that scrolls sideways when the page is
    narrower than the table; header and cells escaped."""
    parts = _h2(table.title)
    if not table.rows:
        return "\n".join([*parts, f'<p dir="auto">{esc(table.empty)}</p>'])
    head = "".join(f'<th dir="auto">{esc(h)}</th>' for h in table.headers)
    body = "\n".join(
        "<tr>" + "".join(_cell(c, num=table.alignment(i) == "right", status=i in table.status,
                               flag=(r, i) in table.flagged)
                         for i, c in enumerate(row)) + "</tr>"
        for r, row in enumerate(table.rows))
    parts.append(f'<div class="scroll">\n<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n'
                 "</tbody>\n</table>\n</div>")
    return "\n".join(parts)


def _fields(block: Fields) -> str:
    parts = _h2(block.title)
    rows = "\n".join(f'<tr><th dir="auto">{esc(k)}</th>{_cell(v, code=block.code, status=k in block.status)}</tr>'
                     for k, v in block.pairs)
    parts.append(f'<div class="scroll">\n<table>\n<tbody>\n{rows}\n</tbody>\n</table>\n</div>')
    return "\n".join(parts)


def banner(decision: Decision) -> str:
    """The decision first: the verdict word (text, coloured by its tone), why, what next."""
    lines = [f'<section class="banner {decision.tone}" id="decision">',
             f'<p class="word" dir="auto">{esc(decision.word)}</p>',
             f'<p class="why" dir="auto"><b>Why:</b> {esc(decision.why)}</p>']
    if decision.next:
        lines.append(f'<p class="next" dir="auto"><b>Next:</b> {esc(decision.next)}</p>')
    return "\n".join([*lines, "</section>"])


def _chart(block: Chart) -> str:
    from tooldisc.reports.charts import chart_svg

    caption = f'\n<figcaption dir="auto">{esc(block.note)}</figcaption>' if block.note else ""
    return "\n".join([*_h2(block.heading), f'<figure class="chart">{chart_svg(block)}{caption}</figure>'])


def _block(block: Block) -> str:
    if isinstance(block, Lines):
        return '<ul class="note">' + "".join(f'<li dir="auto">{esc(line)}</li>' for line in block.items) + "</ul>"
    if isinstance(block, Paragraph):
        return f'<p dir="auto">{esc(block.text)}</p>'
    if isinstance(block, Fields):
        return _fields(block)
    if isinstance(block, Table):
        return html_table(block)
    if isinstance(block, Chart):
        return _chart(block)
    if isinstance(block, Grid):
        caption = [f'<p class="note" dir="auto">{esc(block.note)}</p>'] if block.note else []
        return "\n".join([*_h2(block.heading), *caption, '<div class="grid">',
                          *(_chart(c) for c in block.charts), "</div>"])
    if isinstance(block, Details):
        return "\n".join([f'<details>\n<summary dir="auto">{esc(block.summary)}</summary>',
                          *(_block(b) for b in block.blocks), "</details>"])
    raise TypeError(f"no HTML for {type(block).__name__}")


def write_html(report: Report) -> str:
    """The report as one standalone page, its decision (if any) first (an empty paragraph is the
    terminal's blank line: left out here)."""
    head = [banner(report.decision)] if report.decision is not None else []
    return page(report.title, [*head, *(_block(b) for b in report.blocks
                                        if not (isinstance(b, Paragraph) and not b.text))])
