"""The MCP server fails closed (issue 25 item 5, and the MCP parts of items 1 and 2).

Through the official SDK client over stdio (the real ``tooldisc serve``): a reload never
lists a tool the guard would refuse, a re-list without ``_meta`` keeps the current request,
every ``inputSchema`` is an object schema, the step budget answers at once, and tooldisc's
``_meta`` keys are a closed schema. ``AgentService``'s inputs are checked like the loaders'.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from tests.agent.conftest import TOOLS

pytest.importorskip("mcp")

CTX = {"tenant": "t1", "roles": ["accountant"], "permissions": ["invoices.write", "invoices.delete"]}


def _dag(levels: int) -> dict[str, Any]:
    defs: dict[str, Any] = {f"l{i}": {"allOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 2} for i in range(levels)}
    defs[f"l{levels}"] = {"type": "object"}
    return defs


EXTRA = [
    # No top-level "type": read as an object schema, listed with "type": "object".
    {"name": "count_invoices", "description": "Count invoices by status.", "side_effect": "none",
     "keywords": ["invoice", "invoices", "count"], "domains": ["sales"],
     "parameters": {"properties": {"status": {"type": "string"}}}},
    # Under the budget for one row, over it for a thousand.
    {"name": "import_rows", "description": "Import rows of records.", "side_effect": "none",
     "keywords": ["import", "rows", "records"],
     "parameters": {"type": "object", "properties": {"rows": {"type": "array", "items": {"$ref": "#/$defs/l0"}}},
                    "$defs": _dag(8)}},
    # The issue's 3 KB DAG bomb: quarantined at load, never listed, never evaluated.
    {"name": "find_record", "description": "Find a record.", "side_effect": "none", "keywords": ["record", "find"],
     "is_core": True, "parameters": {"type": "object", "$ref": "#/$defs/l0", "$defs": _dag(40)}},
    # A root type that is not "object": quarantined.
    {"name": "find_code", "description": "Find a record by code.", "side_effect": "none", "is_core": True,
     "keywords": ["record", "code"], "parameters": {"type": "string"}},
]


def _catalog(tools: list[dict[str, Any]]) -> str:
    return yaml.safe_dump({"catalog_version": "mcp-fail-closed", "tools": tools}, sort_keys=False)


def _replace(path: Path, text: str, bump: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 1_000_000_000))


def _error(result: Any) -> str | None:
    return result.structured_content["error"] if result.is_error else None


def test_stdio_server_fails_closed(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    tools = [dict(t) for t in TOOLS] + [dict(t) for t in EXTRA]
    cat, ctx = tmp_path / "catalog.yaml", tmp_path / "ctx.yaml"
    cat.write_text(_catalog(tools), encoding="utf-8")
    ctx.write_text(yaml.safe_dump(CTX), encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "tooldisc.cli", "serve", "--catalog", str(cat), "--context-file", str(ctx)], env={**os.environ})

    async def refused(coro: Any) -> str:
        try:
            await coro
        except MCPError as exc:
            return f"{exc.code} {exc.message}"
        raise AssertionError("the request was answered, not refused")

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params, read_timeout_seconds=60) as c:
            # Item 3: every inputSchema is an object schema; the SDK accepts the list.
            listed = await c.list_tools(meta={"tooldisc/query": "count the invoices"})
            out["types"] = {t.name: t.input_schema.get("type") for t in listed.tools}
            out["count"] = _error(await c.call_tool("count_invoices", {"status": "paid"}))
            core = await c.list_tools(meta={"tooldisc/query": ""})  # an empty request: the core tools
            out["core"] = [t.name for t in core.tools]

            # Item 5: tooldisc's _meta keys are a closed schema; other namespaces are ignored.
            out["typo"] = await refused(c.list_tools(meta={"tooldisc/qurey": "show invoices"}))
            out["case"] = await refused(c.list_tools(meta={"Tooldisc/Query": "show invoices"}))
            out["dotted"] = await refused(c.list_tools(meta={"tooldisc.query": "show invoices"}))
            out["type"] = await refused(c.list_tools(meta={"tooldisc/query": ["show", "invoices"]}))
            out["bare_forced"] = await refused(c.list_tools(meta={"tooldisc/query": "yes",
                                                                  "tooldisc/forced": "delete_invoice"}))
            out["approval_on_list"] = await refused(c.list_tools(meta={"tooldisc/approval": "abc"}))
            out["query_on_call"] = await refused(c.call_tool("list_invoices", {},
                                                             meta={"tooldisc/query": "delete invoice 5"}))
            other = await c.list_tools(meta={"io.example/trace": "1", "tooldiscovery/x": 2})
            out["other_ok"] = other.meta["tooldisc/mutation"]

            # Item 4: over the step budget at call time: refused in one line, and the server answers on.
            found = await c.call_tool("search_tools", {"query": "import rows of records"})
            out["import_found"] = [t["name"] for t in found.structured_content["tools"]]
            t0 = time.perf_counter()
            heavy = await c.call_tool("import_rows", {"rows": [{}] * 1000})
            out["heavy"] = (_error(heavy), heavy.structured_content["message"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            light = await c.call_tool("import_rows", {"rows": [{}] * 3})
            out["light"] = (_error(light), time.perf_counter() - t0)
            t0 = time.perf_counter()
            record = await c.list_tools(meta={"tooldisc/query": "find the record"})
            out["record"] = ([t.name for t in record.tools], time.perf_counter() - t0)
            t0 = time.perf_counter()
            out["bomb"] = (_error(await c.call_tool("find_record", {})), time.perf_counter() - t0)

            # Item 2: an approval turn survives the SDK's re-list without _meta.
            await c.list_tools(meta={"tooldisc/query": "export invoices to csv"})
            turn = await c.list_tools(meta={"tooldisc/query": "yes, go ahead", "tooldisc/forced": ["export_invoices"]})
            out["turn"] = (turn.meta["tooldisc/mutation"], turn.meta["tooldisc/forced"])
            hit = await c.call_tool("search_tools", {"query": "customer merge"})
            merge = hit.structured_content["tools"][0]["name"]
            # Not in the last list: the SDK calls tools/list without _meta after this call.
            out["merge"] = _error(await c.call_tool(merge, {"q": "x"}))
            out["export_after_relist"] = _error(await c.call_tool("export_invoices", {}))
            relisted = await c.list_tools()
            out["relisted"] = (relisted.meta["tooldisc/mutation"], relisted.meta["tooldisc/forced"],
                               relisted.meta["tooldisc/offer_hash"] == turn.meta["tooldisc/offer_hash"])
            out["export_again"] = _error(await c.call_tool("export_invoices", {}))

            # Item 1: a reload that disables, removes or de-authorizes tools never lists them.
            read = await c.list_tools(meta={"tooldisc/query": "show invoices"})
            await c.call_tool("search_tools", {"query": "customer merge"})
            before = [t.name for t in (await c.list_tools()).tools]
            out["before"] = before
            changed = [dict(t) for t in tools if t["name"] != "get_invoice"]
            for t in changed:
                if t["name"] == "list_invoices":
                    t["enabled"] = False
                if t["name"] == "crm::find&merge customers":
                    t["roles"] = ["admin"]
            _replace(cat, _catalog(changed), 5)
            after = [t.name for t in (await c.list_tools()).tools]
            again = [t.name for t in (await c.list_tools(meta={"tooldisc/query": "show invoices"})).tools]
            out["after"], out["again"] = after, again
            out["calls_after"] = [_error(await c.call_tool(n, {"id": 1} if n == "get_invoice" else {}))
                                  for n in ("list_invoices", "get_invoice", merge)]
            out["read_mutation"] = read.meta["tooldisc/mutation"]
        return out

    out = anyio.run(main)
    assert set(out["types"].values()) == {"object"} and "count_invoices" in out["types"]
    assert out["count"] is None
    assert "find_record" not in out["core"] and "find_code" not in out["core"]  # quarantined core tools
    assert out["typo"].startswith("-32602 ") and "did you mean 'tooldisc/query'" in out["typo"]
    assert "unknown key 'Tooldisc/Query'" in out["case"] and "unknown key 'tooldisc.query'" in out["dotted"]
    assert "'tooldisc/query' must be a string" in out["type"]
    assert "'tooldisc/forced' must be a list of tool names" in out["bare_forced"]
    assert "'tooldisc/approval' is not read on tools/list" in out["approval_on_list"]
    assert "'tooldisc/query' is not read on tools/call" in out["query_on_call"]
    for key in ("typo", "case", "dotted", "type", "bare_forced", "approval_on_list", "query_on_call"):
        assert "\n" not in out[key] and len(out[key].encode()) <= 300
    assert out["other_ok"] == "UNKNOWN"  # the empty request goes on; foreign keys are not read

    assert "import_rows" in out["import_found"]
    code, message, seconds = out["heavy"]
    assert code == "invalid_arguments" and "step budget" in message and "\n" not in message
    assert seconds < 2.0
    assert out["light"][0] is None and out["light"][1] < 2.0
    assert "find_record" not in out["record"][0] and out["record"][1] < 2.0
    assert out["bomb"][0] == "unknown_tool" and out["bomb"][1] < 2.0

    assert out["turn"] == ("UNKNOWN", ["export_invoices"])  # an approval turn: no mutation words (read)
    assert out["merge"] is None
    assert out["export_after_relist"] is None  # was "unauthorized": the re-list had reset the request
    assert out["relisted"] == ("UNKNOWN", ["export_invoices"], True)
    assert out["export_again"] is None

    assert {"list_invoices", "get_invoice", "crm_find_merge_customers"} & set(out["before"]) >= {"list_invoices"}
    for gone in ("list_invoices", "get_invoice"):
        assert gone not in out["after"] and gone not in out["again"]
    assert not [n for n in out["after"] + out["again"] if n.startswith("crm")]
    assert out["calls_after"] == ["unauthorized", "unknown_tool", "unauthorized"]
    assert out["read_mutation"] == "READ"


def _client_run(service: Any, fn: Any) -> Any:
    from mcp import Client

    from tooldisc.agent.mcp_server import build_server

    async def main() -> Any:
        async with Client(build_server(service)) as client:
            return await fn(client)

    return anyio.run(main)


def test_the_sdk_relists_without_meta_and_the_request_is_kept(catalog_path: Path) -> None:
    """In-process, counting the SDK's own tools/list requests: the one it sends unasked carries no _meta."""
    from tooldisc.agent.guard import approval_key
    from tooldisc.agent.mcp_server import AgentService, CatalogSource
    from tooldisc.discovery.context import context_from_mapping

    key = approval_key("delete_invoice", {"id": 5})
    svc = AgentService(CatalogSource(catalog_path), context_from_mapping(CTX), approvals=frozenset({key}))
    seen: list[tuple[Any, Any]] = []
    real = svc.list_tools

    def spy(query: Any = None, forced: Any = None) -> Any:
        seen.append((query, forced))
        return real(query, forced)

    svc.list_tools = spy  # type: ignore[method-assign]

    async def scenario(c: Any) -> list[Any]:
        await c.list_tools(meta={"tooldisc/query": "delete invoice 5"})
        await c.list_tools(meta={"tooldisc/query": "yes, go ahead", "tooldisc/forced": ["delete_invoice"]})
        hit = await c.call_tool("search_tools", {"query": "customer merge"})
        name = hit.structured_content["tools"][0]["name"]
        count = len(seen)
        merged = await c.call_tool(name, {"q": "x"})
        unasked = seen[count:]
        ran = await c.call_tool("delete_invoice", {"id": 5}, meta={"tooldisc/approval": key})
        return [merged.is_error, unasked, ran.is_error, ran.structured_content]

    merged_error, unasked, ran_error, ran = _client_run(svc, scenario)
    assert not merged_error
    assert unasked == [(None, None)]  # the SDK's own re-list, without _meta
    assert not ran_error and ran["tool"] == "delete_invoice"


