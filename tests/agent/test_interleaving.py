"""Interleaving on the agent surface: AgentService(interleave=…) in Python, `serve --interleave`
over stdio through the MCP SDK client, the v3 telemetry row (teams, credit; replayable from its
event id), bucketing by `_meta["tooldisc/user"]` (never logged), and the closed `_meta` schema."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import anyio
import pytest
import yaml

from tests.conftest import run_cli
from tooldisc.agent.interleaving import Interleave, challenger
from tooldisc.agent.mcp_meta import CALL, LIST, SEARCH, read_meta
from tooldisc.agent.mcp_server import AgentService, CatalogSource
from tooldisc.agent.sink import CallbackSink, Telemetry
from tooldisc.canary.assignment import bucket, request_bucket
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.discovery.context import context_from_mapping
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
BM25 = str(ROOT / "configs" / "bm25.yaml")
CTX = {"tenant": "acme", "roles": ["accountant"], "permissions": ["invoices.write", "invoices.delete"]}


def _ids():
    n = iter(range(1, 10**6))
    return lambda: str(uuid.UUID(int=next(n) * 7919 + 12345))


def _args(name: str) -> dict:
    """Arguments the agent test catalog's tools accept."""
    return {"id": 1} if name in ("get_invoice", "create_invoice", "delete_invoice") else {}


def _service(catalog_path: Path, events: list, percent: float = 100, **kw) -> AgentService:
    cfg, learned = challenger(BM25)
    tel = Telemetry(CallbackSink(events.append), channel="mcp", new_id=_ids())
    return AgentService(CatalogSource(catalog_path), context_from_mapping(CTX), telemetry=tel,
                        interleave=Interleave("rank-v2", percent, cfg, learned), **kw)


def test_an_interleaved_request_is_one_v3_row_with_its_teams_and_credit(catalog_path: Path) -> None:
    events: list[dict] = []
    svc = _service(catalog_path, events)
    listed = svc.list_tools("show unpaid invoices", user="user-7")
    offered = listed.meta["tooldisc/offer"]
    assert listed.tools[0]["name"] == "search_tools" and offered
    assert events == []  # the row waits for the request's calls
    first = svc.call_tool(offered[0], {"status": "unpaid"} if offered[0] == "list_invoices" else {"id": 1})
    found = svc.call_tool("search_tools", {"query": "customer merge"})
    hit = found.payload["tools"][0]["name"]
    assert not svc.call_tool(hit, {"q": "x"}).is_error
    svc.list_tools("list products in stock")  # the next request ends the first
    v3 = [e for e in events if e["schema_version"] == 3]
    assert len(v3) == 1
    row = v3[0]
    ctx = context_from_mapping(CTX)
    engine = svc.source.engine()
    replay = engine.discoverer.discover_interleaved(Discoverer(engine.catalog, challenger(BM25)[0]),
                                                    "show unpaid invoices", ctx, request_id=row["event_id"])
    assert row["teams"] == replay.teams and list(replay.offer.names) == offered  # replayable from the row
    team = replay.team_of(offered[0])
    assert row["credit"] == ((team if not first.is_error else "") + "-")
    assert (row["arm"], row["experiment"], row["percent"]) == ("experiment", "rank-v2", 100.0)
    assert row["bucket"] == bucket("rank-v2", "acme", "user-7")
    assert row["final_tool_count"] == len(row["teams"]) and row["schema_tokens"] > 0
    assert row["contested"] is (bool(replay.a.names) and bool(replay.b.names))
    guard_rows = [e for e in events if e["schema_version"] == 2]
    assert len(guard_rows) == 2  # one per call (a search is not a call)
    assert all(e["arm"] == "experiment" and "teams" not in e for e in guard_rows)
    text = json.dumps(events)
    for secret in ("user-7", "acme", "unpaid", "invoices", "list_", "customer"):
        assert secret not in text  # ids, query text and tool names never leave
    assert set().union(*events) <= set(EVENT_SCHEMA.names)
    svc.close()
    assert sum(e["schema_version"] == 3 for e in events) == 2 and svc._pending is None


