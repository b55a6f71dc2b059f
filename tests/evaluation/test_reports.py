"""Report renderers: pure functions of the documents, URL-free HTML, every format consistent."""

from __future__ import annotations

import copy
import io

import pytest
from rich.console import Console
from tooldisc.evaluation.compare import compare_document
from tooldisc.evaluation.gate import check, gate_document, parse_thresholds
from tooldisc.evaluation.run import run_discovery
from tooldisc.evaluation.summary import eval_document
from tooldisc.evaluation.sweep import sweep_document
from tooldisc.reports import eval_report
from tooldisc.reports.charts import esc


@pytest.fixture(scope="module")
def docs(tiny):
    _cat, gold, engine = tiny
    ctx = engine.default_context
    result = run_discovery(engine, gold, ctx, 3)
    doc = eval_document(result, max_misses=100)
    sweep = sweep_document(run_discovery(engine, gold, ctx, 5), (1, 3, 5))
    cmp = compare_document(result, result, permutations=100)
    return doc, sweep, cmp


def test_esc_neutralises_urls_but_displays_the_same() -> None:
    import html

    text = 'send to https://erp.example/hook & HTTP://x <b>'
    out = esc(text)
    assert "http" not in out.lower() and "<b>" not in out
    assert html.unescape(out) == text


def test_eval_html_never_holds_a_url_even_when_a_query_quotes_one(docs) -> None:
    doc = copy.deepcopy(docs[0])
    doc["misses"].append({"id": "u1", "kind": "miss", "query": "post it to https://hooks.example/x",
                          "expected": ["create_webhook"], "got": [], "offered": 0})
    doc["notes"].append("see http://example.org")
    out = eval_report.eval_html(doc)
    assert "http" not in out.lower()
    assert "<svg" in out and "hooks.example/x" in out


def test_renderers_are_pure(docs) -> None:
    doc, sweep, cmp = docs
    assert eval_report.eval_markdown(doc) == eval_report.eval_markdown(copy.deepcopy(doc))
    assert eval_report.sweep_html(sweep) == eval_report.sweep_html(copy.deepcopy(sweep))
    assert eval_report.compare_markdown(cmp) == eval_report.compare_markdown(copy.deepcopy(cmp))


def test_markdown_lists_every_measure_slice_and_miss(docs) -> None:
    doc = docs[0]
    md = eval_report.eval_markdown(doc)
    for m in doc["metrics"]:
        assert f"| {m} |" in md
    for name in doc["by"]:
        assert f"## By {name}" in md
    for miss in doc["misses"]:
        assert f"| {miss['id']} | {miss['kind']} |" in md
    assert "context: default" in md


def test_terminal_tables_render(docs) -> None:
    doc, sweep, cmp = docs
    buf = io.StringIO()
    console = Console(file=buf, width=200)
    eval_report.print_eval(doc, console)
    eval_report.print_sweep(sweep, console)
    eval_report.print_compare(cmp, console)
    text = buf.getvalue()
    assert "Measures" in text and "K sweep" in text and "B vs A" in text


def test_gate_markdown_summary() -> None:
    checks = check(parse_thresholds(["hit@15=0.9"], ["forbidden@15=0"]), {"hit@15": 0.8, "forbidden@15": 0.0})
    md = eval_report.gate_markdown(gate_document(checks))
    assert md.startswith("## tooldisc gate: FAILED") and "1 of 2 thresholds hold" in md
    assert "| FAIL | hit@15 | >= 0.9 | 0.8000 |" in md


def test_fmt() -> None:
    assert eval_report.fmt(None) == "n/a"
    assert eval_report.fmt(0.123456, "hit@5") == "0.1235"
    assert eval_report.fmt(9.1234, "avg_k") == "9.12"
