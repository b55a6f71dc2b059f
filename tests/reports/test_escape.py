"""The escapers, checked by parsing their output: markdown-it (CommonMark + tables) for
Markdown, the standard library's HTML parser for HTML."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from tooldisc.reports.escape import html_text, md_code, md_text, visible
from tooldisc.reports.html import external_references
from tooldisc.reports.markdown import md_table

HOSTILE = [
    "<svg onload=alert(1)>",
    "<script>alert(1)</script> & <b>bold</b>",
    "[click](https://evil.example/x) and ![pixel](https://evil.example/p.png)",
    "<https://evil.example/autolink>",
    "**strong** _em_ *em* ~~gone~~ `code`",
    "| fake | row |",
    "# not a heading",
    "> not a quote",
    "- not a list",
    "1. not a list",
    "=== not an underline",
    "@everyone look $x^2$ \\escaped\\",
    "snake_case_name and __dunder__",
    "&lt;already an entity&gt; &amp;",
    "ANSI \x1b[31mred\x1b[0m and a\nnewline and \u202eoverride",
]
UNSAFE_TOKENS = {"html_inline", "html_block", "link_open", "image", "em_open", "strong_open", "s_open",
                 "code_inline", "heading_open", "blockquote_open", "bullet_list_open", "ordered_list_open",
                 "hr"}


def _md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _inline_tokens(text: str) -> list:
    out = []
    for tok in _md().parse(text):
        out.append(tok)
        out += list(tok.children or [])
    return out


def _rendered_text(text: str) -> str:
    return "".join(t.content for t in _inline_tokens(text) if t.type == "text")


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_text_renders_as_exactly_the_value(value: str) -> None:
    for line_start in (True, False):
        out = md_text(value, line_start=line_start)
        assert "\n" not in out
        source = out if line_start else f"x {out}"
        tokens = _inline_tokens(source)
        assert not {t.type for t in tokens} & UNSAFE_TOKENS, (value, out)
        assert _rendered_text(source) == (visible(value) if line_start else f"x {visible(value)}")


def test_markdown_table_cells_stay_cells() -> None:
    rows = [[v, "ok"] for v in HOSTILE]
    tokens = _inline_tokens(md_table(["query", "status"], rows, ["left", "right"]))
    assert not {t.type for t in tokens} & UNSAFE_TOKENS
    cells = [t for t in _md().parse(md_table(["query", "status"], rows)) if t.type == "inline"]
    texts = ["".join(c.content for c in t.children if c.type == "text") for t in cells]
    assert texts == ["query", "status", *[x for v in HOSTILE for x in (visible(v), "ok")]]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_markdown_text_round_trips_any_text(value: str) -> None:
    out = md_text(value)
    tokens = _inline_tokens(out)
    assert not {t.type for t in tokens} & UNSAFE_TOKENS, (value, out)
    # CommonMark trims a paragraph's edge whitespace (Unicode spaces too)
    assert _rendered_text(out).strip() == visible(value).strip()


def test_markdown_code_span_holds_backticks_verbatim() -> None:
    value = 'a ``b`` `c` {"x": 1}'
    tokens = [t for t in _inline_tokens(md_code(value)) if t.type == "code_inline"]
    assert [t.content for t in tokens] == [value]


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.mark.parametrize("value", HOSTILE)
def test_html_text_is_only_text(value: str) -> None:
    parser = _Collect()
    parser.feed(f"<td>{html_text(value)}</td><td title=\"{html_text(value)}\">x</td>")
    parser.close()
    assert parser.tags == ["td", "td"]
    assert "".join(parser.text) == visible(value) + "x"


def test_terminal_text_shows_control_and_bidi_characters_as_codes() -> None:
    assert visible("ok\x1b[2J\nOK \u202eevil\u2066") == "ok\\x1b[2J\\x0aOK \\u202eevil\\u2066"
    assert visible(None) == "" and visible("plain ایران") == "plain ایران"


@pytest.mark.parametrize(("markup", "found"), [
    ('<p>http-cache-v2 and https://x.example/y</p><svg><g clip-path="url(#clip1)"></g></svg>', []),
    ('<a href="#top">top</a>', []),
    ('<a href="https://x.example">x</a>', ["<a href=…>"]),
    ('<img alt="x">', ["<img>"]),
    ('<svg><image xlink:href="//x.example/p.png"/></svg>', ["<image>", "<image xlink:href=…>"]),
    ('<div style="background:url(https://x.example/p.png)">x</div>', ["<div style=…url()>"]),
    ("<style>@import 'x.css';</style>", ["<style> url()/@import"]),
    ('<meta http-equiv="refresh" content="0;url=https://x.example">', ["<meta>"]),
])
def test_external_references_look_at_markup_not_text(markup: str, found: list[str]) -> None:
    assert external_references(markup) == found
