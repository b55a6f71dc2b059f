"""Safe JSON Schema evaluation: the static check, and parity with jsonschema on ordinary schemas."""

from __future__ import annotations

from collections.abc import Mapping
from unittest.mock import patch

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc.discovery.catalog.schema_check import (
    MAX_ARGUMENT_DEPTH,
    json_depth_exceeds,
    schema_problem,
    validate,
)
from tooldisc.values import is_mapping

PROBLEMS = [
    ({"properties": {"s": {"pattern": "(("}}}, "properties.s.pattern", "missing )"),
    ({"properties": {"s": {"pattern": "(?=a)"}}}, "properties.s.pattern", "RE2"),
    ({"patternProperties": {"(a)\\1": {}}}, "patternProperties", "RE2"),
    ({"$ref": "#"}, "(root)", "$ref cycle"),
    ({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
     "$defs.a", "$ref cycle"),
    ({"properties": {"x": {"$ref": "#/nope"}}}, "properties.x", "does not resolve"),
    ({"properties": {"x": {"$ref": "#/properties"}}}, "properties.x", "does not resolve"),  # not a subschema
    ({"properties": {"x": {"$ref": "https://example.org/s.json"}}}, "properties.x", "never resolved"),
    ({"properties": {"x": {"$ref": "#anchor"}}}, "properties.x", "never resolved"),
    ({"properties": {"x": {"$dynamicRef": "#meta"}}}, "properties.x", "$dynamicRef"),
    ({"properties": {"x": {"$schema": "http://json-schema.org/draft-04/schema#"}}}, "properties.x", "$schema"),
    ({"patternProperties": {"^a": {}}, "unevaluatedProperties": False}, "(root)", "unevaluatedProperties"),
    ({"type": "object", "properties": {"x": {"type": 5}}}, "properties.x.type", "not a valid JSON Schema"),
]


@pytest.mark.parametrize(("schema", "path", "words"), PROBLEMS)
def test_schema_problems_name_the_place(schema, path, words):
    problem = schema_problem(schema)
    assert problem is not None and problem.path == path and words in problem.message


OK_SCHEMAS = [
    {"type": "object", "properties": {"x": {"$ref": "#"}}},  # recursion that descends into the arguments
    {"$schema": "http://json-schema.org/draft-07/schema#", "$id": "https://example.org/t", "type": "object",
     "definitions": {"id": {"type": "integer"}}, "properties": {"id": {"$ref": "#/definitions/id"}}},
    {"$defs": {"a b": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a%20b"}}},
    {"properties": {"x": {"pattern": "^\\p{L}+$"}}},  # RE2 knows Unicode classes
    {"if": {"properties": {"k": {"const": 1}}}, "then": {"required": ["v"]}, "else": True},
]


@pytest.mark.parametrize("schema", OK_SCHEMAS)
def test_ordinary_schemas_pass(schema):
    assert schema_problem(schema) is None


PARITY = [
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x[0-9]+$"}}, "required": ["a"]},
     [{"a": "x12"}, {"a": "y1"}, {}, {"a": 3}]),
    ({"type": "object", "patternProperties": {"^n_": {"type": "integer"}}, "additionalProperties": False},
     [{"n_a": 1}, {"n_a": "1"}, {"other": 1}, {"n_a": 1, "b": 2, "c": 3}]),
    ({"type": "object", "properties": {"a": {}}, "patternProperties": {"^p": {"type": "string"}},
      "additionalProperties": {"type": "boolean"}}, [{"a": 1, "p1": "s", "z": True}, {"p1": 1, "z": "no"}]),
    ({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}, [{"abc": 1}, {"aB": 1}]),
    ({"type": "array", "items": {"type": "string", "pattern": "a+"}}, [["a", "b"], []]),
]


@pytest.mark.parametrize(("schema", "instances"), PARITY)
def test_same_verdicts_as_jsonschema_on_ordinary_schemas(schema, instances):
    reference = jsonschema.Draft202012Validator(schema)
    for instance in instances:
        ours = validate(schema, instance)
        assert ours.unusable is None
        theirs = sorted(tuple(e.absolute_path) for e in reference.iter_errors(instance))
        assert sorted(v.path for v in ours.violations) == theirs, instance


def test_depth_is_measured_without_recursion():
    deep: object = 1
    for _ in range(100_000):
        deep = [deep]
    assert json_depth_exceeds(deep, MAX_ARGUMENT_DEPTH)
    assert not json_depth_exceeds({"a": [{"b": 1}]}, 3) and json_depth_exceeds({"a": [{"b": [1]}]}, 3)
    assert validate(None, {"a": deep}).unusable is not None


class _NeverDisjoint(frozenset):
    """Makes the walk look at every node in full, as it did before it skipped nodes by their keywords."""

    def isdisjoint(self, other: object) -> bool:
        return False


_KEYWORD = st.sampled_from(["type", "properties", "items", "allOf", "anyOf", "not", "$ref", "pattern",
                            "patternProperties", "$schema", "$id", "$dynamicRef", "unevaluatedProperties",
                            "unevaluatedItems", "$defs", "prefixItems", "if", "then", "enum", "required",
                            "dependentSchemas", "additionalProperties", "x-note"])
_LEAF = st.one_of(st.booleans(), st.sampled_from(["string", "object", "#", "#/$defs/a", "#/properties/a",
                                                  "((", "^a+$", "(a)\\1", "https://x/s.json"]),
                  st.integers(-1, 3), st.none())
_SCHEMAS = st.recursive(st.dictionaries(_KEYWORD, _LEAF, max_size=3),
                        lambda inner: st.one_of(st.dictionaries(st.one_of(_KEYWORD, st.sampled_from(["a", "b"])),
                                                                inner, max_size=4), st.lists(inner, max_size=3)),
                        max_leaves=14)


@settings(max_examples=examples(1500, local=200), deadline=None)
@given(_SCHEMAS)
def test_skipping_nodes_by_their_keywords_gives_the_same_verdict(schema: object) -> None:
    """The walk skips the per-node checks and the subschema search where a node holds none of their
    keywords: on generated schemas full of them, the verdict (place and words) is the full walk's."""
    from tooldisc.discovery.catalog import schema_check

    fast = schema_problem(schema, meta=False)
    with patch.object(schema_check, "_NODE_KEYS", _NeverDisjoint()), \
            patch.object(schema_check, "_SUBSCHEMA_KEYS", _NeverDisjoint()):
        full = schema_problem(schema, meta=False)
    assert fast == full


def _depth(value: object) -> int:
    """The oracle: nesting by recursion over every Mapping, list and tuple."""
    if isinstance(value, Mapping):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list | tuple):
        return 1 + max(map(_depth, value), default=0)
    return 0


class _Map(Mapping):
    def __init__(self, data: dict) -> None:
        self.data = data

    def __getitem__(self, key: str) -> object:
        return self.data[key]

    def __iter__(self):
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


_NESTED = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
                       lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                                               st.dictionaries(st.text(max_size=2), inner, max_size=3),
                                               st.dictionaries(st.text(max_size=2), inner, max_size=2).map(_Map)),
                       max_leaves=20)


@settings(max_examples=examples(1000, local=200), deadline=None)
@given(_NESTED, st.integers(0, 6))
def test_depth_matches_the_recursive_count(value: object, limit: int) -> None:
    assert json_depth_exceeds(value, limit) == (_depth(value) > limit)
    assert is_mapping(value) == isinstance(value, Mapping)


@settings(max_examples=examples(500, local=100), deadline=None)
@given(_SCHEMAS, st.integers(0, 70), st.sampled_from(["not", "items", "allOf"]))
def test_the_text_s_bracket_count_only_skips_walks_that_find_nothing(schema: object, wraps: int, key: str) -> None:
    """The catalog passes the count of ``{`` and ``[`` in the schema's JSON text (strings' brackets
    included: it only over-counts): the verdict is the one without it, deep schemas and shallow alike."""
    import json

    for _ in range(wraps):
        schema = {key: [schema] if key == "allOf" else schema}
    text = json.dumps(schema)
    assert schema_problem(schema, meta=False, openers=text.count("{") + text.count("[")) == \
        schema_problem(schema, meta=False)
