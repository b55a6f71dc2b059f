"""``tooldisc gold validate|stats|split|qrels`` through the real command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, invoke_cli, run_cli
from tooldisc.gold.loader import load_gold

OK_CATALOG = str(ROOT / "tests" / "cli" / "data" / "ok_catalog.yaml")
SHIPPED_GOLD = str(ROOT / "gold" / "data" / "gold.json")


def _q(qid: str, query: str, primary: list[str], **extra: Any) -> dict[str, Any]:
    return {"id": qid, "query": query, "primary_expected_tools": primary, "intent": "read", **extra}


def _write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def gold_doc() -> dict[str, Any]:
    """A small native gold set over ok_catalog.yaml: two intents, Persian and English, a no-match."""
    return {
        "dataset_version": "t-1",
        "catalog_version": "test-1",
        "split": "all",
        "queries": [
            *[_q(f"r{i}", f"show invoices {i}", ["list_invoices"], category="invoice", difficulty="easy")
              for i in range(10)],
            *[_q(f"w{i}", f"صدور فاکتور {i}", ["create_invoice"], intent="write", category="invoice",
                 hard_case="synonyms", forbidden_tools=["list_invoices"],
                 history=[{"role": "user", "content": "hi"}] if i == 0 else [])
              for i in range(6)],
            *[_q(f"n{i}", f"book a flight {i}", [], intent="none", no_match=True) for i in range(4)],
        ],
    }


def test_help_lists_the_commands_and_shared_options() -> None:
    top = invoke_cli("gold", "--help")
    assert top.returncode == 0, top.stderr
    assert all(sub in top.stdout for sub in ("validate", "stats", "split", "qrels"))
    proc = invoke_cli("gold", "split", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "--json" in proc.stdout and "--format" in proc.stdout and "--test-fraction" in proc.stdout


def test_shipped_gold_validates_against_shipped_catalog() -> None:
    proc = invoke_cli("gold", "validate", SHIPPED_GOLD)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith(f"OK: {SHIPPED_GOLD} (tooldisc): 0 error(s), 0 warning(s), 473 queries")


def test_validate_lists_every_issue_with_file_and_place(tmp_path: Path, gold_doc: dict[str, Any]) -> None:
    doc = {**gold_doc, "catalog_version": "other-9", "queries": [
        *gold_doc["queries"][:2],
        _q("r0", "again", ["list_invoices"]),                               # duplicate id
        _q("e1", "   ", ["list_invoices"]),                                 # empty query
        _q("e2", "make one", ["create_invoice"], forbidden_tools=["create_invoice"]),
        _q("e3", "nothing", [], no_match=True, acceptable_tools=["list_invoices"]),
        _q("e4", "ghost", ["no_such_tool"]),
    ]}
    path = _write(tmp_path / "g.json", doc)
    proc = invoke_cli("gold", "validate", path, "--catalog", OK_CATALOG, "--json")
    assert proc.returncode == 1, proc.stderr
    body = json.loads(proc.stdout)
    assert body["valid"] is False and body["format"] == "tooldisc"
    assert body["counts"] == {"error": 5, "warning": 1}
    assert [(i["level"], i["where"]) for i in body["issues"]] == [
        ("error", "queries[2]"), ("error", "queries[3]"), ("error", "queries[4]"), ("error", "queries[5]"),
        ("error", "queries[6].primary_expected_tools"), ("warning", "catalog_version")]
    assert all(i["file"] == path for i in body["issues"])
    assert "duplicate id 'r0'" in body["issues"][0]["message"]
    assert "'no_such_tool', which the catalog lacks" in body["issues"][4]["message"]
    table = invoke_cli("gold", "validate", path, "--catalog", OK_CATALOG)
    assert table.returncode == 1
    assert f"error    {path}: queries[4]: query 'e2' names create_invoice as both expected and forbidden" in table.stdout
    assert f"warning  {path}: catalog_version: gold set was written for catalog 'other-9'" in table.stdout
    assert table.stdout.splitlines()[-1].startswith(f"FAIL: {path} (tooldisc): 5 error(s), 1 warning(s), 7 queries")


def test_malformed_gold_is_one_error_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"queries": [{"id": "a", "query": "x"', encoding="utf-8")
    line = _one_line_error(run_cli("gold", "validate", str(bad), "--catalog", OK_CATALOG))
    assert line.startswith(f"error: {bad}: line 1") and "not valid JSON" in line
    wrong = _write(tmp_path / "wrong.json", {"queries": [{"id": "a", "query": "x", "intent": "wrte"}]})
    line = _one_line_error(run_cli("gold", "stats", wrong))
    assert "queries[0]: intent must be one of" in line
    _one_line_error(run_cli("gold", "split", str(tmp_path / "missing.json"), "--out-dir", str(tmp_path)))


def test_external_format_needs_catalog(tmp_path: Path) -> None:
    tools = tmp_path / "tools.jsonl"
    tools.write_text('{"name": "get_weather", "description": "weather for a city"}\n'
                     '{"name": "send_mail", "description": "send an email"}\n', encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "1", "query": "weather in paris", "relevant": ["get_weather"]}\n'
                       '{"id": "2", "query": "book a flight", "relevant": []}\n', encoding="utf-8")
    line = _one_line_error(run_cli("gold", "validate", str(queries)))
    assert "give it with --catalog" in line
    proc = run_cli("gold", "validate", str(queries), "--catalog", str(tools), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["format"] == "external" and body["valid"] is True and body["catalog"]["tools"] == 2


def test_stats_json_and_table(tmp_path: Path, gold_doc: dict[str, Any]) -> None:
    path = _write(tmp_path / "g.json", gold_doc)
    proc = invoke_cli("gold", "stats", path, "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["total"] == 20 and body["matched"] == 16 and body["no_match"] == 4
    assert body["by_intent"] == {"none": 4, "read": 10, "write": 6}
    assert body["by_category"] == {"(none)": 4, "invoice": 16}
    assert body["by_difficulty"] == {"(none)": 10, "easy": 10}
    assert body["by_hard_case"] == {"(none)": 14, "synonyms": 6}
    assert body["by_language"] == {"en": 14, "fa": 6}
    assert body["with_history"] == 1 and body["require_all_primary"] == 0 and body["with_forbidden"] == 6
    assert body["avg_primary_tools"] == 1.0
    table = invoke_cli("gold", "stats", path, "--format", "table")
    assert table.returncode == 0
    assert "by_language:" in table.stdout and "  fa" in table.stdout
    assert "avg_primary_tools                  1.0" in table.stdout


def test_split_is_deterministic_stratified_and_loadable(tmp_path: Path, gold_doc: dict[str, Any]) -> None:
    path = _write(tmp_path / "g.json", gold_doc)
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        proc = invoke_cli("gold", "split", path, "--test-fraction", "0.3", "--seed", "7", "--out-dir", str(out),
                       *(["--json"] if name == "a" else []))
        assert proc.returncode == 0, proc.stderr
        runs.append((proc.stdout, (out / "g.tune.json").read_bytes(), (out / "g.test.json").read_bytes()))
    (body_text, tune_a, test_a), (table_text, tune_b, test_b) = runs
    assert tune_a == tune_b and test_a == test_b
    body = json.loads(body_text)
    # round(n × 0.3), halves up, per (intent, no_match) stratum
    assert [(s["intent"], s["no_match"], s["queries"], s["tune"], s["test"]) for s in body["strata"]] == [
        ("none", True, 4, 3, 1), ("read", False, 10, 7, 3), ("write", False, 6, 4, 2)]
    assert body["tune"]["queries"] == 14 and body["test"]["queries"] == 6
    assert "write/matched" in table_text and "wrote " in table_text
    tune_doc, test_doc = json.loads(tune_a), json.loads(test_a)
    assert (tune_doc["split"], test_doc["split"]) == ("tune", "test")
    assert tune_doc["dataset_version"] == "t-1" and test_doc["catalog_version"] == "test-1"
    tune, test = load_gold(tmp_path / "a" / "g.tune.json"), load_gold(tmp_path / "a" / "g.test.json")
    ids = [q["id"] for q in gold_doc["queries"]]
    assert sorted([q.id for q in tune] + [q.id for q in test]) == sorted(ids)
    assert [q.id for q in tune] == [i for i in ids if i in {q.id for q in tune}]  # file order kept
    other = invoke_cli("gold", "split", path, "--seed", "8", "--out-dir", str(tmp_path / "c"))
    assert other.returncode == 0
    assert (tmp_path / "c" / "g.test.json").read_bytes() != test_a


def test_split_rejects_bad_fraction(tmp_path: Path, gold_doc: dict[str, Any]) -> None:
    path = _write(tmp_path / "g.json", gold_doc)
    line = _one_line_error(run_cli("gold", "split", path, "--test-fraction", "1.5", "--out-dir", str(tmp_path)))
    assert "test_fraction" in line and "[0, 1]" in line
    assert not (tmp_path / "g.tune.json").exists()


def test_qrels_export(tmp_path: Path, gold_doc: dict[str, Any]) -> None:
    doc = {**gold_doc, "queries": [_q("a", "x", ["list_invoices"], acceptable_tools=["create_invoice"]),
                                   _q("b", "y", [], intent="none", no_match=True)]}
    path = _write(tmp_path / "g.json", doc)
    out = tmp_path / "q.txt"
    proc = invoke_cli("gold", "qrels", path, "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == "a 0 list_invoices 2\na 0 create_invoice 1\n"
    assert json.loads(proc.stdout) == {"source": path, "out": str(out), "lines": 2, "queries": 2, "judged_queries": 1}
