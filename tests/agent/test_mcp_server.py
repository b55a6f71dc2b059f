"""The MCP server in-process through the SDK's client, once over stdio, and without the extra."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
import yaml

from tests.conftest import run_cli

pytest.importorskip("mcp")


def _client_run(service, fn):
    from mcp import Client

    from tooldisc.agent.mcp_server import build_server

    async def main():
        async with Client(build_server(service)) as client:
            return await fn(client)

    return anyio.run(main)


def test_list_search_and_guarded_calls(catalog_path):
    from tooldisc.agent.mcp_server import AgentService, CatalogSource

    events = []
    svc = AgentService(CatalogSource(catalog_path), allow_default_context=True)

    async def scenario(c):
        listed = await c.list_tools()
        names = [t.name for t in listed.tools]
        assert names[0] == "search_tools"
        assert set(names[1:]) == {"list_invoices", "list_products"}  # core tools, authorized, by name
        assert listed.meta["tooldisc/mutation"] in ("UNKNOWN", "READ")
        q = await c.list_tools(meta={"tooldisc/query": "show paid invoices"})
        assert q.meta["tooldisc/offer"][0] in ("list_invoices", "get_invoice")
        assert len(q.meta["tooldisc/offer"]) <= 15
        found = await c.call_tool("search_tools", {"query": "customer merge"})
        assert not found.is_error
        provider = found.structured_content["tools"][0]["name"]
        assert provider != "crm::find&merge customers" and provider.startswith("crm_")
        ok = await c.call_tool(provider, {"q": "x"})
        assert not ok.is_error and ok.structured_content["executed"] is False
        assert ok.structured_content["tool"] == "crm::find&merge customers"
        relisted = await c.list_tools()
        assert provider in [t.name for t in relisted.tools]  # progressive: search results get schemas
        absent = await c.call_tool("no_such_tool", {})
        removed = await c.call_tool("delete_invoice", {"id": 1})
        assert absent.is_error and removed.is_error
        assert absent.content[0].text == removed.content[0].text
        bad = await c.call_tool("list_invoices", {"status": "maybe"})
        assert bad.is_error and bad.structured_content["error"] == "invalid_arguments"
        bad_search = await c.call_tool("search_tools", {"limit": 2})
        assert bad_search.is_error
        events.append(True)

    _client_run(svc, scenario)
    assert events


def test_catalog_reloads_atomically(catalog_path, catalog_doc):
    from tooldisc.agent.mcp_server import AgentService, CatalogSource

    reports: list[str] = []
    source = CatalogSource(catalog_path, report=reports.append)
    svc = AgentService(source, allow_default_context=True)
    h1 = svc.list_tools().meta["tooldisc/catalog_hash"]
    doc = dict(catalog_doc)
    doc["tools"] = [*doc["tools"], {"name": "new_core_tool", "description": "x", "side_effect": "none",
                                    "is_core": True, "parameters": {"type": "object"}}]
    _write(catalog_path, yaml.safe_dump(doc))
    listed = svc.list_tools()
    assert listed.meta["tooldisc/catalog_hash"] != h1
    assert "new_core_tool" in listed.meta["tooldisc/offer"]
    h2 = listed.meta["tooldisc/catalog_hash"]
    _write(catalog_path, "tools: [{name: broken, side_effect: maybe}]\n")
    again = svc.list_tools()
    assert again.meta["tooldisc/catalog_hash"] == h2  # the old catalog keeps serving
    assert len(reports) == 1 and "reload failed" in reports[0] and "side_effect" in reports[0]
    svc.list_tools()
    assert len(reports) == 1  # reported once per bad file, not per request
    assert not svc.call_tool("new_core_tool", {}).is_error


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_serve_over_stdio(catalog_path, tmp_path):
    from mcp import Client, StdioServerParameters

    events = tmp_path / "events.jsonl"
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "tooldisc.cli", "serve", "--catalog", str(catalog_path), "--events", str(events),
        "--allow-default-context"],
        env={**os.environ})

    async def main():
        async with Client(params, read_timeout_seconds=60) as c:
            listed = await c.list_tools(meta={"tooldisc/query": "show invoices"})
            res = await c.call_tool("list_invoices", {})
            return [t.name for t in listed.tools], res

    names, res = anyio.run(main)
    assert names[0] == "search_tools" and "list_invoices" in names
    assert not res.is_error
    assert len(events.read_text("utf-8").splitlines()) == 2


def test_serve_without_the_extra_exits_2(tmp_path, catalog_path):
    fake = tmp_path / "nomcp" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('mcp hidden for this test')\n")
    r = run_cli("serve", "--catalog", str(catalog_path),
                env={"PYTHONPATH": os.pathsep.join([str(fake.parent), *sys.path])})
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "pip install 'tooldisc[mcp]'" in r.stderr


# --- issue 10: current-request authorization, issued names, ReDoS, fail-closed serve --

REDOS_TOOL = {"name": "find_by_code", "description": "Find a record by its code.", "side_effect": "none",
              "keywords": ["code", "record"], "is_core": True,
              "parameters": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
                             "required": ["code"]}}
OWNER_CTX = {"tenant": "t1", "roles": ["accountant"], "permissions": ["invoices.write", "invoices.delete"]}


def _error(result) -> str | None:
    return result.structured_content["error"] if result.is_error else None


def test_stdio_calls_follow_the_current_request_and_only_issued_names(tmp_path, catalog_doc):
    """The issue's session over the real server: what was shown earlier is not callable any more."""
    import time

    from mcp import Client, StdioServerParameters

    doc = {**catalog_doc, "tools": [*catalog_doc["tools"], REDOS_TOOL]}
    cat, ctx = tmp_path / "catalog.yaml", tmp_path / "ctx.yaml"
    cat.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    ctx.write_text(yaml.safe_dump(OWNER_CTX), encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "tooldisc.cli", "serve", "--catalog", str(cat), "--context-file", str(ctx)], env={**os.environ})

    async def main():
        out = {}
        async with Client(params, read_timeout_seconds=60) as c:
            # Before any request: the request is empty (read-only).
            out["early"] = _error(await c.call_tool("export_invoices", {}))
            listed = await c.list_tools(meta={"tooldisc/query": "delete invoice 5"})
            out["delete_listed"] = "delete_invoice" in [t.name for t in listed.tools]
            out["delete_now"] = _error(await c.call_tool("delete_invoice", {"id": 5}))
            await c.list_tools(meta={"tooldisc/query": "export invoices to csv"})
            out["export_now"] = _error(await c.call_tool("export_invoices", {}))
            read = await c.list_tools(meta={"tooldisc/query": "show my invoices"})
            out["read_mutation"] = read.meta["tooldisc/mutation"]
            out["delete_later"] = _error(await c.call_tool("delete_invoice", {"id": 5}))
            out["export_later"] = _error(await c.call_tool("export_invoices", {}))
            out["list_later"] = _error(await c.call_tool("list_invoices", {}))
            # The model's search text cannot widen the request; the user's request text can.
            found = await c.call_tool("search_tools", {"query": "delete invoice"})
            out["search_read"] = [t["name"] for t in found.structured_content["tools"]]
            found = await c.call_tool("search_tools", {"query": "delete invoice"},
                                      meta={"tooldisc/query": "please delete invoice 5"})
            out["search_destructive"] = [t["name"] for t in found.structured_content["tools"]]
            out["delete_after_search"] = _error(await c.call_tool("delete_invoice", {"id": 5}))
            # An approval turn: the host forces the pending tool; only the mutation step is skipped.
            forced = await c.list_tools(meta={"tooldisc/query": "yes, go ahead",
                                              "tooldisc/forced": ["delete_invoice", "export_invoices_raw"]})
            out["forced"] = forced.meta["tooldisc/forced"]
            out["delete_forced"] = _error(await c.call_tool("delete_invoice", {"id": 5}))
            out["export_forced"] = _error(await c.call_tool("export_invoices", {}))
            # Only names the server issued: the raw catalog name of a mapped tool is refused.
            hit = await c.call_tool("search_tools", {"query": "customer merge"})
            provider = hit.structured_content["tools"][0]["name"]
            out["raw"] = _error(await c.call_tool("crm::find&merge customers", {"q": "x"}))
            out["mapped"] = _error(await c.call_tool(provider, {"q": "x"}))
            # ReDoS: a backtracking pattern (hours for 40 a's and a '!' with Python's re) answers at once.
            await c.list_tools(meta={"tooldisc/query": "find the record by code"})
            t0 = time.perf_counter()
            redos = await c.call_tool("find_by_code", {"code": "a" * 40 + "!"})
            out["redos"] = (_error(redos), time.perf_counter() - t0)
        return out

    out = anyio.run(main)
    assert out["early"] == "unknown_tool"
    assert out["delete_listed"] and out["delete_now"] == "approval_required"  # authorized, needs consent
    assert out["export_now"] is None
    assert out["read_mutation"] == "READ"
    assert out["delete_later"] == out["export_later"] == "unauthorized"
    assert out["list_later"] is None
    assert "delete_invoice" not in out["search_read"] and "delete_invoice" in out["search_destructive"]
    assert out["delete_after_search"] == "approval_required"
    assert out["forced"] == ["delete_invoice"]  # a name never issued is not forced
    assert out["delete_forced"] == "approval_required" and out["export_forced"] == "unauthorized"
    assert out["raw"] == "unknown_tool" and out["mapped"] is None
    assert out["redos"][0] == "invalid_arguments" and out["redos"][1] < 5.0


