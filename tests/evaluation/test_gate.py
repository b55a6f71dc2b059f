"""Gate thresholds: parsing, checking, JUnit, and exit codes through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from tooldisc.evaluation.gate import check, junit_xml, parse_threshold, parse_thresholds
from tooldisc.metrics import parse_measure

from tests.conftest import run_cli
from tooldisc.errors import UsageError

METRICS = {"hit@15": 0.96, "MRR": 0.8, "nDCG@15": 0.85, "forbidden@15": 0.0, "no_match_success": None,
           "false_abstention": 0.01, "avg_k": 9.5}


def test_parse_threshold() -> None:
    t = parse_threshold("hit@15=0.95", "min")
    assert t.measure == parse_measure("hit@15") and t.bound == "min" and t.value == 0.95
    assert str(parse_threshold(" forbidden@15 = 0 ", "max")) == "forbidden@15 <= 0"
    assert parse_threshold("ndcg@10=0.9", "min").measure == parse_measure("nDCG@10")
    assert parse_threshold("avg_k=12", "max").value == 12.0  # a count, not a rate


@pytest.mark.parametrize("text, match", [
    ("hits@15=0.9", "unknown measure"),
    ("hit@15", "MEASURE=VALUE"),
    ("hit@15=high", "not a number"),
    ("hit@15=nan", "finite"),
    ("hit@15=1.5", r"\[0, 1\]"),
    ("no_match_success@3=0.5", "no cutoff"),
    ("", "MEASURE=VALUE"),
])
def test_parse_threshold_rejects(text: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        parse_threshold(text, "min")


def test_parse_thresholds_needs_one() -> None:
    with pytest.raises(UsageError, match="at least one"):
        parse_thresholds((), ())


def test_check_bounds_and_tolerance() -> None:
    ts = parse_thresholds(["hit@15=0.96", "MRR=0.81"], ["forbidden@15=0", "avg_k=9"])
    results = check(ts, METRICS)
    assert [c.passed for c in results] == [True, False, True, False]  # equality passes
    assert "0.8 < 0.81" in results[1].reason


def test_unmeasurable_fails_closed() -> None:
    [c] = check(parse_thresholds(["no_match_success=0.5"]), METRICS)
    assert not c.passed and c.actual is None and "could not be measured" in c.reason


def test_missing_measure_is_bad_input() -> None:
    with pytest.raises(UsageError, match="no measure hit@10"):
        check(parse_thresholds(["hit@10=0.9"]), METRICS, source="eval.json")


def test_junit_xml() -> None:
    checks = check(parse_thresholds(["hit@15=0.99"], ["forbidden@15=0"]), METRICS)
    root = ET.fromstring(junit_xml(checks))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert cases[0].find("failure") is not None and cases[1].find("failure") is None


# --- through the real CLI ---------------------------------------------------------


@pytest.fixture(scope="module")
def eval_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "eval.json"
    path.write_text(json.dumps({"metrics": METRICS}), encoding="utf-8")
    return path


def test_gate_from_passes_exit_0(eval_json: Path, tmp_path: Path) -> None:
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    r = run_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.95", "--max", "forbidden@15=0",
                "--junit", str(junit), "--summary", str(summary))
    assert r.returncode == 0, r.stderr
    assert ET.fromstring(junit.read_text()).find("testsuite").get("failures") == "0"
    assert "tooldisc gate: passed" in summary.read_text()


def test_gate_from_fails_exit_1(eval_json: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    r = run_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.99", "--max", "forbidden@15=0",
                "--summary", str(summary), "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["passed"] is False and [c["passed"] for c in doc["checks"]] == [False, True]
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "FAILED" in text  # appended, as CI step summaries are


@pytest.mark.parametrize("args, match", [
    (["--min", "hits@15=0.9"], "unknown measure"),
    (["--min", "hit@15=abc"], "not a number"),
    (["--min", "hit@10=0.9"], "no measure hit@10"),
    ([], "at least one threshold"),
    (["--min", "hit@15=0.9", "--k", "10"], "cannot be combined"),
])
def test_gate_bad_input_exit_2(eval_json: Path, args: list[str], match: str) -> None:
    r = run_cli("gate", "--from", str(eval_json), *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and match in lines[0]


def test_gate_from_unreadable_or_not_eval_json(tmp_path: Path) -> None:
    bad = tmp_path / "eval.json"
    bad.write_text("{not json")
    r = run_cli("gate", "--from", str(bad), "--min", "hit@15=0.9")
    assert r.returncode == 2 and str(bad) in r.stderr and "line 1" in r.stderr
    other = tmp_path / "other.json"
    other.write_text('{"metrics": {"hit@15": "high"}}')
    r = run_cli("gate", "--from", str(other), "--min", "hit@15=0.9")
    assert r.returncode == 2 and "metrics" in r.stderr
    r = run_cli("gate", "--from", str(tmp_path / "missing.json"), "--min", "hit@15=0.9")
    assert r.returncode == 2 and "missing.json" in r.stderr


def test_gate_runs_eval_itself(tiny_files) -> None:
    cat, gold = tiny_files
    r = run_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3",
                "--min", "hit@3=0", "--min", "hit@2=0", "--max", "forbidden@3=1", "--json")
    assert r.returncode == 0, r.stderr
    assert [c["measure"] for c in json.loads(r.stdout)["checks"]] == ["hit@3", "hit@2", "forbidden@3"]
    r = run_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--min", "hit@3=1")
    assert r.returncode == 1
    r = run_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--min", "hit@5=0.5")
    assert r.returncode == 2 and "deeper" in r.stderr


def test_gate_cost_measures_and_unmeasurable(tiny_files) -> None:
    cat, gold = tiny_files
    r = run_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3",
                "--max", "schema_tokens=100000", "--max", "latency_p95=60000", "--json")
    assert r.returncode == 0, r.stderr
    actual = {c["measure"]: c["actual"] for c in json.loads(r.stdout)["checks"]}
    assert actual["schema_tokens"] > 0 and actual["latency_p95"] >= 0
    r = run_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--min", "candidate_recall@10=0.5")
    assert r.returncode == 2 and "not an eval measure" in r.stderr