def test_rows_read_clean_and_judge(catalog_path: Path, tmp_path: Path) -> None:
    """The surface's rows go through the strict reader untouched and the verdict runs on them."""
    from tooldisc.canary.verdict import run_verdict

    events: list[dict] = []
    svc = _service(catalog_path, events, percent=50)
    for i in range(40):
        listed = svc.list_tools(f"show invoice {i}")
        offered = listed.meta["tooldisc/offer"]
        if offered and i % 3:
            svc.call_tool(offered[i % len(offered)], {})
    svc.close()
    f = tmp_path / "e.jsonl"
    f.write_text("".join(json.dumps(e) + "\n" for e in events))
    report = run_verdict(EVENT_SCHEMA, "rank-v2", events=str(f), profile_name="interleaving")[1]
    assert report["quarantined"] == 0
    s = report["summary"]
    assert 0 < s["interleaved"] < 40 and s["requests"]["control"] > 0
    assert report["verdict"] == "HOLD" and report["next_step"]["gate"] == "data"


def test_percent_zero_is_plain_v2_and_buckets_per_request(catalog_path: Path) -> None:
    events: list[dict] = []
    svc = _service(catalog_path, events, percent=0)
    svc.list_tools("show invoices")
    svc.list_tools("list products")
    svc.close()
    assert [e["schema_version"] for e in events] == [2, 2]
    assert {(e["arm"], e["experiment"]) for e in events} == {("control", "rank-v2")}
    ids = _ids()
    first, event, second = ids(), ids(), ids()  # one id per request, then one per v2 event
    assert events[0]["event_id"] == event
    assert [e["bucket"] for e in events] == [request_bucket("rank-v2", first), request_bucket("rank-v2", second)]


def test_a_user_is_interleaved_on_every_request_or_none(catalog_path: Path) -> None:
    """By the §7 bucket of tenant and user, at 50 %: each user's requests share one arm."""
    events: list[dict] = []
    svc = _service(catalog_path, events, percent=50)
    users = [f"u{i}" for i in range(12)]
    for u in users:
        for q in ("show invoices", "list products"):
            svc.list_tools(q, user=u)
    svc.close()
    rows = [e for e in events if e["schema_version"] == 3 or e["arm"] == "control"]
    arms = [e["arm"] for e in rows]
    expected = ["experiment" if bucket("rank-v2", "acme", u) < 5000 else "control" for u in users]
    assert arms[::2] == arms[1::2] == expected
    assert "experiment" in arms and "control" in arms


