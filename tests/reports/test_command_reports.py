"""The command reports of issue 26 item 5: discover, plan, learn, bench, catalog and gold through ``reports.render``.

Each kind renders in Markdown and HTML with its key figures, and the terminal table keeps
the layout the command printed before it had a report (``benchmarks/cli_outputs.py
compare`` proves it byte for byte on the shipped data; these pin it for small documents).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, invoke_cli
from tooldisc.reports import render
from tooldisc.reports.html import external_references
from tooldisc.reports.render import KINDS, PLAIN_KINDS, formats

CATALOG = str(ROOT / "gold" / "data" / "catalog.yaml")
GOLD = str(ROOT / "gold" / "data" / "gold.json")
SCENARIOS = str(ROOT / "agent" / "data" / "scenarios" / "catalog.yaml")
MOVED = ("discover", "plan", "learn", "bench", "catalog-validate", "catalog-stats", "gold-validate", "gold-stats",
         "gold-split", "canary-simulate", "canary-ingest")
PLAN = {"decision": "tools", "actions": [{"id": "a1", "tool": "ghost", "arguments": {}}]}

LEARN = {"out": "learned.json", "parts": ["expansions"], "report": {
    "requests": 473, "matched": 443, "no_tool": 30, "folds": 2, "alpha": 0.05,
    "expansions": {"kept": True, "measure": "MRR", "without": 0.5, "with": 0.625, "wins": 40, "losses": 3,
                   "p": 0.0001234},
    "affinity": {"kept": False, "reason": "needs expansions"},
    "mutation": {"kept": False, "before": {"wider": 3, "narrower": 1}, "after": {"wider": 2, "narrower": 1}},
    "abstention": {"kept": False, "measure": "success", "without": 0.1, "with": 0.2, "wins": 1, "losses": 0, "p": 0.5,
                   "held_out": {"no_match_success": 0.5, "false_abstention": 0.01},
                   "baseline": {"no_match_success": 0.0, "false_abstention": 0.0}},
}}
BENCH = {"sizes": [{"n_tools": 1200, "vocab_terms": 3456, "ratios": {}, "judged_queries": 5, "n_queries": 10,
                    "engines": {"tooldisc": {"build_s": {"median": 0.25}, "rss_mb": {"process_peak": 321.5},
                                             "latency_ms": {"p50": 1.0, "p95": 2.5, "p99": 3.0}, "hit_at_k": 0.8},
                                "rank_bm25": {"available": False, "skipped": "not installed"}}}],
         "environment": {"cpu_count": 2, "python": "3.11", "versions": {"numpy": "2.0"}},
         "config": {"queries": 10, "repeats": 1, "k": 5}}


SIMULATE = {"ids": 2000, "source": "2000 synthetic ids", "engine": "duckdb", "independence": None, "salts": [
    {"salt": "s", "percent": 10.0, "counts": {"control": 1794, "experiment": 206}, "expected_experiment_share": 0.1,
     "shares": {"control": {"share": 0.897, "low": 0.882909, "high": 0.909569},
                "experiment": {"share": 0.103, "low": 0.090431, "high": 0.117091}},
     "chi_square": 0.2, "p_value": 0.6547}]}
INGEST = {"files": 1, "ingested": 1, "skipped_duplicates": 0, "rows": 2000, "quarantined": 3, "table": "events",
          "reasons": {"bad arm": 3}}


def test_every_command_table_is_a_report_kind() -> None:
    """PLAIN_KINDS keeps only what prints no table: one line (wrote …, a status) or files."""
    assert set(MOVED) <= set(KINDS) and not set(MOVED) & set(PLAIN_KINDS)
    for kind in MOVED:
        assert formats(kind) == ("table", "json", "md", "html")


def _json(*args: str, cwd: Path | None = None) -> dict[str, Any]:
    proc = invoke_cli(*args, "--json", cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each command's ``--json`` document on the shipped data (learn and bench: small hand-made ones)."""
    tmp = tmp_path_factory.mktemp("reports")
    (tmp / "plan.json").write_text(json.dumps(PLAN))
    return {
        "discover": _json("discover", "cancel the order", "--explain", "orders.cancel"),
        "plan": _json("plan", "validate", str(tmp / "plan.json"), "--catalog", SCENARIOS),
        "catalog-validate": _json("catalog", "validate", CATALOG),
        "catalog-stats": _json("catalog", "stats", CATALOG),
        "gold-validate": _json("gold", "validate", GOLD),
        "gold-stats": _json("gold", "stats", GOLD),
        "gold-split": _json("gold", "split", GOLD, "--out-dir", str(tmp / "split")),
        "learn": LEARN,
        "bench": BENCH,
        "canary-simulate": SIMULATE,
        "canary-ingest": INGEST,
    }


