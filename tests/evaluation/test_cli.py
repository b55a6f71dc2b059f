"""``tooldisc eval|sweep|compare`` through the real CLI: schema, determinism, reports, bad input."""

from __future__ import annotations

import itertools
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import invoke_cli, run_cli

EVAL_KEYS = {"hit@15", "complete@15", "recall@15", "MRR", "P@15", "nDCG@15", "forbidden@15",
             "no_match_success", "false_abstention", "avg_k"}


def _schema() -> dict:
    return json.loads(resources.files("tooldisc.evaluation").joinpath("data/eval.schema.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def shipped_json() -> tuple[str, str]:
    """Two separate runs of ``tooldisc eval --format json`` on the shipped data."""
    runs = [run_cli("eval", "--format", "json") for _ in range(2)]  # two processes: byte-identical across them
    for r in runs:
        assert r.returncode == 0, r.stderr
    return runs[0].stdout, runs[1].stdout


def test_eval_json_on_shipped_data(shipped_json: tuple[str, str]) -> None:
    doc = json.loads(shipped_json[0])
    jsonschema.validate(doc, _schema())
    assert set(doc["metrics"]) == EVAL_KEYS
    assert doc["queries"] >= doc["matched"] > 0 and doc["k"] == 15
    assert doc["context"]["default"] is True
    for name, value in doc["metrics"].items():
        if name != "avg_k" and value is not None:
            assert 0.0 <= value <= 1.0
    assert 0 < doc["metrics"]["avg_k"] <= 15


def test_eval_json_is_byte_identical_across_runs(shipped_json: tuple[str, str]) -> None:
    assert shipped_json[0] == shipped_json[1]


def test_eval_table_says_which_context(tiny_files) -> None:
    cat, gold = tiny_files
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3")
    assert r.returncode == 0, r.stderr
    assert "context: default" in r.stdout
    for heading in ("Measures", "By category", "By difficulty", "Worst misses"):
        assert heading in r.stdout
    assert "hit@3" in r.stdout and "no_match_success" in r.stdout


def test_eval_html_is_standalone_deterministic_and_url_free(tiny_files, tmp_path: Path) -> None:
    cat, gold = tiny_files
    outs = []
    for i in range(2):
        out = tmp_path / f"r{i}.html"
        r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--out", str(out))
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    text = outs[0].decode("utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text
    assert "http" not in text.lower()
    assert "<script" not in text and "<link" not in text


def test_eval_markdown_and_trec_run(tiny_files, tmp_path: Path) -> None:
    cat, gold = tiny_files
    run_path = tmp_path / "run.trec"
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--format", "md",
                "--run-out", str(run_path), "--by", "difficulty")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# tooldisc eval") and "## By difficulty" in r.stdout
    assert "## By category" not in r.stdout
    scores: dict[str, list[float]] = {}
    for line in run_path.read_text().splitlines():
        qid, q0, _tool, rank, score, _tag = line.split()
        assert q0 == "Q0"
        scores.setdefault(qid, []).append(float(score))
        assert int(rank) == len(scores[qid])
    assert scores and all(all(a > b for a, b in itertools.pairwise(s)) for s in scores.values())
    assert all(len(s) <= 3 for s in scores.values())


def test_eval_run_out_round_trips_to_the_same_metrics(tiny_files, tmp_path: Path) -> None:
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.gold.loader import load_gold
    from tooldisc.gold.trec import read_run
    from tooldisc.metrics import evaluate

    cat, gold = tiny_files
    run_path = tmp_path / "run.trec"
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--json", "--run-out", str(run_path))
    doc = json.loads(r.stdout)
    catalog, gold_set = load_catalog(cat), load_gold(gold)
    effects = {t.name: t.side_effect for t in catalog.tools}
    again = evaluate(list(doc["metrics"]), gold_set.judgments(), read_run(run_path), side_effects=effects)
    for m, v in again.items():
        assert doc["metrics"][str(m)] == (None if v != v else pytest.approx(v, abs=1e-6))


@pytest.mark.parametrize("content, where", [
    ('{"queries": [', "line"),
    ('{"queries": [{"id": "x", "query": "show invoices", "primary_expected_tools": ["no_such_tool"], "intent": "read"}]}',
     "no_such_tool"),
])
def test_bad_gold_is_one_line_exit_2(tiny_files, tmp_path: Path, content: str, where: str) -> None:
    cat, _ = tiny_files
    bad = tmp_path / "bad_gold.json"
    bad.write_text(content, encoding="utf-8")
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(bad))
    assert r.returncode == 2
    lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and str(bad) in lines[0] and where in lines[0]
    assert "Traceback" not in r.stderr


def test_missing_gold_and_bad_options_exit_2(tiny_files, tmp_path: Path) -> None:
    cat, gold = tiny_files
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(tmp_path / "nope.json"))
    assert r.returncode == 2 and "nope.json" in r.stderr
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--by", "history")
    assert r.returncode == 2 and "--by history" in r.stderr
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--by", "colour,category", "--json")
    assert r.returncode == 0 and list(json.loads(r.stdout)["by"]) == ["category"]
    assert next(line for line in r.stderr.splitlines() if "--by colour" in line).startswith("warning: --by colour:")
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--format", "xml")
    assert r.returncode == 2
    r = run_cli("sweep", "--catalog", str(cat), "--gold", str(gold), "--k", "3,zero")
    assert r.returncode == 2


