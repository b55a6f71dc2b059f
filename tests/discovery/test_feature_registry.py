"""The ranking-feature registry: every list of feature names is derived from its records.

A new feature is one function and one :class:`~tooldisc.discovery.rank.features.RankingFeature`
record; the recipe test adds one to a copy of the module and finds it in the config's keys,
the tunable keys, the learned ranker's names and the rank step's explanation.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
from types import SimpleNamespace
from typing import Any

import tooldisc.discovery.rank.features as features


def test_every_feature_list_is_the_registry() -> None:
    from tooldisc.discovery.config import FEATURE_NAMES, RankerConfig
    from tooldisc.discovery.learned.features import RANKER_FEATURES

    names = tuple(f.name for f in features.REGISTRY)
    assert len(set(names)) == len(names)
    assert tuple(features.FEATURES) == names == FEATURE_NAMES
    assert frozenset(names) == RANKER_FEATURES
    assert features.TIE_BREAKERS == {f.name for f in features.REGISTRY if f.tie_breaker} == {"core"}
    assert all(features.FEATURES[f.name] is f.compute for f in features.REGISTRY)
    assert {n: RankerConfig().weight(n) for n in names} == {f.name: f.default_weight for f in features.REGISTRY}


def test_learned_positions_are_one_order_and_tie_breakers_are_never_learned() -> None:
    learnable = [f for f in features.REGISTRY if f.learned_when is not None]
    assert [f.learn_position for f in features.LEARNABLE] == list(range(len(learnable)))
    assert {f.name for f in features.LEARNABLE} == {f.name for f in learnable}
    assert all(f.learned_when is None and f.learn_position is None for f in features.REGISTRY if f.tie_breaker)


def _names_before_the_registry(ix: Any, expansion: bool, affinity: bool = False) -> list[str]:
    """``ranking_feature_names`` as it was written by hand before the registry (the oracle)."""
    names = ["bm25"]
    if ix.ngram is not None:
        names += ["ngram", "prior"]
    if ix.alias is not None:
        names.append("alias")
    if ix.embedding is not None:
        names.append("embedding")
    if ix.config.history.turns:
        names.append("history")
    if expansion:
        names.append("expansion")
    if affinity:
        names.append("affinity")
    return names


def test_ranking_feature_names_match_the_hand_written_list_for_every_index_shape() -> None:
    from tooldisc.discovery.learned.features import ranking_feature_names

    for ngram, alias, embedding, turns, expansion, affinity in itertools.product((None, 1), (None, 1), (None, 1),
                                                                                  (0, 3), (False, True), (False, True)):
        ix = SimpleNamespace(ngram=ngram, alias=alias, embedding=embedding,
                             config=SimpleNamespace(history=SimpleNamespace(turns=turns)))
        assert ranking_feature_names(ix, expansion, affinity) == _names_before_the_registry(ix, expansion, affinity)


RECIPE = textwrap.dedent('''
    import importlib.util, json, sys
    import numpy as np

    spec = importlib.util.find_spec("tooldisc.discovery.rank.features")
    source = open(spec.origin, encoding="utf-8").read()
    # the recipe: one function and one record
    source = source.replace("@dataclass(frozen=True)\\nclass RankingFeature",
        "def constant(ix, state):\\n    return np.full(len(state.indices), 0.5, dtype=np.float32)\\n\\n\\n"
        "@dataclass(frozen=True)\\nclass RankingFeature", 1)
    source = source.replace('RankingFeature("affinity", affinity, _with_affinity, 7),',
        'RankingFeature("affinity", affinity, _with_affinity, 7),\\n    '
        'RankingFeature("constant", constant, _always, 8),', 1)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source, spec.origin, "exec"), module.__dict__)

    from tooldisc.discovery.config import FEATURE_NAMES, config_from_mapping, default_config, tunable_keys
    from tooldisc.discovery.learned.features import RANKER_FEATURES, ranking_feature_names
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
    from tooldisc.discovery.pipeline import Discoverer

    cfg = config_from_mapping({"weights": {"constant": 0.25}}, base=default_config())
    engine = Discoverer(load_catalog(default_catalog_path()), cfg)
    offer = engine.discover("create an invoice for a customer")
    print(json.dumps({
        "config_keys": list(FEATURE_NAMES),
        "tunable": "weights.constant" in tunable_keys(),
        "ranker_may_hold": "constant" in RANKER_FEATURES,
        "learned_over": ranking_feature_names(engine.index, False),
        "explained": sorted(offer.candidates[0].features),
    }))
''')


def test_recipe_one_record_adds_a_feature_everywhere() -> None:
    res = subprocess.run([sys.executable, "-c", RECIPE], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    import json

    out = json.loads(res.stdout)
    assert out["config_keys"][-1] == "constant"
    assert out["tunable"] and out["ranker_may_hold"]
    assert out["learned_over"][-1] == "constant"
    assert "constant" in out["explained"]
