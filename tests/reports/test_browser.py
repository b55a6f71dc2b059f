"""Every report kind in a real browser (headless chromium), at 500 and 1280 px wide.

One browser process loads every page at both widths (``tests/reports/browser.py``): no
page scrolls sideways (nor with every folded section opened), a decision's banner lies within the first 900 px and its verdict,
reason and next step within the first 700 characters of the page's text, every chart
has a title and both axes titled, Persian text runs right to left. Under CI=true a
missing browser fails these tests; elsewhere they skip with a reason.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.reports.browser import WIDTHS, measure, require_browser
from tests.reports.report_pages import all_pages
from tooldisc.reports.render import KINDS

DECIDING = {"gate": "FAILED", "catalog-diff": "POLICY LOOSENED", "compare": "NO SIGNIFICANT DIFFERENCE",
            "compare-4": "1 OF 3 ARMS WORSE", "verdict-hold": "HOLD",
            "verdict-promote": "PROMOTE", "verdict-rollback": "ROLLBACK", "verdict-shadow": "PROMOTE",
            "verdict-interleaving": "HOLD"}
PAGES = {"eval", "sweep", "compare", "compare-4", "gate", "tune", "catalog-diff", "verdict-hold", "verdict-promote",
         "verdict-rollback", "verdict-shadow", "verdict-interleaving", *(set(KINDS) - {
             "eval", "sweep", "compare", "gate", "tune", "catalog-diff", "verdict"})}  # one page of every other kind
PERSIAN = ("eval", "compare", "compare-4", "catalog-diff")


def _broken_page() -> str:
    """A page the probe must fault on every count: a wide table outside a scroll box,
    colliding axis labels, a Persian cell forced left to right, no banner."""
    from tooldisc.reports.charts import svg

    spec = {"data": {"values": [{"x": i / 1000, "y": i} for i in range(40)]}, "mark": "point",
            "width": 120, "title": "collide",
            "encoding": {"x": {"field": "x", "type": "quantitative", "title": "x",
                               "axis": {"labelOverlap": False, "tickCount": 40, "format": ".3f"}},
                         "y": {"field": "y", "type": "quantitative", "title": "y"}}}
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
            f"<figure class='chart'>{svg(spec, 'collide')}</figure>"
            "<table><tr><td style='white-space:nowrap'>" + "wide " * 400 + "</td>"
            "<td dir='ltr'>سلام دنیا</td><td dir='auto'>سلام</td></tr></table></body></html>")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], list[dict[str, Any]], float]:
    browser = require_browser()
    pages = all_pages(tmp_path_factory.mktemp("pages"))
    start = time.monotonic()
    rows = measure({**pages, "broken": _broken_page()}, browser)
    return pages, rows, time.monotonic() - start


def _rows(measured: Any, name: str | None = None) -> list[dict[str, Any]]:
    return [r for r in measured[1] if (name is None and r["name"] != "broken") or r["name"] == name]


def test_the_probe_sees_what_it_checks(measured) -> None:
    """The checks below can fail: a deliberately broken page trips every one of them."""
    for r in _rows(measured, "broken"):
        assert r["scrollWidth"] > r["clientWidth"] and r["overflowing"], r
        assert r["charts"][0]["overlaps"], r["charts"]
        assert "banner" not in r
    # Persian forced left to right is caught; with dir="auto" it runs right to left
    assert [x["direction"] for x in _rows(measured, "broken")[0]["rtl"]] == ["ltr", "rtl"]


def test_every_kind_loads_at_both_widths_in_one_browser_run_within_a_minute(measured) -> None:
    pages, rows, seconds = measured
    assert set(pages) == PAGES
    assert {(r["name"], r["width"]) for r in rows} == {(n, w) for n in {*PAGES, "broken"} for w in WIDTHS}
    assert not [r for r in rows if "error" in r], [r for r in rows if "error" in r]
    assert seconds <= 60, f"the browser checks took {seconds:.1f} s"


def test_no_page_scrolls_sideways(measured) -> None:
    wide = [(r["name"], r["width"], r["scrollWidth"], r["overflowing"]) for r in _rows(measured)
            if r["scrollWidth"] > r["clientWidth"] or r["clientWidth"] != r["width"] or r["overflowing"]]
    assert wide == []
    opened = [(r["name"], r["width"], r["opened"]["scrollWidth"], r["opened"]["overflowing"]) for r in _rows(measured)
              if r["opened"]["scrollWidth"] > r["opened"]["clientWidth"] or r["opened"]["overflowing"]]
    assert opened == []  # every <details> opened, as a reader would


def test_compare_pages_fit_at_1280_with_every_section_open(measured) -> None:
    """Two arms and four (one a run file offering a tool name too long for its column): at 1280 px
    every table fits its box, "Queries that changed" and the wins and losses included (they wrap)."""
    boxes = {}
    for name in ("compare", "compare-4"):
        row = next(r for r in _rows(measured, name) if r["width"] == 1280)
        boxes[name] = [b["title"] for b in row["opened"]["boxes"]]
        wide = [(b["title"], b["scrollWidth"], b["clientWidth"]) for b in row["opened"]["boxes"]
                if b["scrollWidth"] > b["clientWidth"]]
        assert wide == [], (name, wide)
    assert any(t.startswith("Queries that changed (") for t in boxes["compare"]), boxes["compare"]
    assert any(t.startswith("embeddings's worst losses on forbidden@3") for t in boxes["compare-4"])
    # the check sees a table that does not fit: at 500 px the four-arm table scrolls inside its box
    narrow = next(r for r in _rows(measured, "compare-4") if r["width"] == 500)
    assert any(b["scrollWidth"] > b["clientWidth"] for b in narrow["opened"]["boxes"])


def test_compare_pages_lead_with_the_decision_and_chart_each_change_with_its_interval(measured) -> None:
    for name, title in (("compare", "B − A per measure, with 95 % intervals"),
                        ("compare-4", "Each arm − default per measure, with 95 % intervals")):
        for r in _rows(measured, name):
            assert [c["title"] for c in r["charts"]] == [title], (name, r["charts"])
            assert r["text"].index(r["banner"]["word"]) < r["text"].index("\nMeasures\n"), r["text"]
    four = next(r for r in _rows(measured, "compare-4") if r["width"] == 1280)
    assert four["banner"]["why"].startswith("Why: embeddings made forbidden@3 worse on 2 queries and better on "
                                            "none (a one-way safety regression)"), four["banner"]


def test_decision_first_banner_and_text(measured) -> None:
    for r in _rows(measured):
        word = DECIDING.get(r["name"])
        if word is None:
            assert "banner" not in r  # nothing to decide: no banner pretending to
            continue
        b = r["banner"]
        assert b["word"] == word and b["why"].startswith("Why: ") and len(b["why"]) > 12, (r["name"], b)
        assert b["bottom"] <= 900, (r["name"], r["width"], b["bottom"])
        head = r["text"][:700]
        for part in (b["word"], b["why"], b["next"]):
            assert part in head, (r["name"], r["width"], part)


def test_hold_promote_rollback_answer_what_why_and_next(measured) -> None:
    banners = {r["name"]: r["banner"] for r in _rows(measured) if r["width"] == 1280 and "banner" in r}
    hold, promote, rollback = banners["verdict-hold"], banners["verdict-promote"], banners["verdict-rollback"]
    # HOLD: the metric still needed, and how long at this percent and at the next ladder step
    assert "inconclusive" in hold["why"]
    assert re.search(r"Next: Keep 10 % and wait about \d+ h .*; about \d+ h at the next ladder step, 25 %\.$",
                     hold["next"]), hold["next"]
    assert promote["next"] == "Next: Eligible for the next ladder step, 100 %; an operator decides."
    assert "task_success is shown worse than control" in rollback["why"]
    assert rollback["next"].startswith("Next: Roll back to 0 % now and investigate task_success")
    # colour and the word: the three verdicts are told apart by both
    assert len({b["color"] for b in (hold, promote, rollback)}) == 3
    assert len({b["background"] for b in (hold, promote, rollback)}) == 3


def test_every_chart_has_a_title_and_labelled_axes(measured) -> None:
    charts = 0
    for r in _rows(measured):
        for c in r["charts"]:
            charts += 1
            assert c["title"] and c["label"] == c["title"], (r["name"], c)
            assert len(c["axisTitles"]) >= 2 and all(c["axisTitles"]), (r["name"], c)
            assert c["marks"] > 0 and 0 < c["width"] <= r["width"], (r["name"], c)
            assert c["overlaps"] == [], (r["name"], r["width"], c["title"], c["overlaps"])
    pages_with_charts = {r["name"] for r in _rows(measured) if r["charts"]}
    assert {"eval", "sweep", "compare", "compare-4", "verdict-hold", "verdict-promote", "verdict-rollback"} <= pages_with_charts
    assert charts > 30


def test_persian_text_runs_right_to_left(measured) -> None:
    for r in _rows(measured):
        assert all(x["direction"] == "rtl" for x in r["rtl"]), (r["name"], r["rtl"])
        if r["name"] in PERSIAN:
            assert r["rtl"], f"{r['name']} shows no Persian text to check"
    cells = {x["tag"] for r in _rows(measured) for x in r["rtl"]}
    assert {"td"} <= cells


def test_canary_pages_show_the_forest_plot_and_the_hourly_view(measured) -> None:
    for name in ("verdict-hold", "verdict-promote", "verdict-rollback"):
        titles = [c["title"] for c in _rows(measured, name)[0]["charts"]]
        assert titles[:2] == ["Rates: experiment vs control", "Latency: experiment / control"], titles
        assert [t.split(":")[0] for t in titles[2:]] == ["task_success", "tool_execution_success",
                                                          "discovery_miss", "fallback", "latency"], titles


def test_pages_stand_alone(measured) -> None:
    from tooldisc.reports.html import external_references

    for name, text in measured[0].items():
        assert external_references(text) == [], name
        assert "<script" not in text and 'name="viewport"' in text, name


def test_the_screenshot_script_needs_an_output_folder() -> None:
    """``make screenshots`` runs ``tests.reports.browser`` on the pages tested here."""
    from tests.reports import browser

    assert browser.main([]) == 2  # usage: an output folder is required


def test_the_interleaving_page_shows_the_preference_and_the_wait(measured) -> None:
    r = _rows(measured, "verdict-interleaving")[0]
    assert [c["title"] for c in r["charts"]] == ["Preference: B vs A (interleaved)"]
    assert r["banner"]["why"].startswith("Why: The preference is inconclusive")
    assert re.search(r"^Next: Keep interleaving 50 % of requests and wait (about \d+(\.\d)? h|under 1 h) \(about "
                     r"[\d,]+ more interleaved requests to show B not worse\); .* at 100 %\.$", r["banner"]["next"]), \
        r["banner"]["next"]
