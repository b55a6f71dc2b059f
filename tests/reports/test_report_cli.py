"""Reports through the real command: exact structure per format, hostile gold labels,
byte-identical reruns, ``compare --format html``, an experiment named like a URL, ``--version``.

Each run is a subprocess (a second or more), so each format runs once and only the HTML
page with a chart is rerun for byte identity (every format is rerun in process in
tests/evaluation/test_reports.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from tests.conftest import ROOT, invoke_cli
from tooldisc.reports.html import external_references

TOOLS = [
    {"name": "list_invoices", "description": "List sales invoices", "side_effect": "none",
     "keywords": ["invoice", "invoices"]},
    {"name": "delete_invoice", "description": "Delete a sales invoice", "side_effect": "delete",
     "keywords": ["invoice", "delete"]},
    {"name": "list_customers", "description": "List customers", "side_effect": "none",
     "keywords": ["customer", "customers"]},
    {"name": "export_report", "description": "Export a sales report as Excel", "side_effect": "export",
     "keywords": ["report", "excel"]},
]
SVG = "<svg onload=alert(1)> delete the invoice"
LINKS = "[click](https://evil.example) ![p](https://evil.example/p.png) **bold** | fake | row |"
ANSI = "ANSI \x1b[31mred\x1b[0m\nOK | fake row"
MARKUP = "[/red] [bold]customers"
# Every primary tool is one the query does not ask for, so every query is a listed miss;
# the read intent makes the offered delete tool forbidden.
QUERIES = [
    {"id": "h1", "query": SVG, "primary_expected_tools": ["export_report"], "intent": "read",
     "category": "<img src=x onerror=alert(1)>"},
    {"id": "h2", "query": LINKS, "primary_expected_tools": ["export_report"], "intent": "read",
     "category": "[/red] [bold]"},
    {"id": "h3", "query": ANSI, "primary_expected_tools": ["export_report"], "intent": "read",
     "category": "# heading"},
    {"id": "h4", "query": MARKUP, "primary_expected_tools": ["export_report"], "intent": "read",
     "category": "# heading"},
]
MD_UNSAFE = {"html_inline", "html_block", "link_open", "image", "em_open", "strong_open"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("hostile")
    (d / "catalog.json").write_text(json.dumps({"catalog_version": "h-1", "tools": TOOLS}), encoding="utf-8")
    (d / "gold.json").write_text(json.dumps({"catalog_version": "h-1", "queries": QUERIES}), encoding="utf-8")
    return ["--catalog", str(d / "catalog.json"), "--gold", str(d / "gold.json"), "--k", "2", "--by", "category"]


def _ok(*args: str) -> str:
    res = invoke_cli(*args)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res.stdout


class _Page(HTMLParser):
    """Headings, every tag and every attribute name of a page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[str] = []
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self._heading: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        self.attrs |= {name for name, _ in attrs}
        if tag in ("h1", "h2"):
            self._heading = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2") and self._heading is not None:
            self.headings.append(f"{tag} {self._heading}")
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading += data