KEY_FIGURES = {
    "discover": ("cancel_sales_invoice", "orders.cancel", "authorized tools"),
    "plan": ("unknown_tool", "ghost", "1 finding(s)"),
    "catalog-validate": ("160 tools", "2 warning(s)", "get_marketplace_shop_info"),
    "catalog-stats": ("side_effect", "160", "c0186846111383417fa53e3174628a5f"),
    "gold-validate": ("473 queries", "0 error(s)"),
    "gold-stats": ("by_intent", "473", "tooldisc-default-gold-1"),
    "gold-split": ("read/matched", "270", "189", "total"),
    "learn": ("473 requests", "0.6250", "needs expansions", "p=0.0001234"),
    "bench": ("1,200", "3,456", "321.5", "2.500", "not installed", "hit@5"),
    "canary-simulate": ("2000 ids", "1,794", "0.882909", "p = 0.6547"),
    "canary-ingest": ("rows 2000 kept in events", "3 quarantined in events_quarantine", "bad arm"),
}


@pytest.mark.parametrize("kind", MOVED)
@pytest.mark.parametrize("fmt", ["md", "html", "table"])
def test_each_kind_renders_its_key_figures(documents: dict[str, dict[str, Any]], kind: str, fmt: str) -> None:
    text = render(documents[kind], kind, fmt, width=200)
    assert text.strip()
    shown = text.replace("&#x27;", "'").replace("\\_", "_")  # HTML and Markdown escapes
    for figure in KEY_FIGURES[kind]:
        assert figure in shown, (kind, fmt, figure)
    if fmt == "html":
        assert text.startswith("<!DOCTYPE html>") and not external_references(text)


