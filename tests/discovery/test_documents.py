"""The hardened document reader: what it refuses, where it says so, and what it leaves alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc.documents import (
    ALIAS_FLOOR,
    MAX_DEPTH,
    load_document,
    loads_json,
    parse_document,
    parse_json,
    parse_jsonl,
    parse_yaml,
)
from tooldisc.errors import ConfigError, DataError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "where", "message"), [
    ('{"a": 1,\n "b": {"c": 2, "c": 3}}', "line 2 column 7", "duplicate key 'c'"),
    ('{"tools": [{"side_effect": "delete", "side_effect": "none"}]}', "line 1 column 12", "duplicate key 'side_effect'"),
    ('{"a": [1, NaN]}', "line 1 column 7", "NaN is not a JSON number"),
    ('{"a": Infinity}', "line 1 column 1", "Infinity is not a JSON number"),
    ('[-Infinity]', "line 1 column 1", "-Infinity is not a JSON number"),
    ('{"a": {"b": 1e999}}', "line 1 column 7", "number 1e999 is out of range"),
    ('{"a": "x\\ud800"}', "line 1 column 9", "lone UTF-16 surrogate"),
    ('{"a": "\\udc00"}', "line 1 column 8", "lone UTF-16 surrogate"),
    ('{"n": ' + "7" * 5000 + "}", "line 1 column 7", "more than 4300 digits"),
])
def test_json_refusals_name_the_place(text: str, where: str, message: str) -> None:
    with pytest.raises(DataError) as err:
        parse_json(text, "f.json")
    assert err.value.where == where and message in err.value.message
    assert str(err.value).startswith(f"f.json: {where}: ")


def test_json_depth_is_bounded_at_max_depth() -> None:
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for n in (MAX_DEPTH + 1, 5000, 200_000):  # the last one is past Python's own recursion limit
        with pytest.raises(DataError, match=f"nested deeper than {MAX_DEPTH} levels"):
            loads_json("[" * n + "]" * n, "d.json")


def test_json_syntax_errors_stay_json_errors_for_callers_to_word() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads_json('{"a": }')
    with pytest.raises(DataError, match=r"line 1 column 7: invalid JSON: Expecting value"):
        parse_json('{"a": }', "x.json")


def test_paired_surrogates_and_plain_documents_load_unchanged() -> None:
    assert loads_json('{"e": "\\ud83d\\ude00"}') == {"e": "😀"}
    gold = (ROOT / "gold" / "data" / "gold.json").read_text(encoding="utf-8")
    assert loads_json(gold) == json.loads(gold)


def test_jsonl_names_the_line() -> None:
    with pytest.raises(DataError) as err:
        parse_jsonl('{"a": 1}\n\n{"a": 1, "a": 2}\n', "t.jsonl")
    assert err.value.where == "line 3 column 1" and "duplicate key 'a'" in err.value.message
    with pytest.raises(DataError, match=r"line 2 column 106: nested deeper"):
        parse_jsonl('{"a": 1}\n{"a": ' + "[" * 200 + "]" * 200 + "}\n", "t.jsonl")


@pytest.mark.parametrize(("text", "where", "message"), [
    ("a: 1\nb: 2\na: 3\n", "line 3 column 1", "duplicate key 'a' (first at line 1 column 1)"),
    ("x: {k: 1, 'k': 2}\n", "line 1 column 11", "duplicate key 'k'"),
    ("a: .nan\n", "line 1 column 4", "'.nan' is not a finite number"),
    ("a: [-.Inf]\n", "line 1 column 5", "'-.Inf' is not a finite number"),
    ("1: one\n", "line 1 column 1", "mapping keys must be strings (as in JSON); got '1'"),
    ("true: yes\n", "line 1 column 1", "mapping keys must be strings"),
    ("? [a, b]\n: c\n", "line 1 column 3", "mapping keys must be strings (as in JSON); got a collection"),
    ("a: !!binary aGVsbG8=\n", "line 1 column 4", "YAML type 'binary' has no JSON equivalent"),
    ("a: !!set {x}\n", "line 1 column 4", "YAML type 'set' has no JSON equivalent"),
    ("a: !!omap [{x: 1}]\n", "line 1 column 4", "YAML type 'omap' has no JSON equivalent"),
    # an alias is the anchored node itself, so the place named is the anchor's
    ("a: &x [1, *x]\n", "line 1 column 4", "a YAML alias refers to a node that contains it"),
    ("a: &x {b: [c, {d: *x}]}\n", "line 1 column 4", "a YAML alias refers to a node that contains it"),
    ("n: " + "9" * 5000 + "\n", "line 1 column 4", "is too long"),
    ("a: !!python/name:os.system\n", "line 1 column 4", "invalid YAML: could not determine a constructor"),
    ("a: 1\n---\nb: 2\n", "line 2 column 1", "invalid YAML: but found another document"),
])
def test_yaml_refusals_name_the_place(text: str, where: str, message: str) -> None:
    with pytest.raises(DataError) as err:
        parse_yaml(text, "f.yaml")
    assert err.value.where == where, err.value
    assert message in err.value.message


def test_yaml_depth_is_bounded_at_max_depth_in_flow_and_block_style() -> None:
    assert parse_yaml("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1), None) is not None
    with pytest.raises(DataError, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse_yaml("a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH, None)
    block = "".join("  " * i + "- \n" for i in range(MAX_DEPTH + 5)) + "  " * (MAX_DEPTH + 5) + "- x\n"
    with pytest.raises(DataError, match="nested deeper"):
        parse_yaml(block, None)


def test_an_alias_that_is_shallow_but_expands_deep_is_measured_expanded() -> None:
    levels = ["l0: &l0 [x]"] + [f"l{i}: &l{i} [*l{i - 1}]" for i in range(1, MAX_DEPTH + 2)]
    with pytest.raises(DataError, match="nested deeper"):
        parse_yaml("\n".join(levels) + "\n", None)


def test_a_billion_laughs_is_refused_before_it_expands() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(8)]
    start = time.perf_counter()
    with pytest.raises(DataError, match=r"YAML aliases expand \d+ nodes written to \d{9}; the limit is"):
        parse_yaml("\n".join(lines) + "\n", "bomb.yaml")
    assert time.perf_counter() - start < 2.0


def test_shared_anchors_and_merge_keys_still_load() -> None:
    shared = "common: &c {type: object, properties: {id: {type: string}}}\n" + "".join(
        f"t{i}: *c\n" for i in range(2000))
    data = parse_yaml(shared, None)
    assert data["t1999"] == data["common"]
    assert ALIAS_FLOOR > 2000 * 5  # well inside the floor: sharing is not a bomb
    merged = parse_yaml("base: &b {x: 1, y: 2}\nt: {<<: *b, x: 3}\n", None)
    assert merged["t"] == {"x": 3, "y": 2}  # a merge key may be overridden, as YAML intends


def test_yaml_reads_what_json_can_say() -> None:
    data = parse_yaml("released: 2026-01-01\nat: 2026-01-01T10:00:00Z\nn: 1.5\nok: true\nnone: null\n", None)
    assert data == {"released": "2026-01-01", "at": "2026-01-01T10:00:00Z", "n": 1.5, "ok": True, "none": None}


def test_shipped_yaml_loads_exactly_as_the_plain_safe_loader_reads_it() -> None:
    for rel in ("gold/data/catalog.yaml", "gold/data/devops/catalog.yaml", "discovery/data/default.yaml",
                "discovery/data/mutation.yaml", "canary/data/gates.yaml"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert parse_yaml(text, rel) == yaml.safe_load(text), rel


def test_the_caller_chooses_the_error_class(tmp_path: Path) -> None:
    doc = tmp_path / "c.yaml"
    doc.write_text("mode: analyzer\nmode: autonomous\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="duplicate key 'mode'"):
        load_document(doc, max_bytes=1024, error=ConfigError)
    with pytest.raises(ConfigError, match="over the limit of 10"):
        load_document(doc, max_bytes=10, error=ConfigError)


def test_unknown_extensions_try_json_then_yaml_without_hiding_json_refusals() -> None:
    assert parse_document("a: 1\n", "x.conf") == {"a": 1}
    with pytest.raises(DataError, match="duplicate key 'a'"):
        parse_document('{"a": 1, "a": 2}', "x.conf")


_SCALARS = ["yes", "No", "on", "OFF", "y", "n", "true", "False", "null", "Null", "~", "", "0", "-0", "+12", "0x1F",
            "0o17", "017", "1_000", "1:30", "1e3", "1.5e-3", ".inf", "-.Inf", ".nan", ".NaN", "2001-12-14",
            "2001-12-14t21:59:43.10-05:00", "<<", "=", "type", "string", "object", "12abc", "1.2.3", "-", "+", "."]


@settings(max_examples=examples(500, local=100), deadline=None)
@given(st.lists(st.tuples(st.one_of(st.sampled_from(_SCALARS), st.text(max_size=80)),
                          st.tuples(st.booleans(), st.booleans())), min_size=1, max_size=30))
def test_a_kept_tag_is_the_resolver_s_tag(calls: list[tuple[str, tuple[bool, bool]]]) -> None:
    """The strict loader keeps each short plain scalar's tag: asked again, in any order, it answers what
    PyYAML's resolver answers (the oracle), for every kind of node."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode
    from yaml.resolver import Resolver

    from tooldisc.documents import _strict_loader

    loader = _strict_loader(DataError)("")
    oracle = Resolver()
    for value, implicit in calls + calls[::-1]:
        assert loader.resolve(ScalarNode, value, implicit) == oracle.resolve(ScalarNode, value, implicit)
    assert loader.resolve(SequenceNode, None, (False, False)) == oracle.resolve(SequenceNode, None, (False, False))
    assert loader.resolve(MappingNode, None, (False, False)) == oracle.resolve(MappingNode, None, (False, False))
    loader.dispose()


def test_a_document_of_repeated_scalars_reads_as_pyyaml_reads_it() -> None:
    """Kept tags change nothing a document reads as (PyYAML's safe loader is the oracle; the strict loader's
    own refusals and timestamps-as-text left out)."""
    own = {".inf", "-.Inf", ".nan", ".NaN", "<<", "=", "", "2001-12-14", "2001-12-14t21:59:43.10-05:00"}
    values = [v for v in _SCALARS if v not in own] * 3
    text = "".join(f"- {{a: {v}, b: [{v}, '{v}'], c: {v}}}\n" for v in values)
    assert parse_yaml(text, "x.yaml") == yaml.load(text, Loader=yaml.SafeLoader)