def _md_headings(text: str) -> list[str]:
    """``h1 text`` per heading, as rendered (escapes resolved)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    return [f"{tok.tag} " + "".join(c.content for c in tokens[i + 1].children if c.type == "text")
            for i, tok in enumerate(tokens) if tok.type == "heading_open"]


def test_eval_json_names_the_forbidden_tool_on_every_miss_row(hostile: list[str]) -> None:
    doc = json.loads(_ok("eval", *hostile, "--format", "json"))
    schema = json.loads(resources.files("tooldisc.evaluation").joinpath("data/eval.schema.json").read_text("utf-8"))
    jsonschema.validate(doc, schema)
    rows = {(m["id"], m["kind"]): m["forbidden_offered"] for m in doc["misses"]}
    assert rows[("h1", "forbidden")] == ["delete_invoice"] == rows[("h1", "miss")]
    assert doc["metrics"]["forbidden@2"] > 0


def test_eval_markdown_structure_and_hostile_labels(hostile: list[str]) -> None:
    md = _ok("eval", *hostile, "--format", "md")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    inline = [c for t in tokens for c in (t.children or [])]
    assert not {t.type for t in [*tokens, *inline]} & MD_UNSAFE
    headings = _md_headings(md)
    assert headings[:3] == ["h1 tooldisc eval", "h2 Measures", "h2 By category"]
    assert headings[3].startswith("h2 Worst misses (") and len(headings) == 4
    # every row of the misses table has exactly its six cells, whatever the query held
    table = tokens[[i for i, t in enumerate(tokens) if t.type == "table_open"][-1]:]
    rows = [t for t in table if t.type == "tr_open"]
    cells = [t for t in table if t.type in ("th_open", "td_open")]
    assert len(cells) == 6 * len(rows)
    texts = ["".join(c.content for c in t.children if c.type == "text") for t in table if t.type == "inline"]
    assert texts[:6] == ["id", "kind", "query", "expected", "got", "forbidden offered"]
    assert SVG in texts and LINKS in texts and MARKUP in texts and "delete_invoice" in texts
    assert "ANSI \\x1b[31mred\\x1b[0m\\x0aOK | fake row" in texts


def test_eval_html_structure_hostile_labels_and_rerun(hostile: list[str], tmp_path: Path) -> None:
    outs = []
    for i in range(2):  # two processes: the chart (vl_convert) and the page must not vary
        out = tmp_path / f"r{i}.html"
        _ok("eval", *hostile, "--out", str(out))
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    text = outs[0].decode("utf-8")
    page = _Page(text)
    assert page.headings[:3] == ["h1 tooldisc eval", "h2 Measures", "h2 By category"]
    assert page.headings[3].startswith("h2 Worst misses (") and len(page.headings) == 4
    assert external_references(text) == []
    assert not {a for a in page.attrs if a.startswith("on")}
    assert "script" not in page.tags and "img" not in page.tags and "a" not in page.tags
    assert '<td dir="auto">&lt;svg onload=alert(1)&gt; delete the invoice</td>' in text
    assert "<svg" in text and "\x1b" not in text


def test_eval_table_shows_markup_and_controls_as_typed(hostile: list[str]) -> None:
    out = _ok("eval", *hostile, "--format", "table")
    assert out.startswith("tooldisc eval\n")
    for title in ("Measures", "By category", "Worst misses ("):
        assert title in out
    assert "[/red] [bold]" in out and "\x1b" not in out and "\\x1b[31mred" in out
    assert "\nOK | fake row" not in out


def test_compare_html_is_standalone(hostile: list[str], tmp_path: Path) -> None:
    """One run: the eval HTML test above reruns a page with a chart, the canary CLI tests another."""
    out = tmp_path / "c.html"
    _ok("compare", str(ROOT / "configs/bm25.yaml"), str(ROOT / "configs/mix.yaml"), *hostile[:-2],
        "--format", "html", "--out", str(out))
    text = out.read_text("utf-8")
    page = _Page(text)
    # the decision first, then the one table; the tests per arm and the changed queries folded away
    assert page.headings[:2] == ["h1 tooldisc compare", "h2 Measures"] and "h2 B vs A" in page.headings
    assert text.index('id="decision"') < text.index("<h2")
    assert text.index("<h2") < text.index("<svg") < text.index("<details>")
    assert '<summary dir="auto">Queries that changed (' in text
    assert "<svg" in text and external_references(text) == []
    assert '<th dir="auto">p (rand, Holm)</th>' in text


def test_canary_experiment_named_like_a_url_renders(tmp_path: Path) -> None:
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.synthetic.events import synthesize
    from tooldisc.canary.verdict import run_verdict
    from tooldisc.reports import render

    events = tmp_path / "e.parquet"
    synthesize(events, 40_000, "healthy", percent=50, seed=5, experiment="http-cache-v2")
    out = tmp_path / "v.html"
    res = invoke_cli("canary", "verdict", "--events", str(events), "--experiment", "http-cache-v2",
                  "--format", "html", "--out", str(out))
    assert res.returncode == 0, res.stderr  # PROMOTE; an AssertionError exited 1 before
    # Markdown in process: tests/canary/test_cli.py runs it (and reruns the HTML) through the CLI
    _, doc = run_verdict(EVENT_SCHEMA, "http-cache-v2", events=str(events))
    outs = [out.read_text("utf-8"), render(doc, "verdict", "md")]
    page = _Page(outs[0])
    sections = ["h2 Guarded metrics", "h2 Gates", "h2 Segments (experiment vs control)",
                "h2 Arms (rate [Wilson 95%] (k/n))", "h2 Gate numbers"]
    assert page.headings == ["h1 Canary verdict (canary): http-cache-v2", sections[0], "h2 Hour by hour",
                             *sections[1:]]
    assert external_references(outs[0]) == [] and "<svg" in outs[0]
    assert outs[0].index('<section class="banner good" id="decision">') < outs[0].index("<h2")
    assert _md_headings(outs[1]) == ["h1 Canary verdict (canary): http-cache-v2", *sections]
    assert outs[1].split("\n")[2].startswith("**PROMOTE** — Every gate passes")
    assert "<details><summary>Raw numbers" in outs[1]


def test_version_exits_0() -> None:
    res = invoke_cli("--version")
    assert res.returncode == 0, res.stderr
    from tooldisc import __version__

    assert res.stdout == f"tooldisc {__version__}\n"
