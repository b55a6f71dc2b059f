"""The renderer table: every kind in every format, exact Markdown for a hand-made document."""

from __future__ import annotations

import json

import pytest

from tooldisc.reports import FORMATS, KINDS, render
from tooldisc.reports.blocks import (
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
from tooldisc.reports.html import external_references, write_html
from tooldisc.reports.markdown import write_markdown
from tooldisc.reports.terminal import write_table

TUNE = {
    "objective": "nDCG@10", "k": 10, "folds": 2, "seed": 0, "n_iter": 1, "candidates": 2,
    "datasets": [{"catalog": "catalog.yaml", "tools": 6, "gold": "gold.json", "queries": 7}],
    "per_fold": [{"fold": 1, "train": 0.5, "heldout": 0.25, "n_train": 4, "n_heldout": 3, "chosen": 1,
                  "params": {"weights.bm25": 2.0}},
                 {"fold": 2, "train": 0.75, "heldout": None, "n_train": 3, "n_heldout": 4, "chosen": 0,
                  "params": {"weights.bm25": 1.0}}],
    "train": 0.625, "heldout": 0.25,
    "base": {"params": {"weights.bm25": 1.0}, "all_data": 0.4},
    "chosen": {"index": 1, "params": {"weights.bm25": 2.0}, "all_data": 0.5},
}


def test_formats_and_kinds_are_the_tables() -> None:
    assert set(FORMATS) == {"json", "md", "html", "table"}
    assert {"eval", "sweep", "compare", "gate", "verdict", "tune"} <= set(KINDS)


def test_tune_in_every_format() -> None:
    assert json.loads(render(TUNE, "tune", "json")) == TUNE
    assert render(TUNE, "tune", "md") == (
        "# tooldisc tune\n\n"
        "- objective nDCG@10 at k=10, mean over 1 dataset(s): catalog.yaml (6 tools) + gold.json (7 queries)\n"
        "- 2 folds, seed 0, 2 candidates (the base config and 1 random draws)\n\n"
        "## per fold: best candidate on the training folds, scored on the held-out fold\n\n"
        "| fold | train queries | held-out queries | chosen | train | held-out |\n"
        "|---:|---:|---:|---:|---:|---:|\n"
        "| 1 | 4 | 3 | #1 | 0.5000 | 0.2500 |\n"
        "| 2 | 3 | 4 | #0 | 0.7500 | n/a |\n"
        "| mean |  |  |  | 0.6250 | 0.2500 |\n\n"
        "## chosen on all data: candidate #1\n\n"
        "| key | base | chosen |\n"
        "|---|---:|---:|\n"
        "| weights.bm25 | 1 | 2 |\n"
        "| all-data score | 0.4000 | 0.5000 |\n")
    text = render(TUNE, "tune", "table")
    assert "held-out" in text and "weights.bm25" in text and "mean" in text
    html = render(TUNE, "tune", "html")
    assert html.count("<table>") == 2 and '<td class="num">0.6250</td>' in html


def test_every_block_in_every_writer() -> None:
    """A new block kind must be written by every writer; this report uses each kind once."""
    report = Report("t <x>", (Lines(("a", "b")), Paragraph("p & q"), Fields((("k", "v"),), "F", code=True),
                              Table(("h",), (("c",),), "T"), Table(("h",), (), "E", empty="nothing"),
                              Details("raw <n>", (Table(("h",), (("d",),), "D"),)),
                              Grid((), "G", "g note"),
                              Chart("bar", ({"x": "a", "y": 1},), x="x", y="y", title="c")),
                    decision=Decision("HOLD", "warn", "why <w>", "next & n"))
    md = write_markdown(report)
    assert md == ("# t \\<x>\n\n**HOLD** — why \\<w> **Next:** next \\& n\n\n- a\n- b\n\np \\& q\n\n## F\n\n"
                  "- **k**: `v`\n\n## T\n\n| h |\n|---|\n| c |\n\n## E\n\nnothing\n\n"
                  "<details><summary>raw \\<n></summary>\n\n## D\n\n| h |\n|---|\n| d |\n\n</details>\n")
    text = write_table(report).splitlines()
    assert text[:4] == ["t <x>", "HOLD", "Why: why <w>", "Next: next & n"] and "raw" not in "".join(text)
    html = write_html(Report(report.title, report.blocks[:-1], decision=report.decision))  # charts: drawn by the CLI tests
    assert '<h1 dir="auto">t &lt;x&gt;</h1>\n<section class="banner warn" id="decision">' in html
    assert '<p class="why" dir="auto"><b>Why:</b> why &lt;w&gt;</p>' in html
    assert '<p dir="auto">nothing</p>' in html and "<code>v</code>" in html
    assert '<details>\n<summary dir="auto">raw &lt;n&gt;</summary>' in html and '<div class="grid">' in html
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert '<div class="scroll">\n<table>' in html and "@media print" in html
    assert external_references(html) == []


def test_a_refreshing_meta_is_still_refused() -> None:
    """The viewport meta is allowed; a meta that can load something is not."""
    assert external_references('<meta name="viewport" content="width=device-width, initial-scale=1">') == []
    assert external_references('<meta http-equiv="refresh" content="0; url=https://x.example">') == ["<meta>"]
    assert external_references('<meta name="viewport" content="url(https://x)">') == ["<meta>"]


def test_unknown_kind_and_format() -> None:
    with pytest.raises(ValueError, match="unknown report kind 'x'"):
        render({}, "x", "json")
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        render(TUNE, "tune", "pdf")


def test_formats_derive_from_the_registry() -> None:
    """A report kind offers every format (table first, as the CLI lists them); a plain kind table and json."""
    from tooldisc.reports.render import FORMATS, KINDS, PLAIN_KINDS, formats

    assert not set(KINDS) & set(PLAIN_KINDS)
    for kind in KINDS:
        assert formats(kind)[0] == "table" and set(formats(kind)) == set(FORMATS)
    for kind in PLAIN_KINDS:
        assert formats(kind) == ("table", "json")
    with pytest.raises(ValueError, match="unknown report kind"):
        formats("nosuch")
