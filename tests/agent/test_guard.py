"""The execution guard, including a property test against the DESIGN §4 matrix written out here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.agent.guard import MODEL_TEXT, ToolCall, approval_key, guard
from tooldisc.agent.search_tools import ToolSession
from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.model import Context, Offer, Tool
from tooldisc.errors import UsageError

ACCOUNTANT = Context(tenant="t1", roles=frozenset({"accountant"}),
                     permissions=frozenset({"invoices.write", "invoices.delete"}))


def _codes(decision):
    return decision.refusal.code if decision.refusal else None


def test_refusal_codes(discoverer, catalog):
    ctx = ACCOUNTANT
    offer = discoverer.discover("create an invoice", ctx, k=1)
    assert offer.names == ("create_invoice",) and offer.mutation == "WRITE"
    g = lambda name, args=None, **kw: guard(ToolCall(name, args or {}, **kw), offer, ctx, catalog)  # noqa: E731
    assert _codes(g("no_such_tool")) == "unknown_tool"
    assert _codes(g("create_invoice", {"id": 1})) is None
    assert _codes(g("create_invoice", {"id": "x"})) == "invalid_arguments"
    assert _codes(g("create_invoice", [1])) == "invalid_arguments"
    not_offered = next(n for n in ("get_invoice", "list_invoices") if n not in offer.names)
    assert _codes(g(not_offered, {"id": 1})) == "not_offered"
    # Authorized context changes between offer and call: the guard re-checks now.
    viewer = Context(tenant="t1", roles=frozenset({"viewer"}))
    assert _codes(guard(ToolCall("create_invoice", {"id": 1}), offer, viewer, catalog)) == "unauthorized"


def test_removed_tool_looks_exactly_like_an_absent_one(discoverer, catalog):
    offer = discoverer.discover("show invoices", ACCOUNTANT)
    absent = guard(ToolCall("no_such_tool", {}), offer, ACCOUNTANT, catalog)
    for name in ("delete_invoice", "legacy_tool", "disabled_invoice_tool", "export_invoices"):
        removed = guard(ToolCall(name, {"id": 1}), offer, ACCOUNTANT, catalog)
        assert removed.refusal.to_model() == absent.refusal.to_model()
        assert removed.refusal.message == MODEL_TEXT["unknown_tool"]


def test_approval_required_and_granted(discoverer, catalog):
    ctx = ACCOUNTANT
    offer = discoverer.discover("delete invoice 7", ctx)
    assert "delete_invoice" in offer.names
    args = {"id": 7}
    assert _codes(guard(ToolCall("delete_invoice", args), offer, ctx, catalog)) == "approval_required"
    key = approval_key("delete_invoice", args)
    # A token the host never granted, or one for other arguments, does not approve.
    assert _codes(guard(ToolCall("delete_invoice", args, key), offer, ctx, catalog)) == "approval_required"
    other = approval_key("delete_invoice", {"id": 8})
    assert _codes(guard(ToolCall("delete_invoice", args, other), offer, ctx, catalog, approvals={other})) \
        == "approval_required"
    assert guard(ToolCall("delete_invoice", args, key), offer, ctx, catalog, approvals={key}).allowed
    # Approval is consent, never escalation: it cannot override a policy denial.
    no_perm = Context(tenant="t1", roles=frozenset({"accountant"}))
    assert _codes(guard(ToolCall("delete_invoice", args, key), offer, no_perm, catalog, approvals={key})) \
        == "unauthorized"


def test_search_results_become_callable_and_nothing_else(discoverer, catalog):
    ctx = Context(tenant="t1", roles=frozenset({"viewer"}))
    offer = discoverer.discover("stock", ctx, k=1)
    session = ToolSession(discoverer, ctx, offer)
    target = next(n for n in ("get_invoice", "list_invoices") if n not in offer.names)
    assert _codes(guard(ToolCall(target, {"id": 1}), session, ctx, catalog)) == "not_offered"
    session.search("invoice")
    assert target in session.returned
    assert guard(ToolCall(target, {"id": 1}), session, ctx, catalog).allowed


def test_forced_name_of_a_pending_approval_turn(discoverer, catalog):
    ctx = Context(tenant="t1", roles=frozenset({"accountant"}), permissions=frozenset({"invoices.write"}),
                  forced=frozenset({"create_invoice"}))
    offer = discoverer.discover("show invoices", ctx)  # a READ request
    assert guard(ToolCall("create_invoice", {"id": 1}), offer, ctx, catalog).allowed
    # forced never skips roles or permissions
    weak = Context(tenant="t1", roles=frozenset({"viewer"}), forced=frozenset({"create_invoice"}))
    assert not guard(ToolCall("create_invoice", {"id": 1}), offer, weak, catalog).allowed


# --- property: no unauthorized call passes --------------------------------------------

# DESIGN §4, written out literally: (mutation, side_effect) → allowed.
MATRIX = {
    ("READ", "none"): True, ("READ", "write"): False, ("READ", "delete"): False,
    ("READ", "export"): False, ("READ", "execute"): False,
    ("UNKNOWN", "none"): True, ("UNKNOWN", "write"): False, ("UNKNOWN", "delete"): False,
    ("UNKNOWN", "export"): False, ("UNKNOWN", "execute"): False,
    ("WRITE", "none"): True, ("WRITE", "write"): True, ("WRITE", "delete"): False,
    ("WRITE", "export"): False, ("WRITE", "execute"): False,
    ("DESTRUCTIVE", "none"): True, ("DESTRUCTIVE", "write"): False, ("DESTRUCTIVE", "delete"): True,
    ("DESTRUCTIVE", "export"): False, ("DESTRUCTIVE", "execute"): False,
    ("EXPORT", "none"): True, ("EXPORT", "write"): False, ("EXPORT", "delete"): False,
    ("EXPORT", "export"): True, ("EXPORT", "execute"): False,
    ("EXECUTE", "none"): True, ("EXECUTE", "write"): False, ("EXECUTE", "delete"): False,
    ("EXECUTE", "export"): False, ("EXECUTE", "execute"): True,
}


def oracle(tool: Tool, ctx: Context, mutation: str) -> bool:
    if not tool.enabled or tool.side_effect is None:
        return False
    if tool.tenant_required and not ctx.tenant:
        return False
    if tool.roles and not set(tool.roles) & ctx.roles:
        return False
    if not set(tool.permissions) <= ctx.permissions:
        return False
    if ctx.mode == "analyzer":
        return tool.side_effect == "none"
    return tool.name in ctx.forced or MATRIX[(mutation, tool.side_effect)]


ROLES = ["a", "b"]
PERMS = ["p", "q"]
tools_st = st.builds(
    Tool,
    name=st.just("t"),
    side_effect=st.sampled_from([None, "none", "write", "delete", "export", "execute"]),
    roles=st.lists(st.sampled_from(ROLES), unique=True, max_size=2).map(tuple),
    permissions=st.lists(st.sampled_from(PERMS), unique=True, max_size=2).map(tuple),
    tenant_required=st.booleans(),
    enabled=st.booleans(),
    requires_approval=st.booleans(),
    parameters=st.just({"type": "object"}),
)
ctx_st = st.builds(
    Context,
    tenant=st.sampled_from([None, "t1"]),
    roles=st.frozensets(st.sampled_from(ROLES)),
    permissions=st.frozensets(st.sampled_from(PERMS)),
    mode=st.sampled_from(["analyzer", "supervised", "autonomous"]),
    forced=st.sampled_from([frozenset(), frozenset({"t"})]),
)
mutation_st = st.sampled_from(sorted({m for m, _ in MATRIX}))


@settings(max_examples=400, deadline=None)
@given(tool=tools_st, ctx=ctx_st, offer_mutation=mutation_st, offered=st.booleans(), approved=st.booleans())
def test_no_unauthorized_call_passes(tool, ctx, offer_mutation, offered, approved):
    catalog = catalog_from_tools([tool])
    from tooldisc.discovery.model import Candidate, Confidence

    cands = (Candidate("t", 1.0, {}),) if offered else ()
    offer = Offer("q", ctx, offer_mutation, 15, "fixed K", cands, Confidence(1, 1, "high"), 1, "full",
                  catalog.hash, "h")
    key = approval_key("t", {})
    decision = guard(ToolCall("t", {}, key if approved else None), offer, ctx, catalog,
                     approvals={key} if approved else ())
    if decision.allowed:
        assert oracle(tool, ctx, offer_mutation)
        assert offered or "t" in ctx.forced
        assert approved or not tool.requires_approval
    elif not offered and "t" not in ctx.forced and not oracle(tool, ctx, offer_mutation):
        assert decision.refusal.code == "unknown_tool"


# --- calls are authorized against the current request (issue 10, item 2) ------------

OWNER = Context(tenant="t1", roles=frozenset({"accountant"}),
                permissions=frozenset({"invoices.write", "invoices.delete"}))


def test_a_tool_shown_in_an_earlier_turn_is_not_callable_under_a_narrower_request(discoverer, catalog):
    session = ToolSession(discoverer, OWNER)
    assert "delete_invoice" in session.request("delete invoice 5").names
    assert "export_invoices" in session.request("export invoices to csv").names
    current = session.request("show my invoices")
    assert current.mutation == "READ" and "delete_invoice" not in current.names
    key = approval_key("delete_invoice", {"id": 5})
    for name, args in (("delete_invoice", {"id": 5}), ("export_invoices", {})):
        decision = guard(ToolCall(name, args, key), session, session.request_context, catalog, approvals={key})
        assert _codes(decision) == "unauthorized", name
        assert decision.mutation == "READ" and decision.refusal.step == "authorize"
    assert guard(ToolCall("list_invoices", {}), session, session.request_context, catalog).allowed
    # The same name becomes callable again only when the *current* request allows it.
    session.request("remove invoice 5")
    allowed = guard(ToolCall("delete_invoice", {"id": 5}, key), session, session.request_context, catalog,
                    approvals={key})
    assert allowed.allowed and allowed.mutation == "DESTRUCTIVE"


def test_an_approval_turn_works_through_forced_and_skips_only_the_mutation_step(discoverer, catalog):
    session = ToolSession(discoverer, OWNER)
    session.request("delete invoice 5")
    args, key = {"id": 5}, approval_key("delete_invoice", {"id": 5})
    assert _codes(guard(ToolCall("delete_invoice", args), session, session.request_context, catalog)) \
        == "approval_required"
    turn = session.request("yes, go ahead", forced=frozenset({"delete_invoice"}))
    assert turn.mutation in ("READ", "UNKNOWN")
    assert guard(ToolCall("delete_invoice", args, key), session, session.request_context, catalog,
                 approvals={key}).allowed
    # forced names one tool; everything else keeps the current (read) request's rules
    assert _codes(guard(ToolCall("export_invoices", {}), session, session.request_context, catalog)) \
        == "unknown_tool"
    # and the next ordinary turn drops it again
    session.request("show invoices")
    assert _codes(guard(ToolCall("delete_invoice", args, key), session, session.request_context, catalog,
                        approvals={key})) == "unauthorized"
    # forced never skips the policy: without the permission the approval turn does not help
    weak = ToolSession(discoverer, Context(tenant="t1", roles=frozenset({"accountant"})))
    weak.request("yes", forced=frozenset({"delete_invoice"}))
    assert _codes(guard(ToolCall("delete_invoice", args, key), weak, weak.request_context, catalog,
                        approvals={key})) == "unauthorized"


def test_a_session_refuses_an_offer_for_another_user(discoverer):
    session = ToolSession(discoverer, OWNER)
    with pytest.raises(UsageError):
        session.add_offer(discoverer.discover("show invoices", Context(tenant="t2")))


# --- hostile schemas and arguments are refusals, never exceptions (items 3 and 4) -----

def _one_tool(parameters, **kw):
    from tooldisc.discovery.catalog import catalog_from_tools

    tool = Tool(name="t", side_effect="none", parameters=parameters, **kw)
    catalog = catalog_from_tools([tool])  # in memory: no quarantine, the guard must hold on its own
    from tooldisc.discovery.model import Candidate, Confidence

    offer = Offer("q", ACCOUNTANT, "READ", 15, "fixed K", (Candidate("t", 1.0, {}),), Confidence(1, 1, "high"), 1,
                  "full", catalog.hash, "h")
    return catalog, offer


def _nested(depth: int):
    value = "leaf"
    for _ in range(depth):
        value = {"x": value}
    return value


def test_a_backtracking_pattern_is_refused_in_linear_time():
    import time

    catalog, offer = _one_tool({"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}})
    t0 = time.perf_counter()
    decision = guard(ToolCall("t", {"code": "a" * 5000 + "!"}), offer, ACCOUNTANT, catalog)
    assert time.perf_counter() - t0 < 1.0  # a backtracking engine would not finish this year
    assert _codes(decision) == "invalid_arguments" and "does not match" in decision.refusal.reason
    assert guard(ToolCall("t", {"code": "a" * 5000}), offer, ACCOUNTANT, catalog).allowed


def test_hostile_schemas_and_arguments_are_typed_refusals(monkeypatch):
    import urllib.request

    def no_network(*a, **kw):
        raise AssertionError("a $ref was fetched")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    recursive = {"type": "object", "properties": {"x": {"$ref": "#"}}}
    cases = [
        (recursive, {"x": _nested(2000)}, "nest deeper"),
        ({"$ref": "#"}, {"a": 1}, "$ref cycle"),
        ({"type": "object", "properties": {"x": {"$ref": "#/nope"}}}, {"x": 1}, "does not resolve"),
        ({"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:9/x.json"}}}, {"x": 1}, "never resolved"),
        ({"type": "object", "properties": {"x": {"type": "string", "pattern": "(("}}}, {"x": "a"}, "RE2"),
        ({"type": "object", "properties": []}, {"x": 1}, "cannot be evaluated"),
        (None, _nested(2000), "nest deeper"),  # no schema: any object, but never a deep one
    ]
    for schema, args, words in cases:
        catalog, offer = _one_tool(schema)
        decision = guard(ToolCall("t", args), offer, ACCOUNTANT, catalog)
        assert _codes(decision) == "invalid_arguments", schema
        assert words in decision.refusal.reason, (schema, decision.refusal.reason)
    # A legitimate recursive schema still validates arguments of ordinary depth.
    catalog, offer = _one_tool(recursive)
    assert guard(ToolCall("t", {"x": {"x": {}}}), offer, ACCOUNTANT, catalog).allowed
    assert _codes(guard(ToolCall("t", {"x": {"x": 3}}), offer, ACCOUNTANT, catalog)) == "invalid_arguments"


def test_deep_arguments_never_reach_the_approval_key():
    catalog, offer = _one_tool(None, requires_approval=True)
    deep = _nested(2000)
    decision = guard(ToolCall("t", deep, "token"), offer, ACCOUNTANT, catalog, approvals={"token"})
    assert _codes(decision) == "invalid_arguments"
    with pytest.raises(UsageError, match="deeper"):
        approval_key("t", deep)


def test_a_quarantined_tool_looks_absent(tmp_path):
    from tooldisc.discovery.catalog import build_catalog

    doc = {"tools": [{"name": "t", "side_effect": "none",
                      "parameters": {"type": "object", "properties": {"x": {"pattern": "(("}}}}]}
    catalog = build_catalog(doc)
    assert catalog.by_name["t"].quarantine
    _, offer = _one_tool(None)
    assert _codes(guard(ToolCall("t", {"x": "a"}), offer, ACCOUNTANT, catalog)) == "unauthorized"
