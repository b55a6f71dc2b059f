"""The public evaluation API: tooldisc.evaluate / compare / load_gold, EvalRun.per_query, RunInputs."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

import tooldisc
from tooldisc.errors import DataError, UsageError
from tooldisc.evaluation.api import EvalRun
from tooldisc.evaluation.inputs import default_gold_path, load_run_inputs
from tooldisc.evaluation.per_query import MEASURE_COLUMNS, PER_QUERY_SCHEMA

NO_NGRAMS = {"weights": {"ngram": 0.0}}  # moves q2 of the tiny set


@pytest.fixture(scope="module")
def tiny_run(tiny_files) -> EvalRun:
    cat, gold = tiny_files
    return tooldisc.evaluate(cat, gold, k=3)


def test_public_names() -> None:
    for name in ("evaluate", "compare", "load_gold", "EvalRun", "Comparison", "UsageError"):
        assert name in tooldisc.__all__ and getattr(tooldisc, name) is not None


def test_paths_and_loaded_objects_give_the_same_run(tiny_files, tiny_run: EvalRun) -> None:
    cat, gold = tiny_files
    again = tooldisc.evaluate(tooldisc.load_catalog(cat), tooldisc.load_gold(gold), tooldisc.load_config(), k=3)
    assert again.metrics == tiny_run.metrics
    assert again.per_query.equals(tiny_run.per_query)
    assert tiny_run.document()["metrics"] == tiny_run.metrics


def test_per_query_has_one_row_per_query_and_its_means_are_the_totals(tiny_run: EvalRun) -> None:
    pq = tiny_run.per_query
    assert pq.schema == PER_QUERY_SCHEMA
    assert pq["id"].to_list() == [q.id for q in tiny_run.gold.queries]  # no-match q5 included
    for m, total in tiny_run.scores.totals.items():
        col = pq[m.NAME].drop_nulls()
        assert col.len() == len(tiny_run.scores.values[m])
        assert (math.isnan(total) and col.len() == 0) or col.mean() == pytest.approx(total, abs=1e-12)
    row = pq.row(by_predicate=pl.col("id") == "q5", named=True)
    assert row["no_match"] and row["MRR"] is None and row["hit"] is None and row["forbidden"] is not None


def test_per_query_columns_agree_with_each_other(tiny_run: EvalRun) -> None:
    for r in tiny_run.per_query.iter_rows(named=True):
        offered = r["offered"]
        assert r["cutoff"] == 3 and len(offered) <= 3 and len(r["scores"]) == len(offered)
        assert r["abstained"] == (not offered) and r["avg_k"] == len(offered)
        assert r["forbidden"] == float(bool(r["forbidden_offered"]))
        assert set(r["forbidden_offered"]) <= set(offered)
        if r["matched"]:
            first = next((i + 1 for i, t in enumerate(offered) if t in r["expected"]), None)
            assert r["first_relevant_rank"] == first
            assert r["MRR"] == (1.0 / first if first else 0.0)
            assert r["hit"] == float(first is not None)
        else:
            assert r["first_relevant_rank"] is None
    assert tiny_run.per_query["latency_ms"].null_count() == tiny_run.per_query.height  # no timings asked for


def test_shipped_defaults_and_bad_arguments(tiny_files) -> None:
    cat, gold = tiny_files
    assert default_gold_path().is_file()
    inputs = load_run_inputs()
    assert inputs.gold.source == str(default_gold_path()) and inputs.context.is_default and inputs.learned is None
    with pytest.raises(DataError, match="learned file not found"):
        tooldisc.evaluate(cat, gold, learned="no-such-learned.json")
    with pytest.raises(UsageError, match="The 'learned' parameter must be a path"):
        tooldisc.evaluate(cat, gold, learned=3)  # type: ignore[arg-type]
    for bad in (0, -1, 2.5, True, "seven"):
        with pytest.raises(UsageError, match="'k' parameter"):
            tooldisc.evaluate(cat, gold, k=bad)  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"nope\.json"):
        tooldisc.evaluate(cat, Path(gold).parent / "nope.json")
    with pytest.raises(UsageError, match="context options"):
        tooldisc.evaluate(cat, gold, context={"role": ["x"]})
    with pytest.raises(DataError, match="catalog lacks"):
        tooldisc.evaluate(None, gold)  # the tiny gold names tools the shipped catalog lacks


def test_an_explicit_context_reaches_discovery(tiny_files) -> None:
    cat, gold = tiny_files
    run = tooldisc.evaluate(cat, gold, k=3, context={"roles": ["viewer"], "mode": "analyzer"})
    assert run.context.mode == "analyzer" and not run.context.is_default
    offered = {t for names in run.per_query["offered"].to_list() for t in names}
    assert offered <= {"list_invoices", "get_invoice", "list_customers"}  # analyzer: read-only tools only


def test_compare_api_pairs_two_runs(tiny_files, tiny_run: EvalRun) -> None:
    cat, gold = tiny_files
    b = tooldisc.evaluate(cat, gold, config=_no_ngrams(), k=3)
    cmp = tooldisc.compare(tiny_run, b, permutations=200)
    assert cmp.measures["measure"].to_list() == list(tiny_run.metrics)
    changed = cmp.changed
    moved = [q for q, x, y in zip(tiny_run.per_query["id"], tiny_run.per_query["offered"], b.per_query["offered"],
                                  strict=True) if x.to_list() != y.to_list()]
    assert sorted(changed["id"].to_list()) == sorted(moved) and moved
    doc = cmp.document(max_changed=2)
    assert doc["changed_count"] == len(moved) and len(doc["changed"]) == min(2, len(moved))
    assert doc["worse"] == [] and cmp.worse == ()  # 7 queries: too small to tell, never "worse"
    with pytest.raises(UsageError, match="same gold queries"):
        tooldisc.compare(tiny_run, tooldisc.evaluate(cat, gold, k=2))


def _no_ngrams():
    from tooldisc.discovery.config import config_from_mapping

    return config_from_mapping(NO_NGRAMS, base=tooldisc.load_config())


def test_per_query_frame_covers_every_measure_column() -> None:
    assert set(MEASURE_COLUMNS) <= set(PER_QUERY_SCHEMA)
    from tooldisc.evaluation.run import eval_measures

    assert tuple(m.NAME for m in eval_measures(15)) == MEASURE_COLUMNS


def test_gold_hash_follows_the_queries_not_the_file(tiny_files, tmp_path: Path) -> None:
    import json

    _, gold = tiny_files
    doc = json.loads(Path(gold).read_text("utf-8"))
    lines = tmp_path / "gold.jsonl"
    lines.write_text("".join(json.dumps(q) + "\n" for q in doc["queries"]), encoding="utf-8")
    a, b = tooldisc.load_gold(gold), tooldisc.load_gold(lines)
    assert a.hash == b.hash and len(a.hash) == 64
    assert a.with_queries(a.queries[:3]).hash != a.hash
