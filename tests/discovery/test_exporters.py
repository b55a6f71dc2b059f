"""Exporters and the reversible provider-name mapping; export → import round trips."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.discovery.catalog import build_catalog
from tooldisc.discovery.catalog.exporters import (
    ANTHROPIC_TOOL_SEARCH,
    input_schema,
    mcp_annotations,
    render,
    to_anthropic,
    to_mcp,
    to_openai,
)
from tooldisc.discovery.catalog.names import PROVIDER_NAME, NameMap, is_provider_safe
from tooldisc.discovery.importers import detect_format, to_catalog_document
from tooldisc.discovery.model import Tool
from tooldisc.errors import UsageError

FULL = {"type": "object", "properties": {"customer": {"type": "string"}, "note": {"type": "string"}},
        "required": ["customer"]}
COMPACT = {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]}

TOOLS = build_catalog({"catalog_version": "1", "tools": [
    {"name": "list_invoices", "description": "List invoices", "side_effect": "none", "parameters": {"type": "object"}},
    {"name": "sales.create_invoice", "description": "Create an invoice", "side_effect": "write",
     "parameters": FULL, "compact_parameters": COMPACT},
    {"name": "crm::contacts&delete", "description": "Delete a contact", "side_effect": "delete",
     "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}}},
    {"name": "گزارش_فروش", "description": "گزارش فروش ماهانه", "side_effect": "export"},
    {"name": "run." + "x" * 90, "description": "Run a long-named job", "side_effect": "execute",
     "parameters": {"type": "object"}},
    {"name": "mystery", "description": "No policy given", "parameters": {"type": "object"}},
]}).tools


# ----------------------------------------------------------------------------- NameMap

def test_safe_names_keep_themselves() -> None:
    m = NameMap(["get_user", "list-items", "A1"])
    assert [m.to_provider(n) for n in ("get_user", "list-items", "A1")] == ["get_user", "list-items", "A1"]
    assert m.renamed == {}


def test_unsafe_names_become_safe_and_map_back() -> None:
    names = [t.name for t in TOOLS]
    m = NameMap(names)
    for name in names:
        safe = m.to_provider(name)
        assert PROVIDER_NAME.fullmatch(safe), safe
        assert m.from_provider(safe) == name
    assert m.to_provider("sales.create_invoice") == "sales_create_invoice"
    assert m.to_provider("crm::contacts&delete") == "crm__contacts_delete"
    assert len(m.to_provider("run." + "x" * 90)) == 64


def test_collisions_get_a_hash_suffix() -> None:
    m = NameMap(["a.b", "a_b", "a:b"])
    assert m.to_provider("a_b") == "a_b"  # already safe: never displaced
    assert len({m.to_provider(n) for n in ("a.b", "a_b", "a:b")}) == 3
    assert m.to_provider("a.b").startswith("a_b_") and m.to_provider("a:b").startswith("a_b_")


def test_persian_names_get_a_neutral_stem() -> None:
    m = NameMap(["حذف", "ثبت"])
    assert all(m.to_provider(n).startswith("tool_") for n in ("حذف", "ثبت"))
    assert m.to_provider("حذف") != m.to_provider("ثبت")


def test_mapping_is_deterministic_and_order_free() -> None:
    names = [t.name for t in TOOLS] + ["a.b", "a_b"]
    assert NameMap(names).to_dict() == NameMap(reversed(names)).to_dict()


def test_unknown_names() -> None:
    m = NameMap(["a.b"])
    assert m.from_provider("a.b") is None  # only names the map issued map back
    assert m.from_provider("anything") is None
    with pytest.raises(KeyError):
        m.to_provider("not_in_map")


@settings(max_examples=150, deadline=None)
@given(st.sets(st.text(min_size=1, max_size=120), min_size=1, max_size=25))
def test_name_map_properties(names: set[str]) -> None:
    m = NameMap(names)
    safes = [m.to_provider(n) for n in names]
    assert len(set(safes)) == len(names)
    assert all(is_provider_safe(s) for s in safes)
    assert all(m.from_provider(m.to_provider(n)) == n for n in names)


# ----------------------------------------------------------------------------- renderers

def test_input_schema_choice() -> None:
    by = {t.name: t for t in TOOLS}
    invoice = by["sales.create_invoice"]
    assert input_schema(invoice) == FULL
    assert input_schema(invoice, compact=True) == COMPACT
    assert input_schema(by["list_invoices"], compact=True) == {"type": "object"}  # no compact: full
    assert input_schema(by["گزارش_فروش"]) == {"type": "object"}  # no parameters at all


def test_rendering_copies_schemas() -> None:
    out = to_openai(TOOLS)
    out[1]["function"]["parameters"]["properties"].clear()
    assert TOOLS[1].parameters["properties"]


def test_openai_shape() -> None:
    out = to_openai(TOOLS, compact=True)
    assert out[1] == {"type": "function", "function": {
        "name": "sales_create_invoice", "description": "Create an invoice", "parameters": COMPACT}}
    assert all(set(e) == {"type", "function"} for e in out)


def test_anthropic_shape() -> None:
    out = to_anthropic(TOOLS)
    assert out[0] == {"name": "list_invoices", "description": "List invoices", "input_schema": {"type": "object"}}
    assert not any("defer_loading" in e for e in out)


def test_anthropic_deferred_loading() -> None:
    out = to_anthropic(TOOLS, full={"list_invoices", "sales.create_invoice"})
    assert out[0] == ANTHROPIC_TOOL_SEARCH["bm25"]
    tools = out[1:]
    assert len(tools) == len(TOOLS)
    deferred = {e["name"] for e in tools if e.get("defer_loading") is True}
    assert deferred == {NameMap(t.name for t in TOOLS).to_provider(t.name) for t in TOOLS[2:]}
    assert to_anthropic(TOOLS, full={"list_invoices"}, tool_search="regex")[0]["type"] == "tool_search_tool_regex_20251119"
    assert all("type" not in e for e in to_anthropic(TOOLS, full={"list_invoices"}, tool_search=None))
    # Nothing deferred: no search tool either.
    assert to_anthropic(TOOLS, full={t.name for t in TOOLS}) == to_anthropic(TOOLS)
    with pytest.raises(UsageError, match="tool_search must be one of"):
        to_anthropic(TOOLS, full=(), tool_search="fuzzy")


@pytest.mark.parametrize(("side_effect", "expected"), [
    ("none", {"readOnlyHint": True}),
    ("write", {"readOnlyHint": False}),
    ("export", {"readOnlyHint": False}),
    ("execute", {"readOnlyHint": False}),
    ("delete", {"readOnlyHint": False, "destructiveHint": True}),
    (None, {"readOnlyHint": False}),
])
def test_mcp_annotations(side_effect, expected) -> None:
    assert mcp_annotations(side_effect) == expected


def test_mcp_shape() -> None:
    out = to_mcp(TOOLS)
    assert set(out) == {"tools"}
    assert out["tools"][2] == {"name": "crm__contacts_delete", "description": "Delete a contact",
                               "inputSchema": TOOLS[2].parameters,
                               "annotations": {"readOnlyHint": False, "destructiveHint": True}}


def test_render_dispatch() -> None:
    assert render(TOOLS, "openai") == to_openai(TOOLS)
    assert render(TOOLS, "mcp", compact=True) == to_mcp(TOOLS, compact=True)
    with pytest.raises(UsageError, match=r"The 'provider' parameter must be one of openai, anthropic, mcp\. Got 'gemini'"):
        render(TOOLS, "gemini")


def test_a_shared_name_map_is_used() -> None:
    m = NameMap([t.name for t in TOOLS] + ["sales_create_invoice"])
    names = [e["function"]["name"] for e in to_openai(TOOLS, names=m)]
    assert names[1] != "sales_create_invoice"  # the safe name is taken by another tool of the map
    assert m.from_provider(names[1]) == "sales.create_invoice"


# ----------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("provider", ["openai", "anthropic", "mcp"])
def test_export_then_import_gives_back_names_descriptions_and_parameters(provider: str) -> None:
    names = NameMap(t.name for t in TOOLS)
    exported = copy.deepcopy(render(TOOLS, provider, names=names))
    assert detect_format(exported) == provider
    back = build_catalog(to_catalog_document(exported, provider)).tools
    assert [names.from_provider(t.name) for t in back] == [t.name for t in TOOLS]
    assert [t.description for t in back] == [t.description for t in TOOLS]
    assert [t.parameters for t in back] == [t.parameters if t.parameters is not None else {"type": "object"}
                                            for t in TOOLS]


def test_mcp_round_trip_keeps_only_safe_side_effects() -> None:
    back = build_catalog(to_catalog_document(to_mcp(TOOLS), "mcp")).tools
    assert [t.side_effect for t in back] == ["none", None, "delete", None, None, None]


def test_safe_names_round_trip_unchanged() -> None:
    tools = [Tool(name="get_weather", description="Weather", parameters=FULL, side_effect="none")]
    for provider in ("openai", "anthropic", "mcp"):
        back = build_catalog(to_catalog_document(render(tools, provider), provider)).tools
        assert (back[0].name, back[0].description, back[0].parameters) == ("get_weather", "Weather", FULL)


def test_every_exported_input_schema_is_an_object_schema():
    """A schema without a root type is read as an object schema; one whose type is not 'object' is refused."""
    from tooldisc.errors import DataError

    untyped = Tool("get_invoice", "Show one", parameters={"properties": {"id": {"type": "integer"}}},
                   compact_parameters={"properties": {}}, side_effect="none")
    assert input_schema(untyped) == {"type": "object", "properties": {"id": {"type": "integer"}}}
    assert input_schema(untyped, compact=True) == {"type": "object", "properties": {}}
    assert untyped.parameters == {"properties": {"id": {"type": "integer"}}}  # the tool itself is unchanged
    for provider in ("openai", "anthropic", "mcp"):
        payload = render([untyped], provider)
        entry = payload["tools"][0] if provider == "mcp" else payload[0]
        schema = entry["function"]["parameters"] if provider == "openai" else entry.get("inputSchema",
                                                                                         entry.get("input_schema"))
        assert schema["type"] == "object"
    for bad in ("string", ["object", "null"]):
        with pytest.raises(DataError, match=r"parameters\.type must be 'object'"):
            input_schema(Tool("odd", parameters={"type": bad}, side_effect="none"))
