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