@pytest.mark.parametrize(("kind", "args"), [
    ("catalog-validate", ("catalog", "validate", CATALOG)),
    ("gold-validate", ("gold", "validate", GOLD)),
])
def test_the_command_prints_its_document_rendered(documents: dict[str, dict[str, Any]], kind: str,
                                                  args: tuple[str, ...]) -> None:
    """``--format md|html`` is the ``--json`` document through ``render``: one content in every format."""
    for fmt in ("md", "html"):
        proc = invoke_cli(*args, "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == render(documents[kind], kind, fmt)


@pytest.mark.parametrize("args", [("catalog", "stats", CATALOG), ("gold", "stats", GOLD)])
def test_stats_say_the_same_in_markdown_as_in_the_table(args: tuple[str, ...]) -> None:
    """The stats keep their order (``--json`` sorts keys; the table and Markdown do not)."""
    table, md = (invoke_cli(*args, "--format", fmt) for fmt in ("table", "md"))
    assert table.returncode == md.returncode == 0, (table.stderr, md.stderr)
    words = [line.split()[0].rstrip(":") for line in table.stdout.splitlines()]
    shown = [line.lstrip("-# *").split("**")[0].rstrip(":").replace("\\_", "_")
             for line in md.stdout.splitlines()[1:] if line]
    assert shown == words


def test_counts_keep_their_text_columns() -> None:
    """The stats commands' layout: plain values at 34 columns, each group under ``name:`` at 32 and 6."""
    doc = {"file": "c.yaml", "tools": 3, "side_effect": {"none": 2, "write": 1}, "avg": None, "empty": {}}
    assert render(doc, "catalog-stats", "table") == (
        f"{'file':<34} c.yaml\n{'tools':<34} 3\nside_effect:\n  {'none':<32} {2:>6}\n  {'write':<32} {1:>6}\n"
        f"{'avg':<34} n/a\nempty:\n")


def test_gold_split_keeps_its_columns_and_escapes_after_padding() -> None:
    doc = {"source": "g.json", "tune": {"file": "s/g.tune.json", "queries": 3},
           "test": {"file": "s/g.test.json", "queries": 1},
           "strata": [{"intent": "re\x1bad", "no_match": False, "queries": 4, "tune": 3, "test": 1}]}
    assert render(doc, "gold-split", "table") == (
        f"{'stratum':<24} {'queries':>8} {'tune':>6} {'test':>6}\n"
        + "re\\x1bad/matched" + " " * 11 + f" {4:>8} {3:>6} {1:>6}\n"  # padded as 13 characters, then escaped
        + f"{'total':<24} {4:>8} {3:>6} {1:>6}\nwrote s/g.tune.json and s/g.test.json\n")


def test_canary_lines_keep_their_layout() -> None:
    assert render(SIMULATE, "canary-simulate", "table", width=40).splitlines()[2] == (
        "  control           1,794  0.897000 [0.882909, 0.909569]")
    assert render(INGEST, "canary-ingest", "table").splitlines()[2] == "         3  bad arm"


def test_learn_lines_are_never_wrapped() -> None:
    text = render(LEARN, "learn", "table", width=40)
    lines = text.splitlines()
    assert lines[0] == "473 requests: 443 with a tool, 30 needing none; 2 folds, parts kept at p < 0.05"
    assert lines[1] == ("  expansions  kept      MRR held out 0.5000 → 0.6250 (40 better, 3 worse, p=0.0001234)")
    assert lines[2] == "  affinity    not kept  needs expansions"
    assert "  ranker      off" in lines and "  mutation    not kept  wider 3 → 2, narrower 1 → 1" in lines
    assert lines[-2].endswith("(without: 0.000 at 0.0000)") and lines[-2].startswith(" " * 24 + "no-match success")


def test_a_valid_plan_is_one_line_and_an_empty_offer_keeps_its_box() -> None:
    assert render({"valid": True, "findings": [], "checks": []}, "plan", "table") == "plan valid: no findings\n"
    offer = {"query": "x", "context": {"tenant": None, "roles": ["a"], "permissions": [], "mode": "autonomous",
                                       "forced": [], "default": False},
             "mutation": "UNKNOWN", "k": 5, "k_reason": "abstained", "candidates": [],
             "confidence": {"level": "none", "top_score": 0.0, "gap": 0.0}, "authorized_count": 0,
             "catalog_hash": "c" * 64, "offer_hash": "o" * 64}
    text = render(offer, "discover", "table")
    assert text.startswith("context: no tenant; roles a; permissions none; mode autonomous\n")
    assert "┃ # ┃ tool ┃ score ┃" in text and "K: abstained\ncatalog cccccccccccccccc  offer oooooooooooooooo\n" in text
    assert "No tool offered." in render(offer, "discover", "md")


def test_a_hostile_name_prints_as_written_in_every_command_table() -> None:
    """Titles, cells and lines are data: no markup, every control character shown as a code."""
    hostile = "[bold]x[/bold] \x1b[2J\u202e"
    shown = "[bold]x[/bold] \\x1b[2J\\u202e"
    plan = {"valid": False, "findings": [{"code": "unknown_tool", "action": hostile, "where": "a", "message": hostile}],
            "checks": []}
    bench = {**BENCH, "environment": {**BENCH["environment"], "python": hostile}}
    for kind, doc in (("plan", plan), ("bench", bench)):
        text = render(doc, kind, "table", width=300)
        assert "\x1b" not in text and "\u202e" not in text and shown in text
