"""The execution guard, including a property test against the DESIGN §4 matrix written out here."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tooldisc.agent.guard import MODEL_TEXT, ToolCall, approval_key, guard
from tooldisc.agent.search_tools import ToolSession
from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.model import Context, Offer, Tool

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