def test_in_process_approval_turn_runs_the_approved_call(catalog_path):
    from tooldisc.agent.guard import approval_key
    from tooldisc.agent.mcp_server import AgentService, CatalogSource
    from tooldisc.discovery.context import context_from_mapping

    key = approval_key("delete_invoice", {"id": 5})
    svc = AgentService(CatalogSource(catalog_path), context_from_mapping(OWNER_CTX), approvals=frozenset({key}))
    svc.list_tools("delete invoice 5")
    svc.list_tools("show invoices")
    assert svc.call_tool("delete_invoice", {"id": 5}, key).payload["error"] == "unauthorized"
    svc.list_tools("yes", forced=["delete_invoice"])
    ran = svc.call_tool("delete_invoice", {"id": 5}, key)
    assert not ran.is_error and ran.payload["tool"] == "delete_invoice"


def test_serve_needs_a_context_or_an_explicit_opt_in(catalog_path, tmp_path):
    r = run_cli("serve", "--catalog", str(catalog_path))
    assert r.returncode == 2 and r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and len(line.encode()) <= 300 and "Traceback" not in line
    assert "--context-file" in line and "--allow-default-context" in line
    both = run_cli("serve", "--catalog", str(catalog_path), "--role", "viewer", "--allow-default-context")
    assert both.returncode == 2 and "not both" in both.stderr
    from tooldisc.agent.mcp_server import AgentService, CatalogSource

    with pytest.raises(ValueError, match="allow_default_context"):
        AgentService(CatalogSource(catalog_path))
