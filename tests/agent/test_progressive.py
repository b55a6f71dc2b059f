from __future__ import annotations

from tooldisc.agent.progressive import (
    ProgressiveSchemas,
    gold_rounds,
    request_tokens,
    schema_token_report,
)
from tooldisc.agent.schemas import build_schema
from tooldisc.agent.search_tools import META_TOOL
from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.model import Tool


def _big_catalog(n: int = 80):
    return catalog_from_tools([Tool(name=f"tool_{i:03d}", description=f"does thing {i}", side_effect="none",
                                    parameters={"type": "object", "properties": {"x": {"type": "integer"}}})
                               for i in range(n)])


def test_later_rounds_add_only_new_schemas_capped_at_32():
    cat = _big_catalog()
    state = ProgressiveSchemas(cat)
    r1 = state.round([f"tool_{i:03d}" for i in range(15)])
    assert len(r1.added) == 15 and r1.dropped == ()
    r2 = state.round([f"tool_{i:03d}" for i in range(10, 60)])  # 5 old, 45 new
    assert len(r2.added) == 32 and len(r2.dropped) == 13
    assert r2.added_names[0] == "tool_015"
    assert r2.new_tokens == sum(s.tokens for s in r2.added)
    assert r2.wire_tokens == r1.wire_tokens + r2.new_tokens
    r3 = state.round(["tool_000"])
    assert r3.added == () and r3.new_tokens == 0


def test_request_tokens_initial_incremental_wire():
    cat = _big_catalog()
    t = request_tokens([["tool_000", "tool_001"], ["tool_002"]], cat, meta_tool=False)
    one = request_tokens([["tool_000"]], cat, meta_tool=False).initial
    assert t.rounds == 2 and t.schemas == 3
    assert t.incremental == 3 * one  # identical-shaped schemas
    assert t.wire == 2 * one + 3 * one


def test_schema_token_report_and_gold_rounds(discoverer, catalog):
    queries = [{"query": "show invoices", "primary_expected_tools": ["list_invoices"]},
               {"query": "list products stock", "primary_expected_tools": ["list_products"]}]
    rounds = gold_rounds(discoverer, queries, k_full=8, k_initial=1, search_limit=2)
    assert set(rounds) == {"full_k8", "progressive_k1"}
    assert all(len(r[0]) <= 1 for r in rounds["progressive_k1"])
    rep = schema_token_report(rounds, catalog)
    full, prog = rep["strategies"]["full_k8"], rep["strategies"]["progressive_k1"]
    assert full["requests"] == prog["requests"] == 2
    assert full["meta_tool"] is False and prog["meta_tool"] is True
    meta = build_schema(META_TOOL).tokens
    # Round 1 of K=1 costs the meta-tool plus at most what K=8 costs.
    assert meta < prog["initial"]["mean"] <= full["initial"]["mean"] + meta
    assert schema_token_report(rounds, catalog) == rep  # deterministic