@pytest.mark.parametrize("command", ["eval", "sweep", "compare", "gate"])
def test_help(command: str) -> None:
    r = invoke_cli(command, "--help")
    assert r.returncode == 0 and "--format" in r.stdout and "--json" in r.stdout


def test_sweep_json_and_html(tiny_files, tmp_path: Path) -> None:
    cat, gold = tiny_files
    r = invoke_cli("sweep", "--catalog", str(cat), "--gold", str(gold), "--k", "1,3,5", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["ks"] == [1, 3, 5] and doc["depth"] == 5
    assert [row["k"] for row in doc["rows"]] == [1, 3, 5]
    assert all({"hit@1", "nDCG@1", "schema_tokens"} <= set(doc["rows"][0]["metrics"]) for _ in [0])
    out = tmp_path / "sweep.html"
    r = invoke_cli("sweep", "--catalog", str(cat), "--gold", str(gold), "--k", "1,3,5", "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text("utf-8")
    assert text.count("<svg") == 2 and "http" not in text.lower()


def test_compare_two_configs(tiny_files, tmp_path: Path) -> None:
    cat, gold = tiny_files
    a = tmp_path / "a.yaml"
    a.write_text("k: 3\n")
    b = tmp_path / "b.yaml"
    b.write_text("k: 3\nweights: {bm25: 0.0}\nabstain: {min_bm25: 0.0, min_ngram: 0.0}\n")
    r = invoke_cli("compare", str(a), str(b), "--catalog", str(cat), "--gold", str(gold), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["k"] == 3 and doc["a"]["source"] == str(a) and doc["b"]["source"] == str(b)
    assert {row["measure"] for row in doc["measures"]} == {m.replace("15", "3") for m in EVAL_KEYS}
    # 7 queries: with m = 10 tests the sign test needs 9 that moved to reach 0.05/10 at all
    assert doc["sign_test_needs"] == 9 and doc["tests"] == 10
    for row in doc["measures"]:  # whatever moved is too few to tell; what did not move is no difference
        moved = row["wins"] + row["losses"]
        assert row["verdict"] == ("too small to tell" if moved else "no significant difference"), row
    assert doc["too_small"] and "forbidden@3" not in doc["too_small"]
    r = invoke_cli("compare", str(a), str(b), "--catalog", str(cat), "--gold", str(gold), "--fail-if-worse")
    assert r.returncode == 0 and "too small to tell" in r.stdout and "Queries that changed" in r.stdout
    assert "--fail-if-worse cannot judge" in r.stderr  # a sample too small never passes silently


WORDS = ["apricot", "bramble", "cobalt", "dahlia", "ember", "fjord", "garnet", "hazel", "indigo", "juniper",
         "kelp", "lilac", "marigold", "nutmeg", "onyx", "paprika", "quartz", "rhubarb", "saffron", "thistle",
         "umber", "violet", "walnut", "xenon", "yarrow", "zinnia", "acorn", "basalt", "cedar", "dune", "elm",
         "flint", "gorse", "heather", "iris", "jasper", "kestrel", "larch", "moss", "nettle"]


def test_compare_fail_if_worse(tmp_path: Path) -> None:
    """40 queries each answered by one description word: a config blind to descriptions is shown worse."""
    cat, gold = tmp_path / "catalog.json", tmp_path / "gold.json"
    cat.write_text(json.dumps({"tools": [
        {"name": f"tool_{i:02d}", "description": f"Manage {w} files", "keywords": ["records"], "side_effect": "none"}
        for i, w in enumerate(WORDS)]}))
    gold.write_text(json.dumps({"queries": [
        {"id": f"q{i:02d}", "query": f"show the {w} records", "primary_expected_tools": [f"tool_{i:02d}"],
         "intent": "read"} for i, w in enumerate(WORDS)]}))
    good, blind = tmp_path / "good.yaml", tmp_path / "blind.yaml"
    good.write_text("k: 3\n")
    blind.write_text("k: 3\nfields: {description: 0.0}\nweights: {ngram: 0.0}\nabstain: {min_bm25: 0.0, min_ngram: 0.0}\n")
    common = ["--catalog", str(cat), "--gold", str(gold), "--fail-if-worse"]
    r = invoke_cli("compare", str(good), str(blind), *common, "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert "hit@3" in doc["worse"] and "MRR" in doc["worse"] and "avg_k" not in doc["worse"]
    assert "significantly worse than A on hit@3" in r.stderr
    r = invoke_cli("compare", str(blind), str(good), *common)
    assert r.returncode == 0, r.stderr
    assert "B better" in r.stdout


def test_eval_reports_an_explicit_context(tiny_files) -> None:
    cat, gold = tiny_files
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--json",
                "--tenant", "t1", "--role", "viewer", "--mode", "analyzer")
    assert r.returncode == 0, r.stderr
    ctx = json.loads(r.stdout)["context"]
    assert ctx == {"tenant": "t1", "roles": ["viewer"], "permissions": [], "mode": "analyzer", "forced": [],
                   "default": False}
