from __future__ import annotations

import json
from importlib import resources

import pytest

from tests.conftest import invoke_cli
from tooldisc.agent.guard import ToolCall, guard
from tooldisc.agent.sink import CallbackSink, Experiment, JsonlSink, Telemetry, assign_arm
from tooldisc.discovery.model import Context

FIXED_TS = "2025-01-01T00:00:00Z"


def _schema() -> dict:
    return json.loads(resources.files("tooldisc.canary").joinpath("data/event.schema.json").read_text("utf-8"))


def test_arm_assignment_uses_the_canary_layout():
    exp = Experiment("indexed-retrieval-v1", "s1", 90)
    arm = assign_arm(exp, "t1", "u1")
    assert (arm.bucket, arm.arm) == (8817, "experiment")  # DESIGN §7 test vector
    assert assign_arm(Experiment("e", "s1", 50), "t1", "u1").arm == "control"
    assert assign_arm(None, "t1", "u1") == assign_arm(None, None, None)


def test_events_are_valid_and_carry_no_ids_or_text(discoverer, catalog):
    import jsonschema

    schema = _schema()
    events: list[dict] = []
    tel = Telemetry(CallbackSink(events.append), channel="api", experiment=Experiment("exp-a", "salt-a", 25),
                    clock=lambda: FIXED_TS)
    ctx = Context(tenant="tenant-secret", roles=frozenset({"accountant"}), permissions=frozenset({"invoices.write"}))
    offer = discoverer.discover("create invoice for Mr Secretname", ctx)
    tel.record_discovery(offer, catalog, schema_tokens=321, tenant_id="tenant-secret", user_id="user-secret")
    decision = guard(ToolCall("get_invoice", {"id": 1}), offer, ctx, catalog)
    tel.record_guard(decision, offer, catalog, tenant_id="tenant-secret", user_id="user-secret")
    for e in events:
        jsonschema.validate(e, schema)
        text = json.dumps(e)
        for secret in ("secret", "Secretname", "invoice", "get_invoice"):
            assert secret.lower() not in text.lower()
    first, second = events
    assert first["schema_tokens"] == 321 and first["final_tool_count"] == len(offer.candidates)
    assert first["unauthorized_candidate"] is False and first["mutation"] == "WRITE"
    assert second["retrieval_miss"] is (decision.refusal is not None and decision.refusal.code == "not_offered")
    assert first["bucket"] == second["bucket"] and first["arm"] == second["arm"]


def test_served_events_ingest_with_canary_tooling(tmp_path, catalog_path):
    pytest.importorskip("mcp")
    from tooldisc.agent.mcp_server import AgentService, CatalogSource

    path = tmp_path / "events.jsonl"
    svc = AgentService(CatalogSource(catalog_path), telemetry=Telemetry(JsonlSink(path), channel="mcp"),
                       allow_default_context=True)
    svc.list_tools("show invoices")
    svc.list_tools(None)  # a re-list of the same request: no second discovery event
    svc.list_tools("")  # an empty new request: one
    svc.call_tool("list_invoices", {"status": "paid"})
    svc.call_tool("delete_invoice", {"id": 1})
    svc.call_tool("get_invoice", {"id": "nope"})
    lines = path.read_text("utf-8").splitlines()
    assert len(lines) == 5
    r = invoke_cli("canary", "ingest", str(path), "--db", str(tmp_path / "t.duckdb"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["rows"] == 5 and out["quarantined"] == 0