def test_a_reload_filters_search_results_and_redecides_the_request(catalog_path: Path, catalog_doc: dict) -> None:
    """In-process: a search result of an earlier, wider request is not listed under a read request either."""
    from tooldisc.agent.mcp_server import AgentService, CatalogSource
    from tooldisc.discovery.context import context_from_mapping

    svc = AgentService(CatalogSource(catalog_path), context_from_mapping(CTX))
    svc.list_tools("please delete invoice 5")
    svc.call_tool("search_tools", {"query": "delete invoice"})
    assert "delete_invoice" in [t["name"] for t in svc.list_tools().tools]
    svc.list_tools("show my invoices")
    listed = [t["name"] for t in svc.list_tools().tools]
    assert "delete_invoice" not in listed and "list_invoices" in listed
    doc = {**catalog_doc, "tools": [{**t, "is_core": True} if t["name"] == "get_invoice" else t
                                    for t in catalog_doc["tools"]]}
    _replace(catalog_path, yaml.safe_dump(doc, sort_keys=False), 3)
    svc.list_tools("")
    h1 = svc.list_tools().meta
    assert "get_invoice" in h1["tooldisc/offer"]  # the same empty request, decided on the new catalog


def test_agent_service_inputs_are_checked_like_the_loaders(catalog_path: Path) -> None:
    from tooldisc.agent.mcp_server import AgentService, CatalogSource
    from tooldisc.discovery.context import context_from_mapping

    ctx = context_from_mapping(CTX)
    source = CatalogSource(catalog_path)
    type_errors = [
        (lambda: AgentService(str(catalog_path), ctx), "source must be a CatalogSource"),
        (lambda: AgentService(source, dict(CTX)), "context must be a Context"),
        (lambda: AgentService(source, ctx, approvals="abc123"), "approvals must be a collection of strings"),
        (lambda: AgentService(source, ctx, approvals=[1]), "approvals[0] must be a str"),
        (lambda: AgentService(source, ctx, handler="echo"), "handler must be callable"),
        (lambda: AgentService(source, ctx, k=True), "k must be an int, 'auto' or None"),
        (lambda: AgentService(source, ctx, k=5.0), "k must be an int, 'auto' or None"),
        (lambda: AgentService(source, ctx, telemetry="events.jsonl"), "telemetry must be a Telemetry"),
        (lambda: AgentService(source, ctx, expose_output_schema="yes"), "expose_output_schema must be a bool"),
        (lambda: AgentService(source, allow_default_context=1), "allow_default_context must be a bool"),
        (lambda: CatalogSource(5), "path must be a str or os.PathLike"),
        (lambda: CatalogSource(catalog_path, config={}), "config must be a RankerConfig"),
        (lambda: CatalogSource(catalog_path, report="stderr"), "report must be callable"),
    ]
    for build, words in type_errors:
        with pytest.raises(TypeError, match=words.replace("[", r"\[").replace("]", r"\]")):
            build()
    value_errors = [
        (lambda: AgentService(source, ctx, k=0), "The 'k' parameter must be an int in the range"),
        (lambda: AgentService(source, ctx, k="all"), "The 'k' parameter must be an int in the range"),
        (lambda: AgentService(source, ctx, approvals=[""]), r"approvals\[0\] must be a non-empty string"),
        (lambda: CatalogSource(catalog_path, fmt="yaml"), "fmt must be one of tooldisc, openai"),
    ]
    for build, words in value_errors:
        with pytest.raises(ValueError, match=words):
            build()
    svc = AgentService(source, ctx, approvals=["k1", "k2"])
    assert svc.approvals == frozenset({"k1", "k2"})
    with pytest.raises(TypeError, match="forced must be a collection of strings"):
        svc.list_tools("yes", forced="delete_invoice")  # a str is never a set of its characters
    with pytest.raises(TypeError, match="query must be a str or None"):
        svc.list_tools(5)
    with pytest.raises(TypeError, match="arguments must be a mapping or None"):
        svc.call_tool("list_invoices", [1, 2])
    with pytest.raises(TypeError, match="provider_name must be a str"):
        svc.call_tool(None, {})
    with pytest.raises(TypeError, match="approval must be a str or None"):
        svc.call_tool("list_invoices", {}, approval=b"k")
    with pytest.raises(ValueError, match="query and forced start a new request on search_tools or list_tools"):
        svc.call_tool("list_invoices", {}, query="delete invoice 5")
    assert svc._request is None  # nothing above started a request
    svc.list_tools("show invoices")
    assert not svc.call_tool("list_invoices", {}).is_error


