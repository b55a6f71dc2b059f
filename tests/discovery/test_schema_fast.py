"""The compiled validator decides exactly as jsonschema does: a differential test with jsonschema as the oracle.

Every check runs twice — as shipped (jsonschema-rs answers "valid" first) and with the compiled
validator switched off (jsonschema alone, the reference) — over the hostile corpus, the shipped
and shared benchmark catalogs, and generated schemas and argument sets (hypothesis; counts from
tests/fuzzing.py: 5,000 under CI).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc.discovery.catalog import (
    check_catalog,
    schema_check,
    schema_fast,
    validate_catalog_data,
)
from tooldisc.discovery.catalog.io import read_catalog_document
from tooldisc.discovery.catalog.schema_check import schema_problem, validate

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


class _Reference:
    """Switches the compiled validator off (jsonschema alone decides) for the duration of a ``with``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.monkeypatch = monkeypatch

    def __enter__(self) -> None:
        self.undo = pytest.MonkeyPatch()
        self.undo.setattr(schema_fast, "meta_valid", lambda schema: False)
        self.undo.setattr(schema_fast, "catalog_validators", lambda text: None)
        self.undo.setattr(schema_fast, "argument_validator", lambda text: None)
        schema_check._prepared_text.cache_clear()

    def __exit__(self, *exc: object) -> None:
        self.undo.undo()
        schema_check._prepared_text.cache_clear()


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> _Reference:
    return _Reference(monkeypatch)


def _catalog_files() -> list[Path]:
    files = sorted((BAD / "catalogs").glob("*")) + sorted((BAD / "schemas").glob("*"))
    files += [ROOT / "gold" / "data" / "catalog.yaml", ROOT / "gold" / "data" / "devops" / "catalog.yaml",
              ROOT / "agent" / "data" / "scenarios" / "catalog.yaml", ROOT / "tests" / "cli" / "data" / "ok_catalog.yaml"]
    return [p for p in files if p.is_file()]


def _documents(paths: list[Path]) -> list[tuple[str, object]]:
    out = []
    for path in paths:
        try:
            doc, _ = read_catalog_document(path, side_effect="none" if path.suffix == ".jsonl" else None)
        except ValueError:
            continue  # refused before validation: nothing of this change's is involved
        out.append((path.name, doc))
    return out


def _verdicts(doc: object) -> tuple[object, ...]:
    issues, catalog = check_catalog(doc, plain=True)
    tools = None if catalog is None else [(t.name, t.definition_hash, t.quarantine) for t in catalog.tools]
    return [(i.level, i.path, i.message) for i in issues], tools, catalog.hash if catalog else None


def _same_catalog_decisions(docs: list[tuple[str, object]], reference: _Reference) -> None:
    for name, doc in docs:
        fast = _verdicts(doc)
        assert [(i.level, i.path, i.message) for i in validate_catalog_data(doc)] == fast[0], name
        with reference:
            slow = _verdicts(doc)
        assert fast == slow, name


def test_hostile_corpus_and_shipped_catalogs_decide_alike(reference: _Reference) -> None:
    docs = _documents(_catalog_files())
    assert len(docs) > 40
    _same_catalog_decisions(docs, reference)


@pytest.mark.shared
def test_shared_benchmark_catalogs_decide_alike(shared: Path, reference: _Reference) -> None:
    files = sorted((shared / "benchmarks").glob("*/catalog.json")) + sorted((shared / "benchmarks").glob("*/tools.jsonl"))
    docs = _documents(files)
    assert len(docs) >= 4
    _same_catalog_decisions(docs, reference)


def test_loaded_documents_are_plain_json() -> None:
    """What the loaders pass as plain (``plain=True``) survives a JSON round trip: the importers too."""
    for name, doc in _documents(_catalog_files()):
        assert schema_fast.is_plain(doc), name


# --------------------------------------------------------------------------- generated

_NAMES = ("a", "b", "c")
_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")
_numbers = st.one_of(st.integers(-5, 5), st.sampled_from([0.5, 1.0, -2.5, 0.1, 1e300, 3.0]))
_scalars = st.one_of(st.none(), st.booleans(), _numbers, st.text(alphabet="ab1٣ -", max_size=4))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from((*_NAMES, "d")), inner, max_size=3)), max_leaves=8)


