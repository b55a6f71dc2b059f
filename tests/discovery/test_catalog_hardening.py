"""Catalog rules from issue 10 through the Python API: one format, reserved and printable names,
compact schemas of the wrong shape (items 1, 6, 10, 12)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc.discovery.catalog import build_catalog, validate_catalog_data
from tooldisc.discovery.catalog.names import RESERVED_NAMES, NameMap, is_reserved, reserved_fold
from tooldisc.discovery.importers import detect_format, format_evidence, to_catalog_document
from tooldisc.errors import DataError

POLICY = {"name": "delete_invoice", "side_effect": "delete", "roles": ["owner"], "enabled": False}


@pytest.mark.parametrize(("doc", "where", "message"), [
    ({"tools": [{**POLICY, "annotations": {"destructiveHint": True}}]},
     "tools[0].annotations", "MCP field mixed with tooldisc fields (first: tools[0].side_effect)"),
    ({"tools": [{"name": "a", "inputSchema": {}}, {"name": "b", "roles": ["owner"]}]},
     "tools[1].roles", "tooldisc field mixed with MCP fields (first: tools[0].inputSchema)"),
    ({"tools": [{"name": "a", "input_schema": {}}, {"name": "b", "function": {"name": "b"}}]},
     "tools[1].function", "OpenAI field mixed with Anthropic fields"),
    ({"catalog_version": "1", "tools": [{"name": "a", "outputSchema": {}}]},
     "tools[0].outputSchema", "MCP field in a document read as tooldisc (its catalog_version)"),
    ([{"type": "function", "function": {"name": "x"}, "permissions": ["p"]}],
     "[0].permissions", "tooldisc field mixed with OpenAI fields"),
])
def test_a_document_mixing_formats_is_refused_naming_the_field(doc, where: str, message: str) -> None:
    with pytest.raises(DataError) as err:
        detect_format(doc, file="c.json")
    assert err.value.where == where and message in err.value.message


def test_a_declared_format_refuses_every_other_format_field() -> None:
    mcp = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    assert detect_format(mcp) == "mcp" == detect_format(mcp, declared="mcp")
    with pytest.raises(DataError, match=r"MCP field in a document read as tooldisc \(--catalog-format tooldisc\)"):
        detect_format(mcp, declared="tooldisc")
    with pytest.raises(DataError, match="tooldisc field in a document read as Anthropic"):
        detect_format({"tools": [POLICY]}, declared="anthropic")
    with pytest.raises(DataError, match="unknown catalog format 'gemini'"):
        detect_format(mcp, declared="gemini")


def test_evidence_is_in_file_order_and_ignores_shared_fields() -> None:
    doc = {"tools": [{"name": "a", "description": "d", "parameters": {}}, {"name": "b", "inputSchema": {}}]}
    assert format_evidence(doc) == [("mcp", "tools[1].inputSchema")]
    assert detect_format(doc) == "mcp"
    assert detect_format({"tools": [{"name": "a", "parameters": {}}]}) == "tooldisc"  # no evidence: the shape


def test_a_tools_jsonl_row_with_policy_is_refused() -> None:
    rows = [(1, {"name": "a"}), (2, {"name": "b", "tenant_required": True})]
    with pytest.raises(DataError, match=r"tooldisc field 'tenant_required' in a tools\.jsonl") as err:
        to_catalog_document(rows, "jsonl", file="t.jsonl")
    assert err.value.where == "line 2"


def test_the_meta_tool_name_is_reserved_and_never_issued() -> None:
    with pytest.raises(DataError, match="the name 'search_tools' is reserved"):
        build_catalog({"tools": [{"name": "search_tools", "side_effect": "none"}]})
    names = NameMap(["search.tools", "search-tools", "list_invoices"])
    issued = {names.to_provider(n) for n in names}
    assert not issued & RESERVED_NAMES
    assert names.to_provider("list_invoices") == "list_invoices" and names.from_provider("search_tools") is None
    with_meta = NameMap(["search.tools", "search_tools"])  # the agent adds the meta-tool itself
    assert with_meta.to_provider("search_tools") == "search_tools"
    assert with_meta.to_provider("search.tools").startswith("search_tools_")


@pytest.mark.parametrize(("field", "value", "code"), [
    ("name", "list\x1b[31m", "U+001B"), ("name", "a\nOK", "U+000A"), ("name", "abc\u202e", "U+202E"),
    ("name", "zero\u200bwidth", "U+200B"), ("namespace", "ns\x00", "U+0000"), ("replacement", "x\u2028", "U+2028"),
    ("roles", ["owner", "ad\x07min"], "U+0007"), ("permissions", ["p\x9b"], "U+009B"),
])
def test_identifiers_with_control_or_format_characters_are_errors(field: str, value, code: str) -> None:
    tool = {"name": "t", "side_effect": "none", field: value}
    issues = [i for i in validate_catalog_data({"tools": [tool]}) if i.level == "error"]
    assert len(issues) == 1 and issues[0].path.startswith(f"tools[0].{field}") and code in issues[0].message
    assert "\x1b" not in issues[0].message and "\n" not in issues[0].message


def test_persian_names_with_zwnj_stay_valid() -> None:
    cat = build_catalog({"tools": [{"name": "فاکتور‌ها", "side_effect": "none", "roles": ["حسابدار"]}]})
    assert cat.tools[0].name == "فاکتور‌ها"


@pytest.mark.parametrize("compact", [
    {"type": "object", "properties": ["amount"]},
    {"type": "object", "properties": {"amount": {}}, "required": "amount"},
])
def test_a_compact_schema_of_the_wrong_shape_is_an_error_not_a_crash(compact) -> None:
    tool = {"name": "pay", "side_effect": "write", "compact_parameters": compact,
            "parameters": {"type": "object", "properties": {"amount": {}}, "required": ["amount"]}}
    issues = validate_catalog_data({"tools": [tool]})
    assert [i.path.split(".")[1] for i in issues if i.level == "error"] == ["compact_parameters"]
    with pytest.raises(DataError, match="compact_parameters"):
        build_catalog({"tools": [tool]})


def test_full_schema_required_not_a_list_with_a_compact_schema_quarantines() -> None:
    tool = {"name": "pay", "side_effect": "write", "parameters": {"type": "object", "required": 7},
            "compact_parameters": {"type": "object"}}
    cat = build_catalog({"tools": [tool]})
    assert cat.tools[0].quarantine and "parameters" in cat.tools[0].quarantine


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=20)
       | st.sampled_from(["search_tools", "Search_Tools ", "\x1csearch_TOOLS\x1f", " search_tools\t", "search_tool"]))
@settings(max_examples=examples(2000), deadline=None)
def test_an_ascii_name_is_reserved_exactly_when_its_full_fold_says_so(name: str) -> None:
    """is_reserved's ASCII shortcut (lower, strip) decides as the full fold (NFKC, casefold, look-alikes) does."""
    assert is_reserved(name) == (reserved_fold(name) in {reserved_fold(n) for n in RESERVED_NAMES})