def test_a_reloaded_catalog_decides_the_request_again_in_one_row(catalog_path: Path, catalog_doc: dict) -> None:
    """The same request re-decided on a new catalog keeps its id (its coins), its calls and one
    row; a request without text is not interleaved (nothing is ranked) and logged as control."""
    events: list[dict] = []
    svc = _service(catalog_path, events)
    svc.list_tools("show unpaid invoices")
    listed = svc.list_tools()  # a re-list: no new request
    offered = listed.meta["tooldisc/offer"]
    assert not svc.call_tool(offered[0], _args(offered[0])).is_error
    doc = {**catalog_doc, "catalog_version": "agent-test-2",
           "tools": [*catalog_doc["tools"], {"name": "list_refunds", "description": "List refunds of invoices.",
                                             "side_effect": "none", "keywords": ["invoice", "refund"]}]}
    catalog_path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    st = catalog_path.stat()
    os.utime(catalog_path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    again = svc.list_tools()  # decided again on the new catalog
    assert again.meta["tooldisc/catalog_hash"] != listed.meta["tooldisc/catalog_hash"]
    assert not svc.call_tool(again.meta["tooldisc/offer"][0], _args(again.meta["tooldisc/offer"][0])).is_error
    svc.list_tools("")  # an empty request: core tools by name, not interleaved
    svc.close()
    rows = [e for e in events if e["schema_version"] == 3]
    assert len(rows) == 1 and len(rows[0]["credit"]) == 2
    empty = [e for e in events if e["schema_version"] == 2 and e["arm"] == "control"]
    assert len(empty) == 1 and empty[0]["final_tool_count"] >= 1


def test_meta_user_is_part_of_the_closed_schema_and_never_echoed() -> None:
    assert read_meta({"tooldisc/user": "u-1", "tooldisc/query": "x"}, LIST).user == "u-1"
    assert read_meta({"tooldisc/user": "u-1", "tooldisc/query": "x"}, SEARCH).user == "u-1"
    with pytest.raises(UsageError, match="'tooldisc/user' is not read on tools/call"):
        read_meta({"tooldisc/user": "u-1"}, CALL)
    with pytest.raises(UsageError) as info:
        read_meta({"tooldisc/user": "secret-user-id" * 30}, LIST)
    assert "secret" not in str(info.value) and "str of length 420" in str(info.value)
    with pytest.raises(UsageError, match="got int"):
        read_meta({"tooldisc/user": 7}, LIST)
    with pytest.raises(UsageError, match="did you mean 'tooldisc/user'"):
        read_meta({"tooldisc/usr": "u"}, LIST)


def test_a_user_alone_starts_nothing_and_the_plan_is_checked(catalog_path: Path) -> None:
    svc = _service(catalog_path, [])
    with pytest.raises(UsageError, match="goes with 'tooldisc/query'"):
        svc.list_tools(user="u-1")
    with pytest.raises(TypeError, match=r"Interleave\.percent"):
        Interleave("x", "10")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Interleave\.experiment"):
        Interleave("", 10)
    with pytest.raises(UsageError, match=r"steps of 0\.01"):
        Interleave("x", 10.001)
    with pytest.raises(TypeError, match=r"AgentService\.interleave"):
        AgentService(CatalogSource(catalog_path), context_from_mapping(CTX), interleave="bm25")  # type: ignore[arg-type]


def test_a_learned_file_or_default_as_b(catalog_path: Path, tmp_path: Path) -> None:
    from tooldisc.discovery.learned import Learned

    cfg, learned = challenger("default")
    assert learned is None and cfg is not None
    bad = tmp_path / "b.yaml"
    bad.write_text("weights: {bm25: -1}\n")
    with pytest.raises(ValueError, match=r"b\.yaml"):
        challenger(str(bad))
    fake = tmp_path / "l.json"
    fake.write_text(json.dumps({"format": "tooldisc-learned", "version": 99}))
    with pytest.raises(ValueError, match=r"l\.json"):
        challenger(str(fake))  # read as a learned file (and refused as one), never as a config
    assert Learned  # the type B's learned file must be


# -- over stdio, through the MCP SDK client ------------------------------------------------------

def test_serve_interleave_over_stdio(catalog_path: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    events, ctx = tmp_path / "events.jsonl", tmp_path / "ctx.yaml"
    ctx.write_text(yaml.safe_dump(CTX), encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "tooldisc.cli", "serve", "--catalog", str(catalog_path), "--context-file", str(ctx),
        "--events", str(events), "--interleave", BM25, "--experiment", "rank-v2", "--percent", "100"],
        env={**os.environ})

    async def main():
        async with Client(params, read_timeout_seconds=60) as c:
            first = await c.list_tools(meta={"tooldisc/query": "show unpaid invoices", "tooldisc/user": "u-9"})
            offered = first.meta["tooldisc/offer"]
            called = next(n for n in offered if n in ("list_invoices", "list_products"))
            res = await c.call_tool(called, {})
            await c.list_tools(meta={"tooldisc/query": "list products"})
            return offered, called, res

    offered, called, res = anyio.run(main)
    assert not res.is_error
    rows = [json.loads(line) for line in events.read_text("utf-8").splitlines()]
    v3 = [r for r in rows if r["schema_version"] == 3]
    assert len(v3) == 2  # the second request's row was written when the server closed
    from tooldisc.discovery.catalog.io import load_catalog

    cat = load_catalog(catalog_path)
    replay = Discoverer(cat).discover_interleaved(Discoverer(cat, challenger(BM25)[0]), "show unpaid invoices",
                                                  context_from_mapping(CTX), request_id=v3[0]["event_id"])
    assert list(replay.offer.names) == offered and v3[0]["teams"] == replay.teams
    assert v3[0]["credit"] == replay.team_of(called) and v3[1]["credit"] is None
    assert v3[0]["bucket"] == bucket("rank-v2", "acme", "u-9")
    assert "u-9" not in events.read_text("utf-8")


def test_serve_interleave_options_are_checked(catalog_path: Path, tmp_path: Path) -> None:
    base = ("serve", "--catalog", str(catalog_path), "--allow-default-context")
    cases = [
        ((*base, "--interleave", "default", "--percent", "10", "--events", str(tmp_path / "e.jsonl")),
         "--interleave needs --experiment NAME and --percent P"),
        ((*base, "--percent", "10"), "--experiment, --salt and --percent configure --interleave"),
        ((*base, "--interleave", "default", "--experiment", "x", "--percent", "10"), "--interleave needs --events"),
        ((*base, "--interleave", str(tmp_path / "missing.yaml"), "--experiment", "x", "--percent", "10",
          "--events", str(tmp_path / "e.jsonl")), "missing.yaml"),
        ((*base, "--interleave", "default", "--experiment", "x", "--percent", "101",
          "--events", str(tmp_path / "e.jsonl")), "percent"),
    ]
    for args, text in cases:
        res = run_cli(*args)
        assert res.returncode == 2 and text in res.stderr, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