def _keyword(sub: st.SearchStrategy) -> st.SearchStrategy:
    """One keyword and its value: mostly well formed, sometimes not (for the meta-schema check)."""
    count = st.integers(0, 3)
    return st.one_of(
        st.tuples(st.just("type"), st.one_of(st.sampled_from(_TYPES), st.lists(st.sampled_from(_TYPES), max_size=3),
                                             st.just(5))),
        st.tuples(st.just("enum"), st.lists(_values, max_size=3)),
        st.tuples(st.just("const"), _values),
        st.tuples(st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]), _numbers),
        st.tuples(st.sampled_from(["minLength", "maxLength", "minItems", "maxItems", "minProperties",
                                   "maxProperties", "minContains", "maxContains"]),
                  st.one_of(count, st.just(-1), st.just(1.5), st.just(2.0))),
        st.tuples(st.just("multipleOf"), st.sampled_from([2, 0.1, 0.5, 3, 0])),
        st.tuples(st.just("uniqueItems"), st.one_of(st.booleans(), st.just(1))),
        st.tuples(st.just("required"), st.one_of(st.lists(st.sampled_from(_NAMES), max_size=3), st.just("a"))),
        st.tuples(st.just("properties"), st.dictionaries(st.sampled_from(_NAMES), sub, max_size=3)),
        st.tuples(st.just("patternProperties"), st.dictionaries(st.sampled_from(["^a", "b$", "\\d"]), sub, max_size=2)),
        st.tuples(st.just("pattern"), st.sampled_from(["^a", "\\d", "[ab]+$", "^$"])),
        st.tuples(st.sampled_from(["additionalProperties", "items", "contains", "not", "if", "then", "else",
                                   "propertyNames", "unevaluatedItems", "unevaluatedProperties"]), sub),
        st.tuples(st.sampled_from(["allOf", "anyOf", "oneOf", "prefixItems"]), st.lists(sub, min_size=0, max_size=2)),
        st.tuples(st.just("dependentRequired"), st.dictionaries(st.sampled_from(_NAMES),
                                                                st.lists(st.sampled_from(_NAMES), max_size=2), max_size=2)),
        st.tuples(st.just("dependentSchemas"), st.dictionaries(st.sampled_from(_NAMES), sub, max_size=2)),
        st.tuples(st.just("format"), st.sampled_from(["date", "email", "uri", "nonsense"])),
        st.tuples(st.just("$ref"), st.sampled_from(["#/$defs/x", "#"])),
        st.tuples(st.sampled_from(["$comment", "description", "title", "default", "dependencies"]), _values),
    )


def _schema(sub: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.booleans(), st.lists(_keyword(sub), max_size=4).map(dict))


_schemas = st.recursive(st.one_of(st.booleans(), st.just({})), _schema, max_leaves=10)


@st.composite
def schema_and_arguments(draw: st.DrawFn) -> tuple[object, list[object]]:
    schema = draw(_schemas)
    if isinstance(schema, dict) and draw(st.booleans()):
        schema = {**schema, "$defs": {"x": draw(_schemas)}}
    instances = draw(st.lists(st.one_of(_values, st.dictionaries(st.sampled_from(_NAMES), _values, max_size=3)),
                              min_size=1, max_size=4))
    return schema, instances


def _is_finite(value: object) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


@pytest.mark.fuzz
@settings(max_examples=examples(5000, local=500), deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(schema_and_arguments())
def test_generated_schemas_and_arguments_decide_alike(case: tuple[object, list[object]]) -> None:
    schema, instances = case
    # the static check (meta-schema included), as the catalog quarantines
    meta_fast = schema_problem(schema, plain=True)
    with _Reference(pytest.MonkeyPatch()):
        meta_slow = schema_problem(schema, plain=True)
        slow = [validate(schema, i) for i in instances]
    assert meta_fast == meta_slow
    # the guard's accept/refuse (and its words: jsonschema writes them either way)
    fast = [validate(schema, i) for i in instances]
    assert fast == slow
    # the compiled validator's "valid" never contradicts jsonschema where it is used
    if isinstance(schema, dict) and meta_fast is None:
        text = json.dumps({k: v for k, v in schema.items() if k not in ("$schema", "$id")})
        compiled = schema_fast.argument_validator(text)
        if compiled is not None:
            reference = jsonschema.Draft202012Validator(json.loads(text))
            for instance in instances:
                if schema_fast.valid(compiled, instance):
                    assert reference.is_valid(instance), (schema, instance)


def test_patterns_and_multiple_of_never_reach_the_compiled_validator() -> None:
    """RE2's semantics and the ReDoS guarantee: a schema with a pattern is judged by jsonschema with RE2."""
    for schema in ({"properties": {"s": {"pattern": "^(a+)+$"}}}, {"patternProperties": {"^x": {}}},
                   {"properties": {"n": {"multipleOf": 0.1}}}):
        assert schema_fast.argument_validator(json.dumps(schema)) is None
    evil = validate({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}},
                    {"s": "a" * 40 + "!"})
    assert not evil.ok and evil.violations[0].path == ("s",)  # RE2 answers at once
    assert not validate({"properties": {"d": {"pattern": "^\\d+$"}}}, {"d": "١٢٣"}).ok  # \d is ASCII in RE2
    assert not validate({"properties": {"x": {"multipleOf": 0.1}}}, {"x": 0.3}).ok  # as jsonschema divides


def test_values_jsonschema_reads_differently_take_its_path() -> None:
    """Tuples are not arrays to jsonschema; such a value never reaches the compiled validator."""
    assert not schema_fast.is_plain({"required": ("a",)})
    assert schema_problem({"type": "object", "required": ("a",)}) is not None  # jsonschema: not an array
    assert validate({"type": "object", "properties": {"a": {"type": "array"}}}, {"a": (1,)}).violations
    assert schema_fast.is_plain({"a": [1, 2.5, None, True, "x"]})
    assert not schema_fast.is_plain({1: "a"}) and not schema_fast.is_plain({"a": float("nan")})


def test_the_meta_schema_is_the_one_jsonschema_checks_against() -> None:
    """Read from the file without importing its registry, it is still jsonschema's own META_SCHEMA."""
    assert schema_fast.meta_schema() == jsonschema.Draft202012Validator.META_SCHEMA
