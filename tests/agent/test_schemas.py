from __future__ import annotations

from dataclasses import replace

from tooldisc.agent.schemas import SchemaCache, load_schemas, offer_tokens, render_offer
from tooldisc.agent.search_tools import META_TOOL
from tooldisc.discovery.catalog import catalog_from_tools


def test_only_offered_tools_get_schemas(discoverer, catalog):
    offer = discoverer.discover("show invoices", k=3)
    schemas = load_schemas(offer, catalog)
    assert [s.name for s in schemas] == list(offer.names)
    assert offer_tokens(schemas) == sum(s.tokens for s in schemas) > 0


def test_cache_hits_by_name_and_version_and_rebuilds_stale(catalog):
    cache = SchemaCache()
    load_schemas(["get_invoice", "list_invoices"], catalog, cache)
    load_schemas(["get_invoice"], catalog, cache)
    assert (cache.stats.hits, cache.stats.misses) == (1, 2)
    # Same name and schema_version but a changed definition: rebuilt, never served stale.
    tool = catalog.by_name["get_invoice"]
    changed = replace(tool, parameters={"type": "object", "properties": {"x": {"type": "string"}}}, definition_hash="")
    cat2 = catalog_from_tools([changed])
    (s,) = load_schemas(["get_invoice"], cat2, cache)
    assert s.parameters["properties"] == {"x": {"type": "string"}}
    assert cache.stats.stale == 1


def test_cache_is_not_an_authorization_cache(catalog):
    cache = SchemaCache()
    load_schemas(["delete_invoice"], catalog, cache)
    # The tool leaves the catalog: a warm cache must not bring it back.
    smaller = catalog_from_tools([t for t in catalog.tools if t.name != "delete_invoice"])
    assert load_schemas(["delete_invoice"], smaller, cache) == ()


def test_compact_parameters_used_when_asked(catalog):
    tool = replace(catalog.by_name["get_invoice"], compact_parameters={"type": "object", "properties": {"id": {}},
                                                                        "required": ["id"]}, definition_hash="")
    cat = catalog_from_tools([tool])
    (full,) = load_schemas(["get_invoice"], cat)
    (compact,) = load_schemas(["get_invoice"], cat, compact=True)
    assert compact.parameters["properties"] == {"id": {}}
    assert compact.tokens < full.tokens


def test_render_providers_with_reversible_names(catalog):
    names = ["list_invoices", "crm::find&merge customers"]
    schemas = load_schemas(names, catalog)
    openai = render_offer(schemas, "openai", meta_tool=META_TOOL)
    provider_names = [t["function"]["name"] for t in openai.payload]
    assert provider_names[0] == "search_tools"
    assert all(n.replace("_", "").replace("-", "").isalnum() for n in provider_names)
    assert [openai.tool_for(n) for n in provider_names] == ["search_tools", *names]
    assert openai.tool_for("made_up") is None
    mcp = render_offer(schemas, "mcp")
    assert next(t["name"] for t in mcp.payload["tools"]) == "list_invoices"
    anth = render_offer(schemas, "anthropic", meta_tool=META_TOOL)
    assert "input_schema" in anth.payload[0]


def test_anthropic_deferred_loading_keeps_only_the_meta_tool_visible(catalog):
    schemas = load_schemas(["list_invoices", "get_invoice"], catalog)
    out = render_offer(schemas, "anthropic", meta_tool=META_TOOL, deferred=True)
    by_name = {t["name"]: t for t in out.payload}
    assert "defer_loading" not in by_name["search_tools"]
    assert by_name["list_invoices"]["defer_loading"] is True and by_name["get_invoice"]["defer_loading"] is True
    full = render_offer(schemas, "anthropic", meta_tool=META_TOOL)
    assert out.tokens < full.tokens  # deferred schemas are not loaded into context


def test_session_name_map_renders_the_meta_tool_too(discoverer, catalog):
    from tooldisc.agent.search_tools import ToolSession

    offer = discoverer.discover("show invoices")
    session = ToolSession(discoverer, discoverer.default_context, offer)
    out = render_offer(load_schemas(offer, catalog), "openai", meta_tool=META_TOOL, names=session.names)
    assert out.tool_for("search_tools") == "search_tools"
    assert [out.tool_for(t["function"]["name"]) for t in out.payload][1:] == list(offer.names)
