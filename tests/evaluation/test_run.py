"""Running discovery over gold sets, scoring, sweeps and comparisons, through the library."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from tooldisc.errors import UsageError
from tooldisc.evaluation.compare import compare_document
from tooldisc.evaluation.run import eval_measures, run_discovery, score_run
from tooldisc.evaluation.summary import eval_document
from tooldisc.evaluation.sweep import parse_ks, sweep_document
from tooldisc.metrics import evaluate


def _schema() -> dict:
    return json.loads(resources.files("tooldisc.evaluation").joinpath("data/eval.schema.json").read_text("utf-8"))


class SpyEngine:
    """Wraps a Discoverer and records exactly what reached ``discover``."""

    def __init__(self, engine):
        self._engine = engine
        self.calls: list[tuple] = []

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def discover(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self._engine.discover(*args, **kwargs)


def test_discovery_sees_only_query_context_k_and_history(tiny) -> None:
    _cat, gold, engine = tiny
    spy = SpyEngine(engine)
    ctx = engine.default_context
    result = run_discovery(spy, gold, ctx, 3)
    assert len(spy.calls) == len(gold)
    for (args, kwargs), q in zip(spy.calls, gold.queries, strict=True):
        assert kwargs == {}
        assert args == (q.query, ctx, 3, q.history)  # no id, no labels
    assert [r.qid for r in result.queries] == [q.id for q in gold.queries]
    assert result.cutoff == 3


def test_progress_is_called_per_query(tiny) -> None:
    _cat, gold, engine = tiny
    seen: list[int] = []
    run_discovery(engine, gold, engine.default_context, 3, progress=seen.append)
    assert seen == list(range(1, len(gold) + 1))


def test_eval_metrics_are_the_metrics_package_on_the_offers(tiny) -> None:
    cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, 3)
    doc = eval_document(result)
    effects = {t.name: t.side_effect for t in cat.tools}
    expected = evaluate(eval_measures(3), gold.judgments(), result.run(), side_effects=effects)
    assert list(doc["metrics"]) == [str(m) for m in eval_measures(3)]
    for m, v in expected.items():
        assert doc["metrics"][str(m)] == (None if v != v else pytest.approx(v, abs=1e-6))
    assert doc["queries"] == 7 and doc["matched"] == 6 and doc["no_match"] == 1


def test_misses_follow_the_offers(tiny) -> None:
    _cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, 3)
    doc = eval_document(result, max_misses=100)
    offers = result.run()
    kinds = {(m["id"], m["kind"]) for m in doc["misses"]}
    for q in gold.queries:
        got = offers[q.id]
        if q.matched and not got:
            assert (q.id, "false_abstention") in kinds
        elif q.matched and not set(q.primary_expected_tools) & set(got):
            assert (q.id, "miss") in kinds
        if set(q.forbidden_tools) & set(got):
            assert (q.id, "forbidden") in kinds
        if q.no_match and got:
            assert (q.id, "no_match_offered") in kinds
    assert sum(doc["miss_counts"].values()) == len(doc["misses"])
    order = ["forbidden", "false_abstention", "miss", "no_match_offered"]
    ranks = [order.index(m["kind"]) for m in doc["misses"]]
    assert ranks == sorted(ranks)
    forbidden = [m for m in doc["misses"] if m["kind"] == "forbidden"]
    assert all(m["forbidden_offered"] for m in forbidden)


def test_slices_partition_the_queries(tiny) -> None:
    _cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, 3)
    doc = eval_document(result)
    assert set(doc["by"]) == {"category", "difficulty", "intent"}  # hard_case labels nothing here
    for _name, values in doc["by"].items():
        assert sum(v["queries"] for v in values.values()) == len(gold)
        assert sum(v["matched"] for v in values.values()) == doc["matched"]
    jsonschema.validate(doc, _schema())


def test_a_slice_field_no_query_has_is_a_note_and_a_non_label_is_usage_error(tiny) -> None:
    _cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, 3)
    doc = eval_document(result, by=("colour", "category"))
    assert list(doc["by"]) == ["category"]
    assert any(n.startswith("warning: --by colour: no query in") for n in doc["notes"])
    assert not any("--by" in n for n in eval_document(result)["notes"])  # the defaults stay quiet
    with pytest.raises(UsageError, match="--by query"):
        eval_document(result, by=("query",))


def test_auto_k_names_measures_with_max_k(tiny) -> None:
    _cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, "auto")
    doc = eval_document(result)
    cap = engine.config.adaptive.max_k
    assert doc["k"] == "auto" and doc["cutoff"] == cap
    assert f"hit@{cap}" in doc["metrics"] and "avg_k" in doc["metrics"]
    jsonschema.validate(doc, _schema())


def test_timings_only_when_asked(tiny) -> None:
    _cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, 3)
    assert "latency_p50" not in eval_document(result)["metrics"]
    timed = eval_document(result, timings=True)["metrics"]
    assert timed["latency_p50"] >= 0 and timed["latency_p95"] >= timed["latency_p50"]
    jsonschema.validate(eval_document(result, timings=True), _schema())


@pytest.mark.parametrize("k", [1, 2, 3])
def test_sweep_at_k_equals_eval_at_k_tiny(tiny, k: int) -> None:
    _cat, gold, engine = tiny
    deep = run_discovery(engine, gold, engine.default_context, 5)
    row = next(r for r in sweep_document(deep, (1, 2, 3, 5))["rows"] if r["k"] == k)
    at_k = eval_document(run_discovery(engine, gold, engine.default_context, k))
    assert {m: v for m, v in row["metrics"].items() if m != "schema_tokens"} == at_k["metrics"]


def test_sweep_at_k_equals_eval_at_k_shipped(shipped) -> None:
    _cat, gold, engine = shipped
    ctx = engine.default_context
    doc = sweep_document(run_discovery(engine, gold, ctx, 48), (5, 15, 48))
    for k in (5, 15):
        row = next(r for r in doc["rows"] if r["k"] == k)
        at_k = eval_document(run_discovery(engine, gold, ctx, k), by=())
        assert {m: v for m, v in row["metrics"].items() if m != "schema_tokens"} == at_k["metrics"]
    tokens = [r["metrics"]["schema_tokens"] for r in doc["rows"]]
    assert tokens == sorted(tokens) and tokens[0] > 0  # deeper offers never cost less
    assert "estimated" in doc["schema_tokens_method"]


def test_sweep_refuses_a_shallow_run(tiny) -> None:
    _cat, gold, engine = tiny
    with pytest.raises(UsageError, match="deep"):
        sweep_document(run_discovery(engine, gold, engine.default_context, 3), (3, 5))


def test_parse_ks() -> None:
    assert parse_ks("15, 3,5,5") == (3, 5, 15)
    for bad in ("", "3,x", "0", "-2"):
        with pytest.raises(UsageError):
            parse_ks(bad)


def test_compare_same_config_is_all_ties(tiny) -> None:
    _cat, gold, engine = tiny
    a = run_discovery(engine, gold, engine.default_context, 3)
    doc = compare_document(a, a, permutations=200)
    for row in doc["measures"]:
        assert row["wins"] == row["losses"] == 0
        assert row["p_randomization"] == 1.0 and row["p_sign"] == 1.0
        assert row["verdict"] == "no significant difference"  # nothing moved: a finding, not "too small"
    assert doc["changed_count"] == 0 and doc["too_small"] == [] and doc["regressions"] == []


def test_compare_detects_a_changed_ranker(tiny) -> None:
    from tooldisc.discovery.config import config_from_mapping, load_config
    from tooldisc.discovery.pipeline import Discoverer

    cat, gold, engine = tiny
    a = run_discovery(engine, gold, engine.default_context, 3)
    no_ngrams = config_from_mapping({"weights": {"ngram": 0.0}}, base=load_config())
    b = run_discovery(Discoverer(cat, no_ngrams), gold, engine.default_context, 3)
    doc = compare_document(a, b, permutations=500, seed=3)
    rows = {r["measure"]: r for r in doc["measures"]}
    hit = rows["hit@3"]
    assert hit["wins"] + hit["ties"] + hit["losses"] == hit["n"] == 6
    assert hit["delta"] == pytest.approx(hit["b"] - hit["a"], abs=1e-6)
    assert all(r["p_randomization_holm"] >= r["p_randomization"] - 1e-12 for r in doc["measures"])
    changed = {c["id"] for c in doc["changed"]}
    assert changed == {q.qid for q, r in zip(a.queries, b.queries, strict=True) if q.names != r.names}
    assert changed and doc["changed_count"] == len(changed)


def test_compare_refuses_different_queries(tiny) -> None:
    _cat, gold, engine = tiny
    a = run_discovery(engine, gold, engine.default_context, 3)
    b = run_discovery(engine, gold.with_queries(gold.queries[:3]), engine.default_context, 3)
    with pytest.raises(UsageError):
        compare_document(a, b)


def test_score_run_depth_cuts_the_offers(tiny) -> None:
    _cat, gold, engine = tiny
    deep = run_discovery(engine, gold, engine.default_context, 5)
    cut = score_run(deep, ["avg_k"], depth=1)
    assert cut.totals[next(iter(cut.totals))] <= 1.0
