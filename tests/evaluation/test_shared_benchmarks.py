"""``tooldisc eval`` on the shared benchmarks, one command each: structure and sanity bounds.

These assert what must hold for any reasonable ranker (not fitted numbers): the
output validates, every query is counted, rates lie in [0, 1], a tools.jsonl's
read-only treatment is reported, and ranking beats chance by a wide margin.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import invoke_cli
from tests.oracles import oracle

pytestmark = pytest.mark.shared


def _eval(catalog: Path, gold: Path, k: int, *extra: str) -> dict:
    r = invoke_cli("eval", "--catalog", str(catalog), "--gold", str(gold), "--k", str(k), "--format", "json",
                   "--misses", "3", *extra)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    schema = json.loads(resources.files("tooldisc.evaluation").joinpath("data/eval.schema.json").read_text("utf-8"))
    jsonschema.validate(doc, schema)
    for name, value in doc["metrics"].items():
        if value is not None and name != "avg_k":
            assert 0.0 <= value <= 1.0, name
    assert 0 < doc["metrics"]["avg_k"] <= k
    assert len(doc["misses"]) <= 3
    return doc


def _rows(path: Path) -> int:
    return sum(1 for line in path.read_text("utf-8").splitlines() if line.strip())


def test_hesabix(shared: Path) -> None:
    b = shared / "benchmarks" / "hesabix"
    doc = _eval(b / "catalog.json", b / "gold.dev.json", 10)
    raw = json.loads((b / "gold.dev.json").read_text("utf-8"))["queries"]
    assert doc["queries"] == len(raw)
    assert doc["no_match"] == sum(1 for q in raw if q.get("no_match"))
    assert doc["matched"] + doc["no_match"] <= doc["queries"]
    m = doc["metrics"]
    assert m["no_match_success"] is not None and m["hit@10"] > 0.5 and m["MRR"] > 0.3
    assert m["hit@10"] >= m["complete@10"] and m["hit@10"] >= m["recall@10"] >= m["complete@10"]
    assert "category" in doc["by"] and "intent" in doc["by"]
    assert not any("read-only" in n for n in doc["notes"])  # a real catalog carries policy


@pytest.mark.parametrize("name, gold, k", [("metatool", "queries_sample2k.jsonl", 5), ("bfcl", "queries.jsonl", 10)])
def test_external_format(shared: Path, tmp_path: Path, name: str, gold: str, k: int) -> None:
    b = shared / "benchmarks" / name
    by = ["--by", "subset,category"] if name == "metatool" else []
    doc = _eval(b / "tools.jsonl", b / gold, k, "--run-out", str(tmp_path / "run.trec"), *by)
    assert doc["queries"] == _rows(b / gold)
    if name == "metatool":  # a benchmark row's own label (was refused: "--by must name fields among …")
        assert {v: s["queries"] for v, s in doc["by"]["subset"].items()} == {"multi": 497, "single": 1503}
        assert "category" not in doc["by"] and any("--by category" in n for n in doc["notes"])
    assert any("tools.jsonl" in n and "read-only" in n for n in doc["notes"])
    m = doc["metrics"]
    pool = _rows(b / "tools.jsonl")
    # far above a random ranker, whose hit@k would be about k / pool
    assert m[f"hit@{k}"] > 10 * k / pool and m[f"nDCG@{k}"] > 0.2
    assert m[f"forbidden@{k}"] == 0.0  # read-only tools under read intent: nothing is forbidden

    # the exported run re-checked by ir_measures, each measure at the relevance level it states
    irm = oracle("ir_measures")
    from tooldisc.gold.loader import load_gold
    from tooldisc.gold.trec import write_qrels

    write_qrels(load_gold(b / gold), tmp_path / "qrels.txt")
    names = {irm.parse_measure(v): key for key, v in doc["ir_measures"].items()}
    theirs = irm.calc_aggregate(list(names), irm.read_trec_qrels(str(tmp_path / "qrels.txt")),
                                irm.read_trec_run(str(tmp_path / "run.trec")))
    for measure, key in names.items():
        assert theirs[measure] == pytest.approx(m[key], abs=1e-6), key
