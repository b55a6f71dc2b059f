"""Gate thresholds: parsing, checking, JUnit, and exit codes through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.conftest import invoke_cli, run_cli
from tooldisc.errors import DataError, UsageError
from tooldisc.evaluation.gate import (
    baseline_thresholds,
    check,
    check_baseline,
    junit_xml,
    parse_max_drop,
    parse_threshold,
    parse_thresholds,
)
from tooldisc.metrics import parse_measure

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
    r = invoke_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.95", "--max", "forbidden@15=0",
                "--junit", str(junit), "--summary", str(summary))
    assert r.returncode == 0, r.stderr
    assert ET.fromstring(junit.read_text()).find("testsuite").get("failures") == "0"
    assert "tooldisc gate: passed" in summary.read_text()


def test_gate_from_fails_exit_1(eval_json: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    r = invoke_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.99", "--max", "forbidden@15=0",
                "--summary", str(summary), "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["passed"] is False and [c["passed"] for c in doc["checks"]] == [False, True]
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "FAILED" in text  # appended, as CI step summaries are
    assert text.split("\n")[3].startswith("**FAILED** — 1 of 2 thresholds fail: hit@15 is ")  # decision first
    page = invoke_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.99", "--format", "html")
    assert page.returncode == 1
    assert '<p class="word" dir="auto">FAILED</p>' in page.stdout and page.stdout.startswith("<!DOCTYPE html>")


def test_gate_html_and_out(eval_json: Path, tmp_path: Path) -> None:
    """The README says every report renders as HTML: gate too, on stdout or into --out (exit code kept)."""
    out = tmp_path / "gate.html"
    r = run_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.99", "--out", str(out))
    assert r.returncode == 1 and r.stdout == "" and f"wrote {out}" in r.stderr
    page = out.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "tooldisc gate: FAILED" in page and "hit@15" in page
    r = run_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.9", "--format", "html")
    assert r.returncode == 0 and r.stdout.startswith("<!DOCTYPE html>")
    r = run_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.9", "--out", str(tmp_path / "g.md"))
    assert r.returncode == 0 and (tmp_path / "g.md").read_text("utf-8").startswith("## tooldisc gate: passed")
    r = run_cli("gate", "--from", str(eval_json), "--min", "hit@15=0.9", "--out", str(tmp_path / "g.txt"))
    assert r.returncode == 2 and "--format" in r.stderr


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
    r = invoke_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3",
                   "--min", "hit@3=0", "--min", "hit@2=0", "--max", "forbidden@3=1", "--json")
    assert r.returncode == 0, r.stderr
    assert [c["measure"] for c in json.loads(r.stdout)["checks"]] == ["hit@3", "hit@2", "forbidden@3"]
    r = invoke_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--min", "hit@3=1")
    assert r.returncode == 1


def test_gate_cost_measures_and_unmeasurable(tiny_files) -> None:
    cat, gold = tiny_files
    r = invoke_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3",
                   "--max", "schema_tokens=100000", "--max", "latency_p95=60000", "--json")
    assert r.returncode == 0, r.stderr
    actual = {c["measure"]: c["actual"] for c in json.loads(r.stdout)["checks"]}
    assert actual["schema_tokens"] > 0 and actual["latency_p95"] >= 0


def test_gate_running_eval_bad_input_exit_2(tiny_files) -> None:
    """A threshold eval cannot measure, through the real command: one line, exit 2."""
    cat, gold = tiny_files
    for args, match in ((["--k", "3", "--min", "hit@5=0.5"], "deeper"),
                        (["--min", "candidate_recall@10=0.5"], "not an eval measure")):
        r = run_cli("gate", "--catalog", str(cat), "--gold", str(gold), *args)
        assert r.returncode == 2 and match in r.stderr, (args, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and "Traceback" not in r.stderr


# --- baseline gates: --baseline BASE.json --max-drop MEASURE=DROP ------------------


def test_max_drop_becomes_a_threshold_around_the_baseline() -> None:
    drops = [parse_max_drop("MRR=0.01"), parse_max_drop("forbidden@15=0"), parse_max_drop("no_match_success=0")]
    mrr, forb, nm = baseline_thresholds(drops, METRICS)
    assert (mrr.bound, mrr.value, mrr.baseline) == ("min", pytest.approx(0.79), 0.8)
    assert (forb.bound, forb.value) == ("max", 0.0)  # lower is better: a drop is a rise
    assert str(mrr) == "MRR >= 0.79 (baseline 0.8 - max drop 0.01)"
    checks = check([mrr, forb, nm], {**METRICS, "MRR": 0.79, "forbidden@15": 0.01, "no_match_success": 0.5})
    assert [c.passed for c in checks] == [True, False, False]  # equality passes; unmeasured baseline fails closed
    assert "not measured in the baseline" in checks[2].reason
    with pytest.raises(UsageError, match="no measure hit@10 in the baseline"):
        baseline_thresholds([parse_max_drop("hit@10=0")], METRICS)


@pytest.mark.parametrize("text, match", [
    ("MRR", "MEASURE=DROP"), ("MRR=-0.1", ">= 0"), ("MRR=x", "not a number"), ("hit@15=2", "rate"),
    ("mrr@0=0.1", "cutoff"),
])
def test_parse_max_drop_rejects(text: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        parse_max_drop(text)


def test_check_baseline_refuses_another_gold_set_catalog_or_k() -> None:
    doc = {"gold": {"hash": "g" * 64}, "catalog": {"hash": "c" * 64}, "k": 15, "cutoff": 15,
           "config": {"source": "a.yaml"}, "context": {"default": True}}
    assert check_baseline(doc, {**doc, "config": {"source": "b.yaml"}}, source="base.json") == []
    for key, value, what in (("gold", {"hash": "h" * 64}, "gold set"), ("catalog", {"hash": "d" * 64}, "catalog"),
                             ("k", 10, "K"), ("cutoff", 20, "K")):
        with pytest.raises(DataError, match=rf"base\.json: the baseline was measured on another {what}"):
            check_baseline(doc, {**doc, key: value}, source="base.json")
    with pytest.raises(DataError, match=r"lack gold\.hash"):
        check_baseline({"metrics": {}}, doc, source="base.json")
    assert check_baseline(doc, {**doc, "context": {"default": False}}, source="b") == [
        "the baseline was measured with another context"]


@pytest.fixture(scope="module")
def baseline(tiny_files, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat, gold = tiny_files
    path = tmp_path_factory.mktemp("baseline") / "base.json"
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--out", str(path), "--format", "json")
    assert r.returncode == 0, r.stderr
    return path


def test_gate_against_a_baseline_runs_eval_and_passes(tiny_files, baseline: Path, tmp_path: Path) -> None:
    cat, gold = tiny_files
    other = tmp_path / "other.yaml"
    other.write_text("k: 3\nweights: {ngram: 0.0}\n")  # another ranker config is the normal case
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    r = invoke_cli("gate", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--config", str(other),
                   "--baseline", str(baseline), "--max-drop", "hit@3=0", "--max-drop", "forbidden@3=0",
                   "--junit", str(junit), "--summary", str(summary), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    base = json.loads(baseline.read_text())["metrics"]
    assert doc["passed"] and doc["baseline"]["source"] == str(baseline)
    assert [(c["measure"], c["bound"], c["baseline"]) for c in doc["checks"]] == [
        ("hit@3", "min", base["hit@3"]), ("forbidden@3", "max", base["forbidden@3"])]
    cases = ET.fromstring(junit.read_text()).find("testsuite").findall("testcase")
    assert len(cases) == 2 and "baseline" in cases[0].get("name")
    assert "baseline: " + str(baseline) in summary.read_text() and "(baseline " in summary.read_text()


def test_gate_against_a_baseline_fails_exit_1(baseline: Path, tmp_path: Path) -> None:
    base = json.loads(baseline.read_text())
    better = tmp_path / "better.json"
    better.write_text(json.dumps({**base, "metrics": {**base["metrics"], "MRR": base["metrics"]["MRR"] + 0.1}}))
    summary = tmp_path / "summary.md"
    r = invoke_cli("gate", "--from", str(baseline), "--baseline", str(better), "--max-drop", "MRR=0.05",
                "--min", "hit@3=0", "--summary", str(summary), "--format", "md")
    assert r.returncode == 1, r.stderr
    assert "FAILED" in r.stdout and "| FAIL | MRR |" in r.stdout and "| pass | hit@3 |" in r.stdout
    assert summary.read_text() == r.stdout


def test_gate_baseline_bad_input_exit_2(tiny_files, baseline: Path, tmp_path: Path) -> None:
    cat, gold = tiny_files
    base = json.loads(baseline.read_text())
    other_gold = tmp_path / "other_gold.json"
    other_gold.write_text(json.dumps({**base, "gold": {**base["gold"], "hash": "0" * 64}}))
    cases = [
        (["--from", str(baseline), "--max-drop", "MRR=0.01"], "--max-drop needs --baseline"),
        (["--from", str(baseline), "--baseline", str(baseline), "--min", "MRR=0"], "--baseline needs"),
        (["--from", str(baseline), "--baseline", str(other_gold), "--max-drop", "MRR=0"], "another gold set"),
        (["--catalog", str(cat), "--gold", str(gold), "--k", "5", "--baseline", str(baseline),
          "--max-drop", "MRR=0"], "another K (3, now 5)"),
    ]
    for args, match in cases:
        r = run_cli("gate", *args)
        assert r.returncode == 2, (args, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and match in lines[0] and "Traceback" not in r.stderr
