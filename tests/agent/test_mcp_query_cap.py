"""An MCP request's text is capped like every other (issue 25 item 8), over the real stdio server.

A ``tooldisc/query`` longer than ``MAX_QUERY_CHARS`` gets an error answer naming the cap
(not "internal server error"); a ``search_tools`` query has its own, shorter cap in the
tool's schema (500 characters) and is refused as invalid arguments; the server keeps
answering the next request.
"""

from __future__ import annotations

import os
import sys

import anyio
import pytest

from tooldisc.limits import MAX_QUERY_CHARS

pytest.importorskip("mcp")


def test_an_over_long_mcp_query_is_refused_and_the_server_keeps_answering(catalog_path) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "tooldisc.cli", "serve", "--catalog", str(catalog_path), "--allow-default-context"], env={**os.environ})
    long_text = "show invoices " * (MAX_QUERY_CHARS // 14 + 1)
    assert len(long_text) > MAX_QUERY_CHARS

    async def main() -> dict:
        out: dict = {}
        async with Client(params, read_timeout_seconds=60) as c:
            try:
                await c.list_tools(meta={"tooldisc/query": long_text})
                out["list"] = None
            except Exception as exc:  # the SDK raises the server's error answer
                out["list"] = str(exc)
            found = await c.call_tool("search_tools", {"query": long_text})
            out["search"] = (found.is_error, found.structured_content)
            listed = await c.list_tools(meta={"tooldisc/query": long_text[:MAX_QUERY_CHARS]})
            out["after"] = [t.name for t in listed.tools]
        return out

    out = anyio.run(main)
    assert out["list"] is not None and f"at most {MAX_QUERY_CHARS:,} are read" in out["list"], out["list"]
    is_error, body = out["search"]
    assert is_error and body["error"] == "invalid_arguments" and body["message"].startswith("search_tools: invalid")
    assert "search_tools" in out["after"] and "list_invoices" in out["after"]