def test_read_meta_is_a_closed_schema() -> None:
    from tooldisc.agent.mcp_meta import CALL, LIST, SEARCH, RequestMeta, read_meta
    from tooldisc.errors import UsageError

    assert read_meta(None, LIST) == RequestMeta()
    assert read_meta({"progressToken": 3, "io.modelcontextprotocol/x": {}}, LIST) == RequestMeta()
    assert read_meta({"tooldisc/query": "q", "tooldisc/forced": ["a"]}, SEARCH) == RequestMeta("q", ("a",))
    assert read_meta({"tooldisc/approval": "k"}, CALL) == RequestMeta(approval="k")
    bad = [({"tooldisc/Query": "q"}, LIST, "did you mean 'tooldisc/query'"),
           ({"tool\u200bdisc/query": "q"}, LIST, "unknown key"),  # a zero-width space does not hide it
           ({"ＴＯＯＬＤＩＳＣ/query": "q"}, LIST, "unknown key"),  # nor full-width letters
           ({"tooldisc": "q"}, LIST, "unknown key"),
           ({"tooldisc/forced": ["a", 3]}, LIST, "must be a list of tool names"),
           ({"tooldisc/forced": [""]}, LIST, "must be a list of tool names"),
           ({"tooldisc/approval": None}, CALL, "must be a string"),
           ({"tooldisc/forced": ["a"]}, CALL, "is not read on tools/call"),
           ({"tooldisc/approval": "k"}, SEARCH, "is not read on tools/call search_tools"),
           ([("tooldisc/query", "q")], LIST, "_meta must be an object")]
    for meta, request, words in bad:
        with pytest.raises(UsageError, match=words):
            read_meta(meta, request)
