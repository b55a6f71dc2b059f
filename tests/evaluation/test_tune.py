"""WeightTuner: the estimator contract, seeded determinism, CV bookkeeping, and ``tooldisc tune``.

The synthetic dataset is built so that one setting is clearly better: with every
other weight at zero, ``weights.bm25 = 0`` offers nothing and ``1.0`` finds the
right tool for almost every query.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import invoke_cli, run_cli

TOOLS = [
    {"name": "list_invoices", "description": "List sales invoices", "side_effect": "none",
     "keywords": ["invoice", "invoices", "bill"]},
    {"name": "create_invoice", "description": "Create a new sales invoice", "side_effect": "write",
     "keywords": ["invoice"]},
    {"name": "list_customers", "description": "List customers", "side_effect": "none",
     "keywords": ["customer", "customers", "client"]},
    {"name": "create_customer", "description": "Register a new customer", "side_effect": "write",
     "keywords": ["customer", "client"]},
    {"name": "list_products", "description": "List products in stock", "side_effect": "none",
     "keywords": ["product", "products", "stock", "inventory"]},
    {"name": "list_payments", "description": "List received payments", "side_effect": "none",
     "keywords": ["payment", "payments", "receipt"]},
    {"name": "show_balance", "description": "Show the account balance", "side_effect": "none",
     "keywords": ["balance", "account"]},
    {"name": "list_suppliers", "description": "List suppliers and vendors", "side_effect": "none",
     "keywords": ["supplier", "vendor"]},
]
QUERIES = [
    ("q01", "show sales invoices", "list_invoices", "read"),
    ("q02", "list all invoices", "list_invoices", "read"),
    ("q03", "list customers", "list_customers", "read"),
    ("q04", "who are my clients", "list_customers", "read"),
    ("q05", "products in stock", "list_products", "read"),
    ("q06", "inventory of products", "list_products", "read"),
    ("q07", "received payments", "list_payments", "read"),
    ("q08", "payments list", "list_payments", "read"),
    ("q09", "account balance", "show_balance", "read"),
    ("q10", "show balance", "show_balance", "read"),
    ("q11", "list suppliers", "list_suppliers", "read"),
    ("q12", "vendor list", "list_suppliers", "read"),
    ("q13", "create a new invoice", "create_invoice", "write"),
    ("q14", "register a new customer", "create_customer", "write"),
]
ZERO = {"weights": {"bm25": 0.0, "ngram": 0.0, "alias": 0.0, "prior": 0.0, "history": 0.0, "core": 0.0}}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory):
    """``(catalog, gold, base config, file paths)`` for the synthetic set."""
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.config import config_from_mapping, load_config
    from tooldisc.gold.loader import load_gold

    d = tmp_path_factory.mktemp("tune")
    cat_path, gold_path = d / "catalog.json", d / "gold.json"
    cat_path.write_text(json.dumps({"catalog_version": "syn-1", "tools": TOOLS}), encoding="utf-8")
    rows = [{"id": i, "query": q, "primary_expected_tools": [t], "intent": intent} for i, q, t, intent in QUERIES]
    gold_path.write_text(json.dumps({"catalog_version": "syn-1", "queries": rows}), encoding="utf-8")
    base = config_from_mapping(ZERO, base=load_config())
    return load_catalog(cat_path), load_gold(gold_path), base, (cat_path, gold_path)


def _tuner(base, **kw):
    from tooldisc.evaluation.tune import WeightTuner

    params = {"space": {"weights.bm25": [0.0, 1.0]}, "n_iter": 4, "cv": 2, "k": 3, "random_state": 0,
              "base_config": base}
    return WeightTuner(**{**params, **kw})


# --- the estimator contract ----------------------------------------------------------


def test_init_stores_params_untouched_and_fit_returns_self(synthetic):
    cat, gold, base, _ = synthetic
    space = {"weights.bm25": [0.0, 1.0]}
    tuner = _tuner(base, space=space, objective="nDCG@3")
    assert tuner.space is space and tuner.base_config is base and tuner.objective == "nDCG@3"
    assert not [a for a in vars(tuner) if a.endswith("_")]
    assert tuner.fit([(cat, gold)]) is tuner
    assert {"best_config_", "best_params_", "best_score_", "cv_results_", "folds_", "train_score_",
            "heldout_score_"} <= {a for a in vars(tuner) if a.endswith("_")}
    assert tuner.space is space and space == {"weights.bm25": [0.0, 1.0]}


def test_get_params_set_params_and_clone(synthetic):
    from sklearn.base import clone

    _, _, base, _ = synthetic
    tuner = _tuner(base)
    params = tuner.get_params()
    assert set(params) == {"base_config", "cv", "k", "learned", "n_iter", "objective", "random_state", "space"}
    copy = clone(tuner)
    assert copy is not tuner and copy.get_params()["n_iter"] == 4 and copy.get_params()["space"] == params["space"]
    assert not [a for a in vars(copy) if a.endswith("_")]
    assert tuner.set_params(n_iter=7) is tuner and tuner.n_iter == 7
    with pytest.raises(ValueError, match="Invalid parameter 'bogus'"):
        tuner.set_params(bogus=1)
    assert "WeightTuner(" in repr(tuner)


@pytest.mark.parametrize(("kw", "message"), [
    ({"cv": 1}, "'cv' parameter must be an int in the range \\[2, 100\\] \\(cross-validation folds\\). Got 1 instead"),
    ({"n_iter": 10_001}, "'n_iter' parameter must be an int in the range \\[0, 10000\\]"),
    ({"k": 0}, "'k' parameter"),
    ({"n_iter": -1}, "'n_iter' parameter"),
    ({"random_state": None}, "'random_state' parameter"),
    ({"objective": "nDCG@10 +"}, "'objective' parameter"),
    ({"objective": "bogus@3"}, "unknown measure"),
])
def test_bad_params_fail_in_fit_with_the_parameter_named(synthetic, kw, message):
    from tooldisc.errors import UsageError

    cat, gold, base, _ = synthetic
    tuner = _tuner(base, **kw)  # __init__ validates nothing (the contract)
    with pytest.raises(UsageError, match=message):
        tuner.fit([(cat, gold)])


def test_objective_parses_and_prints_back():
    from tooldisc.evaluation.tune import parse_objective
    from tooldisc.metrics.measures import NDCG, Forbidden

    assert parse_objective("nDCG@10").measure == NDCG(10)
    o = parse_objective("nDCG@10 - 0.5*forbidden@10")
    assert (o.measure, o.penalty, o.weight) == (NDCG(10), Forbidden(10), 0.5)
    assert str(o) == "nDCG@10 - 0.5*forbidden@10" and parse_objective(str(o)) == o
    assert str(parse_objective("nDCG@10-forbidden@10")) == "nDCG@10 - forbidden@10"


# --- CV bookkeeping --------------------------------------------------------------------


def test_the_clearly_better_setting_wins_every_fold(synthetic):
    cat, gold, base, _ = synthetic
    tuner = _tuner(base, cv=3).fit([(cat, gold)])
    assert tuner.candidates_ == ({"weights.bm25": 0.0}, {"weights.bm25": 1.0})  # base first, grid exhausted
    assert tuner.best_params_ == {"weights.bm25": 1.0} and tuner.best_config_.weight("bm25") == 1.0
    assert all(f.chosen == 1 for f in tuner.folds_)
    assert tuner.cv_results_["all_data_score"][0] == 0.0  # nothing is offered at all
    assert tuner.best_score_ > 0.8 and tuner.heldout_score_ > 0.8
    assert list(tuner.cv_results_["rank_all_data_score"]) == [2, 1]


def test_fold_scores_equal_an_independent_eval_of_each_part(synthetic):
    """Every query is held out exactly once, and a fold's score is that fold's own eval."""
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.run import run_discovery, score_run
    from tooldisc.evaluation.tune.tuner import fold_masks
    from tooldisc.metrics.measures import NDCG

    cat, gold, base, _ = synthetic
    tuner = _tuner(base, cv=3, objective="nDCG@3").fit([(cat, gold)])
    ids, masks = fold_masks(gold, 3, 0)
    assert sum(int(m.sum()) for m in masks) == len(gold) and all(sum(masks) == 1)
    assert [f.n_heldout for f in tuner.folds_] == [int(m.sum()) for m in masks]
    assert all(f.n_train + f.n_heldout == len(gold) for f in tuner.folds_)
    scores = score_run(run_discovery(Discoverer(cat, tuner.best_config_), gold, default_context(cat), 3), ["nDCG@3"])
    for f, mask in zip(tuner.folds_, masks, strict=True):
        held = {q for q, m in zip(ids, mask, strict=True) if m}
        assert f.heldout == pytest.approx(scores.subset(held)[NDCG(3)])
        assert f.train == pytest.approx(scores.subset(set(ids) - held)[NDCG(3)])
        assert f.train == tuner.cv_results_[f"split{f.fold}_train_score"][f.chosen]
    assert tuner.best_score_ == pytest.approx(scores.totals[NDCG(3)])


def test_score_is_the_mean_over_datasets(synthetic):
    cat, gold, base, _ = synthetic
    one = _tuner(base, cv=2).fit([(cat, gold)])
    two = _tuner(base, cv=2).fit([(cat, gold), (cat, gold)])
    assert two.best_score_ == pytest.approx(one.best_score_)
    assert [f.heldout for f in two.folds_] == pytest.approx([f.heldout for f in one.folds_])
    assert [f.n_heldout for f in two.folds_] == [2 * f.n_heldout for f in one.folds_]


def test_a_penalty_measure_is_subtracted_with_its_weight(synthetic):
    cat, gold, base, _ = synthetic
    plain = _tuner(base).fit([(cat, gold)])
    penalised = _tuner(base, objective="nDCG@10 - 2*forbidden@3").fit([(cat, gold)])
    assert penalised.best_score_ <= plain.best_score_ + 1e-12


def test_seeded_runs_are_identical_and_seeds_matter(synthetic):
    from tooldisc.evaluation.tune.report import weights_yaml

    cat, gold, base, _ = synthetic
    space = {"weights.bm25": (0.2, 1.0), "weights.core": [0.0, 0.001]}
    a = _tuner(base, space=space, n_iter=5).fit([(cat, gold)])
    b = _tuner(base, space=space, n_iter=5).fit([(cat, gold)])
    c = _tuner(base, space=space, n_iter=5, random_state=1).fit([(cat, gold)])
    assert a.candidates_ == b.candidates_ and a.candidates_ != c.candidates_
    assert all(round(v, 3) == v for cand in a.candidates_ for v in cand.values())
    assert weights_yaml(a, [(cat, gold)]) == weights_yaml(b, [(cat, gold)])


def test_labels_never_reach_discovery(synthetic, monkeypatch):
    from tooldisc.discovery.pipeline import Discoverer

    cat, gold, base, _ = synthetic
    seen: list[tuple] = []
    real = Discoverer.discover

    def spy(self, query, context=None, k=None, history=()):
        seen.append((query, k, tuple(history)))
        return real(self, query, context, k, history)

    monkeypatch.setattr(Discoverer, "discover", spy)
    _tuner(base).fit([(cat, gold)])
    assert {q for q, _, _ in seen} == {q.query for q in gold.queries}
    assert all(k == 3 and h == () for _, k, h in seen)


# --- search spaces -----------------------------------------------------------------------


@pytest.mark.parametrize(("space", "where", "message"), [
    ({"weights.bogus": [1.0]}, "weights.bogus", "unknown field; did you mean"),
    ({"k": [5, 10]}, "k", "unknown field; known: abstain.min_bm25"),
    ({"bm25.b": [0.5, 2.0]}, "bm25.b", "range \\[0, 1\\]"),
    ({"weights.ngram": {"low": 1.0, "high": 0.0}}, "weights.ngram", "low <= high"),
    ({"weights.ngram": {"low": 0.0}}, "weights.ngram", "'low' and 'high'"),
    ({"weights.ngram": []}, "weights.ngram", "non-empty list"),
])
def test_bad_spaces_name_the_file_and_key(space, where, message):
    from tooldisc.errors import ConfigError
    from tooldisc.evaluation.tune.tuner import validate_space

    with pytest.raises(ConfigError, match=message) as info:
        validate_space(space, file="space.yaml")
    assert info.value.file == "space.yaml" and info.value.where == where


def test_any_numeric_config_key_is_tunable(synthetic):
    """The space's keys are the config schema's: no key can reach the tuner unvalidated."""
    from tooldisc.discovery.config import tunable_keys
    from tooldisc.errors import ConfigError

    cat, gold, base, _ = synthetic
    tuner = _tuner(base, space={"ngram.long_fields_max_tools": [0, 20000], "retrieval.min_tools": [5000]}).fit(
        [(cat, gold)])
    assert tuner.candidates_[0] == {"ngram.long_fields_max_tools": 20000, "retrieval.min_tools": 5000}
    assert {type(v) for c in tuner.candidates_ for v in c.values()} == {int}
    assert tuner.best_config_.ngram.long_fields_max_tools in (0, 20000)
    for key in ("ngram.long_fields_max_tools", "history.turns", "fields.parameters", "abstain.min_embedding"):
        assert key in tunable_keys()
    with pytest.raises(ConfigError, match=r"'ngram\.long_fields_max_tools' parameter must be an int") as info:
        _tuner(base, space={"ngram.long_fields_max_tools": [-1]}).fit([(cat, gold)])
    assert info.value.where == "ngram.long_fields_max_tools"


def test_the_shipped_space_loads():
    from tooldisc.evaluation.tune import load_space

    space, file = load_space()
    assert file == "tune_space.yaml"
    assert set(space) == {"weights.bm25", "weights.ngram", "weights.alias", "weights.prior", "weights.history"}


# --- the command -------------------------------------------------------------------------


def test_cli_on_the_shipped_data_writes_a_loadable_deterministic_weights_file(tmp_path: Path):
    from tooldisc.discovery.config import load_config

    out = tmp_path / "weights.yaml"
    res = invoke_cli("tune", "--folds", "2", "--n-iter", "1", "--seed", "3", "--out", str(out), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["folds"], doc["seed"], doc["candidates"], doc["objective"]) == (2, 3, 2, "nDCG@10")
    assert [f["fold"] for f in doc["per_fold"]] == [1, 2]
    assert [(d["catalog"], d["gold"]) for d in doc["datasets"]] == [  # both shipped sets
        ("data/catalog.yaml", "data/gold.json"), ("devops/catalog.yaml", "devops/gold.json")]
    assert all(f["n_train"] + f["n_heldout"] == sum(d["queries"] for d in doc["datasets"]) for f in doc["per_fold"])
    text = out.read_text("utf-8")
    assert text.startswith("# tooldisc tune: 2-fold cross-validation, seed 3")
    assert f"held-out {doc['heldout']:.4f}" in text and "devops/catalog.yaml (" in text
    cfg = load_config(out)
    for key, value in doc["chosen"]["params"].items():
        assert cfg.weight(key.split(".", 1)[1]) == value
    import yaml

    body = yaml.safe_load(text)
    assert set(body) == {"weights"} and len(body["weights"]) == 5


def test_cli_bad_space_file_is_exit_2_one_line(tmp_path: Path):
    bad = tmp_path / "space.yaml"
    bad.write_text("weights.bogus: [1.0]\n", encoding="utf-8")
    res = run_cli("tune", "--space", str(bad), "--n-iter", "1", "--folds", "2")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: weights.bogus: unknown field")
    bad.write_text("ngram.long_fields_max_tools: [-5]\n", encoding="utf-8")  # a non-weight key out of range
    res = run_cli("tune", "--space", str(bad), "--n-iter", "1", "--folds", "2")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"error: {bad}: ngram.long_fields_max_tools: The 'ngram.long_fields_max_tools'")


def test_cli_tunes_a_non_weight_key(synthetic, tmp_path: Path):
    """Once a KeyError traceback: every numeric config key works through the command."""
    cat_path, gold_path = synthetic[3]
    space = tmp_path / "space.yaml"
    space.write_text("ngram.long_fields_max_tools: [0, 20000]\nadaptive.temperature: {low: 0.1, high: 0.3}\n",
                     encoding="utf-8")
    res = invoke_cli("tune", "--catalog", str(cat_path), "--gold", str(gold_path), "--space", str(space),
                     "--folds", "2", "--n-iter", "2", "--k", "3", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["base"]["params"] == {"adaptive.temperature": 0.175, "ngram.long_fields_max_tools": 20000}
    page = invoke_cli("tune", "--catalog", str(cat_path), "--gold", str(gold_path), "--space", str(space),
                      "--folds", "2", "--n-iter", "2", "--k", "3", "--format", "html")
    assert page.returncode == 0, page.stderr
    assert page.stdout.startswith("<!DOCTYPE html>") and '<h1 dir="auto">tooldisc tune</h1>' in page.stdout
    # its bad value through the real command: test_cli_bad_space_file_is_exit_2_one_line


def test_cli_unpaired_catalog_and_gold_is_exit_2(synthetic):
    cat_path, _ = synthetic[3]
    res = run_cli("tune", "--catalog", str(cat_path), "--n-iter", "1")
    assert res.returncode == 2 and "come in pairs" in res.stderr


def test_cli_table_on_a_given_pair_and_the_file_is_byte_identical_to_the_library(synthetic, tmp_path: Path):
    """Another process, the same inputs: the same bytes (no time, no paths in the file)."""
    from tooldisc.evaluation.tune import WeightTuner
    from tooldisc.evaluation.tune.report import weights_yaml

    cat, gold, _, (cat_path, gold_path) = synthetic
    out = tmp_path / "w.yaml"
    res = invoke_cli("tune", "--catalog", str(cat_path), "--gold", str(gold_path), "--folds", "2", "--n-iter", "2",
                  "--k", "3", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "held-out" in res.stdout and "weights.bm25" in res.stdout and "mean" in res.stdout
    tuner = WeightTuner(n_iter=2, cv=2, k=3, random_state=0).fit([(cat, gold)])
    assert out.read_bytes() == weights_yaml(tuner, [(cat, gold)]).encode("utf-8")
    assert str(tmp_path) not in out.read_text("utf-8")
