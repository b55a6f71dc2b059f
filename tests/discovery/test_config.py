"""The ranker config schema: one declaration drives the dataclass, validation, tunable keys and the hash."""

from __future__ import annotations

import pytest
import yaml

from tooldisc.discovery.config import (
    FEATURE_NAMES,
    FIELDS,
    Interval,
    NumberMap,
    RankerConfig,
    config_from_mapping,
    default_config,
    load_config,
    schema,
    tunable_keys,
    value_at,
)
from tooldisc.errors import ConfigError


def _paths(tree: dict, prefix: str = "") -> set[str]:
    out = set()
    for k, v in tree.items():
        if isinstance(v, dict) and k not in ("fields", "weights"):
            out |= _paths(v, f"{prefix}{k}.")
        else:
            out.add(prefix + k)
    return out


def test_every_yaml_path_is_an_attribute_path() -> None:
    cfg = load_config()
    for path, _rule in schema():
        head, _, rest = path.partition(".")
        node = getattr(cfg, head)
        assert not rest or getattr(node, rest) is not None, path
    assert cfg.bm25.k1 == 0.64 and cfg.ngram.long_fields_max_tools == 20000 and cfg.adaptive.policy == "mass"


def test_shipped_files_load_as_they_are_and_round_trip(tmp_path) -> None:
    from importlib import resources
    from pathlib import Path

    text = resources.files("tooldisc.discovery").joinpath("data/default.yaml").read_text("utf-8")
    raw = yaml.safe_load(text)
    declared = {p for p, _ in schema()}
    assert _paths(raw) <= declared  # the shipped file names only declared keys
    cfg = default_config()
    for path in _paths(raw) - {"fields", "weights"}:
        assert value_at(cfg, path) == _lookup(raw, path), path
    assert dict(cfg.weights) == {k: float(v) for k, v in raw["weights"].items()}
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(cfg.to_mapping()), encoding="utf-8")
    assert load_config(again) == cfg and load_config(again).hash == cfg.hash
    for path in sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.yaml")):
        assert load_config(path).source == str(path)


def _lookup(tree: dict, path: str) -> object:
    for part in path.split("."):
        tree = tree[part]
    return tree


def test_tunable_keys_come_from_the_schema() -> None:
    keys = tunable_keys()
    assert "ngram.long_fields_max_tools" in keys and keys["ngram.long_fields_max_tools"] is int
    assert "k" not in keys and "adaptive.policy" not in keys and "text.stem" not in keys
    assert {f"weights.{f}" for f in FEATURE_NAMES} | {f"fields.{f}" for f in FIELDS} <= set(keys)
    numeric = {p for p, r in schema() if isinstance(r, Interval)} - {"k"}
    assert set(keys) == numeric | {f"{p}.{n}" for p, r in schema() if isinstance(r, NumberMap) for n in r.names}


@pytest.mark.parametrize("path", sorted(tunable_keys()))
def test_each_tunable_key_sets_its_attribute(path: str) -> None:
    base = load_config()
    rules = dict(schema())
    now = value_at(base, path)
    rule = rules.get(path)
    value = 0.5 if rule is None else now + 1 if rule.kind is int else (now + rule.high) / 2
    head, _, rest = path.partition(".")
    cfg = config_from_mapping({head: {rest: value}}, base=base)
    assert value_at(cfg, path) == value and type(value_at(cfg, path)) is tunable_keys()[path]
    assert cfg.hash != base.hash or now == value


@pytest.mark.parametrize(("raw", "where", "message"), [
    ({"bm25": {"k1": -1}}, "bm25.k1", r"'bm25.k1' parameter must be a number in the range \[0, 100\]. Got -1"),
    ({"ngram": {"long_fields_max_tools": 1.5}}, "ngram.long_fields_max_tools", "must be an int"),
    ({"adaptive": {"policy": "best"}}, "adaptive.policy", "must be one of ratio, gap, confidence, mass"),
    ({"text": {"stem": "yes"}}, "text.stem", "true or false"),
    ({"bm25": {"k3": 1}}, "bm25.k3", "unknown field; known: b, k1"),
    ({"bm25": 5}, "bm25", "must be a mapping"),
    ({"ngram": {"lo": 5, "hi": 3}}, "ngram", r"ngram.lo \(5\) must not exceed ngram.hi \(3\)"),
    ({"adaptive": {"min_k": 9, "max_k": 4}}, "adaptive", "must not exceed"),
    ({"weights": {"bogus": 1}}, "weights.bogus", "unknown field"),
    ({"fields": {"name": "x"}}, "fields.name", "must be a number"),
    ({"features": {"x": 1}}, "features", "never read"),
    ({"nonsense": 1}, "nonsense", "unknown field"),
])
def test_errors_name_the_key_the_rule_and_the_value(raw: dict, where: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        config_from_mapping(raw, file="c.yaml", base=load_config())
    assert info.value.where == where and info.value.file == "c.yaml"


def test_overlay_changes_only_what_it_sets_and_the_hash_follows() -> None:
    base = load_config()
    cfg = config_from_mapping({"bm25": {"b": 0.5}, "weights": {"alias": 0.2}}, base=base)
    assert cfg.bm25.b == 0.5 and cfg.bm25.k1 == base.bm25.k1 and cfg.weight("alias") == 0.2
    assert cfg.weight("ngram") == base.weight("ngram") and cfg.ngram == base.ngram
    assert cfg.hash != base.hash and base.hash == default_config().hash
    assert RankerConfig().hash == config_from_mapping({}).hash  # neutral defaults; source is not hashed
