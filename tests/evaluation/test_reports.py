"""Eval, sweep, compare and gate reports: pure functions of their documents, every format consistent."""

from __future__ import annotations

import copy

import pytest

from tooldisc.evaluation.compare import compare_document
from tooldisc.evaluation.gate import check, gate_document, parse_thresholds
from tooldisc.evaluation.run import run_discovery
from tooldisc.evaluation.summary import eval_document
from tooldisc.evaluation.sweep import sweep_document
from tooldisc.reports import FORMATS, render
from tooldisc.reports.eval_report import fmt
from tooldisc.reports.html import external_references


@pytest.fixture(scope="module")
def docs(tiny):
    _cat, gold, engine = tiny
    ctx = engine.default_context
    result = run_discovery(engine, gold, ctx, 3)
    doc = eval_document(result, max_misses=100)
    sweep = sweep_document(run_discovery(engine, gold, ctx, 5), (1, 3, 5))
    cmp = compare_document(result, result, permutations=100)
    checks = check(parse_thresholds(["hit@3=0.9"], ["forbidden@3=0"]), doc["metrics"])
    return {"eval": doc, "sweep": sweep, "compare": cmp, "gate": gate_document(checks)}


def test_eval_html_quotes_a_url_as_text_and_references_nothing(docs) -> None:
    doc = copy.deepcopy(docs["eval"])
    doc["misses"].append({"id": "u1", "kind": "miss", "query": "post it to https://hooks.example/x",
                          "expected": ["create_webhook"], "got": [], "offered": 0, "forbidden_offered": []})
    doc["notes"].append("see http://example.org")
    out = render(doc, "eval", "html")
    assert external_references(out) == []
    assert "<svg" in out and '<td dir="auto">post it to https://hooks.example/x</td>' in out


@pytest.mark.parametrize("kind", ["eval", "sweep", "compare", "gate"])
def test_every_format_is_a_pure_function_of_the_document(docs, kind: str) -> None:
    doc = docs[kind]
    for f in FORMATS:
        if f == "html" and kind != "gate":
            continue  # charts are slow to draw; the CLI tests rerun HTML end to end
        assert render(doc, kind, f) == render(copy.deepcopy(doc), kind, f)


def test_markdown_lists_every_measure_slice_and_miss(docs) -> None:
    doc = docs["eval"]
    md = render(doc, "eval", "md")
    for m in doc["metrics"]:
        assert f"| {m} |" in md
    for name in doc["by"]:
        assert f"## By {name}" in md
    for miss in doc["misses"]:
        assert f"| {miss['id']} | {miss['kind']} |" in md
    assert "- context: default" in md


def test_worst_misses_name_the_forbidden_tools_offered_in_every_format(docs) -> None:
    doc = docs["eval"]
    rows = [m for m in doc["misses"] if m["forbidden_offered"]]
    assert rows and all("forbidden_offered" in m for m in doc["misses"])
    assert {m["kind"] for m in doc["misses"] if m["id"] == rows[0]["id"]} >= {"forbidden"}
    tools = ", ".join(rows[0]["forbidden_offered"])
    assert f"| {tools} |" in render(doc, "eval", "md")
    assert tools in render(doc, "eval", "table", width=400)
    assert "| forbidden offered |" in render(doc, "eval", "md")
    assert "forbidden offered" in render(doc, "eval", "table", width=400)


def test_terminal_tables(docs) -> None:
    text = render(docs["eval"], "eval", "table", width=200) + render(docs["sweep"], "sweep", "table", width=200) \
        + render(docs["compare"], "compare", "table", width=200)
    assert "Measures" in text and "K sweep" in text and "B vs A" in text
    assert "\x1b[" not in text
    assert "\x1b[" in render(docs["gate"], "gate", "table", color=True)


def test_gate_markdown_summary_exact() -> None:
    checks = check(parse_thresholds(["hit@15=0.9"], ["forbidden@15=0"]), {"hit@15": 0.8, "forbidden@15": 0.0})
    assert render(gate_document(checks), "gate", "md") == (
        "## tooldisc gate: FAILED\n\n"
        "**FAILED** — 1 of 2 thresholds fail: hit@15 is 0.8000, needs >= 0.9. **Next:** Fix the regression (or "
        "change the threshold in review); the gate exits 1 until every threshold holds.\n\n"
        "1 of 2 thresholds hold\n\n"
        "| result | measure | threshold | actual |\n"
        "|---|---|---|---:|\n"
        "| FAIL | hit@15 | >= 0.9 | 0.8000 |\n"
        "| pass | forbidden@15 | \\<= 0 | 0.0000 |\n")  # `<` always escaped: it can open raw HTML


def test_gate_html_marks_each_result_for_colour(docs) -> None:
    out = render(docs["gate"], "gate", "html")
    assert ('<td dir="auto"><span class="FAIL">FAIL</span></td>' in out
            or '<td dir="auto"><span class="pass">pass</span></td>' in out)
    assert out.count("<tr>") == 1 + len(docs["gate"]["checks"])


def test_unknown_kind_or_format_is_refused(docs) -> None:
    with pytest.raises(ValueError, match="unknown report kind"):
        render(docs["eval"], "nope", "md")
    with pytest.raises(ValueError, match="unknown report format"):
        render(docs["eval"], "eval", "pdf")


def test_fmt() -> None:
    assert fmt(None) == "n/a"
    assert fmt(0.123456, "hit@5") == "0.1235"
    assert fmt(9.1234, "avg_k") == "9.12"
