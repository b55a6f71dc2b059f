from __future__ import annotations

import pytest

from tooldisc.agent.search_tools import (
    MAX_SCHEMAS_PER_CALL,
    META_TOOL_PARAMETERS,
    ToolSession,
    one_line,
)
from tooldisc.discovery.model import Context
from tooldisc.errors import UsageError

VIEWER = Context(tenant="t1", roles=frozenset({"viewer"}), permissions=frozenset(), mode="autonomous")


def test_meta_tool_schema_is_small_and_stable():
    assert META_TOOL_PARAMETERS["required"] == ["query"]
    assert set(META_TOOL_PARAMETERS["properties"]) == {"query", "capability", "domain", "limit"}
    assert META_TOOL_PARAMETERS["properties"]["limit"]["maximum"] == MAX_SCHEMAS_PER_CALL


def test_search_returns_only_authorized_tools_and_records_them(discoverer):
    offer = discoverer.discover("show invoices", VIEWER, k=1)
    session = ToolSession(discoverer, VIEWER, offer)
    found = session.search("invoice", limit=10)
    names = {h.name for h in found.hits}
    # Only read-only, enabled, known tools the viewer may see; n-gram similarity may add other reads.
    assert {"list_invoices", "get_invoice"} <= names
    assert names <= {"list_invoices", "get_invoice", "list_products", "crm::find&merge customers"}
    assert "create_invoice" not in names and "legacy_tool" not in names
    assert set(session.returned) == names
    assert set(found.new) == names - set(offer.names)
    assert all(session.mutation_for(n) == "READ" for n in names)


def test_model_search_text_cannot_widen_the_users_request(discoverer):
    ctx = Context(tenant="t1", roles=frozenset({"accountant"}), permissions=frozenset({"invoices.delete"}))
    offer = discoverer.discover("show invoices", ctx)
    session = ToolSession(discoverer, ctx, offer)
    found = session.search("delete invoice")  # the model asks for a destructive tool
    assert "delete_invoice" not in {h.name for h in found.hits}


def test_filters_apply_after_authorization(discoverer):
    ctx = discoverer.default_context
    session = ToolSession(discoverer, ctx, discoverer.discover("list", ctx))
    found = session.search("invoice product stock", capability="inventory")
    assert {h.name for h in found.hits} == {"list_products"}
    found = session.search("invoice product stock", domain="sales", limit=1)
    assert len(found.hits) == 1 and found.hits[0].name in {"list_invoices", "get_invoice"}


def test_bad_calls_and_empty_results(discoverer):
    session = ToolSession(discoverer, VIEWER)
    with pytest.raises(UsageError):
        session.call_search({"query": "x", "limit": 33})
    with pytest.raises(UsageError):
        session.call_search({"limit": 3})
    out = session.call_search({"query": "weather in paris"}).to_model(session.names)
    assert out["tools"] == [] and "clarify" in out["note"]


def test_one_line_description():
    assert one_line("First sentence. Second one.") == "First sentence."
    assert len(one_line("x" * 500)) == 160
