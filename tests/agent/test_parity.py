"""One query and context through the Python API, the CLI and the MCP server: identical offers."""

from __future__ import annotations

import json

import anyio
import pytest
import yaml

from tests.conftest import invoke_cli

QUERY = "show unpaid invoices"


def test_python_cli_and_mcp_offer_the_same(tmp_path, catalog_path):
    pytest.importorskip("mcp")
    from mcp import Client

    from tooldisc.agent.mcp_server import AgentService, CatalogSource, build_server
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.context import load_context_file
    from tooldisc.discovery.pipeline import Discoverer

    ctx_file = tmp_path / "ctx.yaml"
    ctx_file.write_text(yaml.safe_dump({"tenant": "t1", "roles": ["accountant"],
                                        "permissions": ["invoices.write"], "mode": "supervised"}))
    ctx = load_context_file(ctx_file)

    api = Discoverer(load_catalog(catalog_path)).discover(QUERY, ctx)

    r = invoke_cli("discover", QUERY, "--catalog", str(catalog_path), "--context-file", str(ctx_file), "--format", "json")
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)

    async def main():
        async with Client(build_server(AgentService(CatalogSource(catalog_path), ctx))) as c:
            return (await c.list_tools(meta={"tooldisc/query": QUERY})).meta

    meta = anyio.run(main)

    assert api.k == cli["k"] == meta["tooldisc/k"] == 15
    assert list(api.names) == [c["name"] for c in cli["candidates"]] == meta["tooldisc/offer"]
    assert api.offer_hash == cli["offer_hash"] == meta["tooldisc/offer_hash"]
    assert api.names  # a non-trivial offer
