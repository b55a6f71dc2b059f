"""Catalog parsing, validation and hashing (DESIGN §3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tooldisc.discovery.catalog import (
    build_catalog,
    canonical_json,
    catalog_to_dict,
    validate_catalog_data,
)
from tooldisc.discovery.catalog.io import load_catalog
from tooldisc.errors import DataError


def _doc(*tools: dict[str, Any], version: str = "1") -> dict[str, Any]:
    return {"catalog_version": version, "tools": list(tools)}


INVOICE = {
    "name": "financial.create_invoice",
    "description": "Create a sales invoice. ساخت فاکتور فروش",
    "side_effect": "write",
    "roles": ["accountant"],
    "parameters": {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]},
}
LIST = {"name": "list_invoices", "description": "List invoices", "side_effect": "none",
        "parameters": {"type": "object"}}


def _issues(doc: Any, level: str) -> list[tuple[str, str]]:
    return [(i.path, i.message) for i in validate_catalog_data(doc) if i.level == level]


def test_defaults_are_filled() -> None:
    tool = build_catalog(_doc({"name": "t", "side_effect": "none", "parameters": {"type": "object"}})).tools[0]
    assert tool.enabled is True
    assert (tool.deprecated, tool.tenant_required, tool.requires_approval, tool.always_confirm, tool.is_core) == (
        False, False, False, False, False)
    assert tool.schema_version == "1"
    assert tool.roles == tool.permissions == tool.aliases == tool.domains == ()
    assert tool.description == ""
    assert tool.risk_level is None and tool.capability is None and tool.compact_parameters is None


def test_equal_strings_and_lists_of_a_catalog_are_one_object() -> None:
    """A parsed document holds a new object per occurrence; the records share equal values
    (memory at 100,000 tools), and the records and hashes are what each tool alone gives."""
    raw = [dict(INVOICE, name=f"t{i}", roles=["accountant", "auditor"], domains=["sales"], namespace="fin",
                keywords=["invoice", f"k{i}"]) for i in range(3)]
    doc = json.loads(json.dumps(_doc(*raw)))  # as a file gives it: equal values, distinct objects
    assert doc["tools"][0]["roles"][0] is not doc["tools"][1]["roles"][0]
    tools = build_catalog(doc).tools
    assert tools[0].roles is tools[1].roles is tools[2].roles
    assert tools[0].domains is tools[2].domains and tools[0].namespace is tools[2].namespace
    assert tools[0].keywords[0] is tools[1].keywords[0] and tools[0].keywords != tools[1].keywords
    alone = [build_catalog(json.loads(json.dumps(_doc(r)))).tools[0] for r in raw]
    assert list(tools) == alone
    assert [t.definition_hash for t in tools] == [t.definition_hash for t in alone]


def test_explicit_null_equals_absent() -> None:
    a = build_catalog(_doc({"name": "t", "side_effect": "none"}))
    b = build_catalog(_doc({"name": "t", "side_effect": "none", "enabled": None, "roles": None,
                            "schema_version": None, "description": None}))
    assert a.tools[0].definition_hash == b.tools[0].definition_hash
    assert a.hash == b.hash


def test_yaml_and_json_of_the_same_content_hash_alike(tmp_path: Path) -> None:
    doc = _doc(INVOICE, LIST)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps(doc, ensure_ascii=False, indent=4), encoding="utf-8")
    y, j = load_catalog(tmp_path / "c.yaml"), load_catalog(tmp_path / "c.json")
    assert [t.definition_hash for t in y.tools] == [t.definition_hash for t in j.tools]
    assert y.hash == j.hash
    assert len(y.hash) == 64


def test_hashes_do_not_depend_on_tool_order() -> None:
    a = build_catalog(_doc(INVOICE, LIST))
    b = build_catalog(_doc(LIST, INVOICE))
    assert a.hash == b.hash
    assert a.by_name["list_invoices"].definition_hash == b.by_name["list_invoices"].definition_hash


def test_hash_changes_with_content_and_version() -> None:
    base = build_catalog(_doc(INVOICE, LIST))
    assert build_catalog(_doc(INVOICE, {**LIST, "side_effect": "write"})).hash != base.hash
    assert build_catalog(_doc(INVOICE, LIST, version="2")).hash != base.hash


def test_canonical_json_keeps_utf8_and_sorts_keys() -> None:
    assert canonical_json({"b": 1, "a": "فاکتور"}) == '{"a":"فاکتور","b":1}'


def test_definition_hash_is_sha256_of_canonical_record() -> None:
    import hashlib

    from tooldisc.discovery.catalog import tool_to_dict

    tool = build_catalog(_doc(INVOICE)).tools[0]
    expected = hashlib.sha256(canonical_json(tool_to_dict(tool)).encode("utf-8")).hexdigest()
    assert tool.definition_hash == expected


def test_duplicate_names_are_an_error_with_path() -> None:
    errors = _issues(_doc(LIST, INVOICE, LIST), "error")
    assert errors == [("tools[2].name", "duplicate tool name 'list_invoices' (first at tools[0])")]
    with pytest.raises(DataError, match="duplicate tool name"):
        build_catalog(_doc(LIST, LIST), source="c.yaml")


def test_invalid_parameters_quarantine_the_tool_only() -> None:
    bad = {"name": "broken", "side_effect": "none",
           "parameters": {"type": "object", "properties": {"x": {"type": "strnig"}}}}
    quarantined = _issues(_doc(LIST, bad), "quarantine")
    assert len(quarantined) == 1
    assert quarantined[0][0].startswith("tools[1].parameters.properties.x.type")
    catalog = build_catalog(_doc(LIST, bad))
    assert catalog.by_name["broken"].quarantine
    assert catalog.by_name["list_invoices"].quarantine is None


def test_quarantine_message_is_deterministic() -> None:
    """Several broken places: the reported one must not depend on set iteration order."""
    bad = {"name": "q", "parameters": {"type": "object", "properties": {
        "b": {"enum": {"$x": 1}}, "a": {"enum": {"$y": 2}}}}}
    first = _issues(_doc(bad), "quarantine")
    assert first[0][0] == "tools[0].parameters.properties.a.enum"


def test_compact_schema_dropping_a_required_field_is_an_error() -> None:
    tool = {**INVOICE, "compact_parameters": {"type": "object", "properties": {}}}
    assert _issues(_doc(tool), "error") == [
        ("tools[0].compact_parameters", "compact schema drops required field(s) customer")]
    keeps = {**INVOICE, "compact_parameters": {"type": "object", "properties": {"customer": {"type": "string"}}}}
    assert _issues(_doc(keeps), "error") == []


def test_unknown_side_effect_is_an_error_with_path() -> None:
    errors = _issues(_doc(LIST, {**LIST, "name": "x", "side_effect": "maybe"}), "error")
    assert errors == [("tools[1].side_effect",
                       "side_effect must be one of none, write, delete, export, execute or null; got 'maybe'")]


def test_missing_side_effect_loads_as_unknown() -> None:
    tool = build_catalog(_doc({"name": "t", "parameters": {"type": "object"}})).tools[0]
    assert tool.side_effect is None


def test_wrong_types_are_errors_with_path() -> None:
    errors = _issues(_doc({**LIST, "roles": "admin", "enabled": "yes"}), "error")
    paths = [p for p, _ in errors]
    assert paths == ["tools[0].enabled", "tools[0].roles"]


def test_absent_parameters_is_a_warning() -> None:
    warnings = _issues(_doc({"name": "t", "side_effect": "none"}), "warning")
    assert warnings == [("tools[0].parameters", "tool 't' has no parameters: any arguments will be accepted")]
    assert build_catalog(_doc({"name": "t", "side_effect": "none"})).tools[0].parameters is None


def test_unknown_field_is_an_error_naming_the_nearest_field() -> None:
    """Closed schema (issue 25): an unknown key was "ignored" with a warning; a misspelled policy key then left a tool open."""
    assert ("tools[0].Roles", "unknown field; did you mean 'roles'?") in _issues(_doc({**LIST, "Roles": ["x"]}), "error")
    assert _issues(_doc({**LIST, "colour": "red"}), "warning") == []
    assert [p for p, _ in _issues(_doc({**LIST, "colour": "red"}), "error")] == ["tools[0].colour"]


def test_root_must_be_an_object_with_tools() -> None:
    assert _issues([1, 2], "error")[0][0] == "(root)"
    assert _issues({"catalog_version": "1"}, "error") == [("(root)", "'tools' is a required property")]


def test_descriptions_are_stripped_of_control_and_bidi_characters_and_capped() -> None:
    evil = "Pay\u202e now\u0007 \u2066x\u2069" + "y" * 5000
    tool = build_catalog(_doc({**LIST, "description": evil, "aliases": ["a\u202eb"]})).tools[0]
    for ch in ("\u202e", "\u0007", "\u2066", "\u2069"):
        assert ch not in tool.description
        assert ch not in tool.aliases[0]
    assert tool.description.startswith("Pay")
    assert len(tool.description) <= 2000


def test_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_doc(INVOICE, LIST)), encoding="utf-8")
    with pytest.raises(DataError, match="over the limit of 100") as exc:
        load_catalog(path, max_bytes=100)
    assert str(path) in str(exc.value)


def test_catalog_to_dict_round_trips_to_the_same_hash() -> None:
    catalog = build_catalog(_doc(INVOICE, LIST))
    again = build_catalog(catalog_to_dict(catalog))
    assert again.hash == catalog.hash


def test_error_names_file_and_path() -> None:
    with pytest.raises(DataError) as exc:
        build_catalog(_doc({**LIST, "side_effect": "maybe"}), source="catalog.yaml")
    assert str(exc.value).startswith("catalog.yaml: tools[0].side_effect: side_effect must be one of")


@pytest.mark.shared
def test_shared_hesabix_catalog(shared: Path) -> None:
    catalog = load_catalog(shared / "benchmarks" / "hesabix" / "catalog.json")
    assert len(catalog) == 180
    quarantined = [t for t in catalog.tools if t.quarantine]
    assert [t.name for t in quarantined] == ["query_business_data"]
    assert "$unresolved_expr" in quarantined[0].quarantine
    assert catalog.version == "hesabix-180.phase4"
