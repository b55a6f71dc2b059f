"""The agent surface's Python inputs are checked like the loaders' (issue 25 item 2, agent part).

A bare ``str`` where a collection of names is expected is a TypeError everywhere: it is
never read as a set of its characters, nor matched by substring.
"""

from __future__ import annotations

import pytest

from tooldisc.agent.guard import ToolCall, approval_key, guard
from tooldisc.agent.progressive import ProgressiveSchemas
from tooldisc.agent.schemas import SchemaCache, load_schemas
from tooldisc.agent.search_tools import ToolSession
from tooldisc.discovery.catalog.exporters import to_anthropic
from tooldisc.discovery.context import context_from_mapping

OWNER = context_from_mapping({"tenant": "t1", "roles": ["accountant"],
                              "permissions": ["invoices.write", "invoices.delete"]})


def test_a_bare_string_is_never_a_collection_of_names(catalog, discoverer):
    session = ToolSession(discoverer, OWNER)
    with pytest.raises(TypeError, match="forced must be a collection of strings"):
        session.request("yes, go ahead", forced="delete_invoice")
    offer = session.request("please delete invoice 5")
    args = {"id": 5}
    key = approval_key("delete_invoice", args)
    call = ToolCall("delete_invoice", args, key)
    with pytest.raises(TypeError, match="approvals must be a collection of strings"):
        guard(call, session, session.request_context, catalog, approvals="granted:" + key)  # no substring match
    assert guard(call, session, session.request_context, catalog, approvals=[key]).allowed
    with pytest.raises(TypeError, match="offer must be an Offer or a sequence of tool names"):
        load_schemas("list_invoices", catalog)
    with pytest.raises(TypeError, match=r"offer\[1\] must be a tool name"):
        load_schemas(["list_invoices", 3], catalog)
    assert [s.name for s in load_schemas(offer, catalog)] == list(offer.names)
    state = ProgressiveSchemas(catalog)
    with pytest.raises(TypeError, match="offer must be an Offer or a sequence of tool names"):
        state.round("list_invoices")
    with pytest.raises(TypeError, match="full must be a collection of tool names"):
        to_anthropic(catalog.tools[:2], full="list_invoices")


def test_constructors_check_their_fields(catalog, discoverer):
    cases = [
        (lambda: ToolSession(discoverer, {"roles": ["x"]}), TypeError, "context must be a Context"),
        (lambda: ToolSession(catalog, OWNER), TypeError, "discoverer must be a Discoverer"),
        (lambda: ProgressiveSchemas(catalog, cap=33), ValueError, r"'cap' parameter must be an int in the range \[1, 32\]"),
        (lambda: ProgressiveSchemas(catalog, cap=True), TypeError, "cap must be an int"),
        (lambda: ProgressiveSchemas(catalog, compact="no"), TypeError, "compact must be a bool"),
        (lambda: SchemaCache(max_entries=0), ValueError, "'max_entries' parameter must be an int"),
        (lambda: ToolSession(discoverer, OWNER).search(5), TypeError, "query must be a str"),
        (lambda: ToolSession(discoverer, OWNER).search("x", domain=["sales"]), TypeError, "domain must be a str"),
        (lambda: guard(ToolCall("list_invoices"), None, OWNER, catalog), TypeError, "offer_or_session must be"),
    ]
    for build, kind, words in cases:
        with pytest.raises(kind, match=words):
            build()
