"""Turn other formats' tool lists into tooldisc catalog documents.

Provider formats carry no policy, so imports are conservative: an OpenAI or
Anthropic tool has no side effect (UNKNOWN, never offered) unless the caller
supplies one; an MCP tool maps its annotations as DESIGN §3 says
(``readOnlyHint`` → none, ``destructiveHint`` → delete, otherwise unknown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldisc.errors import DataError

FORMATS = ("tooldisc", "openai", "anthropic", "mcp", "jsonl")


def detect_format(data: Any) -> str:
    """Name the format of a parsed document (see :data:`FORMATS`)."""
    if isinstance(data, Mapping) and isinstance(data.get("result"), Mapping) and "tools" in data["result"]:
        return "mcp"
    items: Any = data.get("tools") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        return "tooldisc"
    first = next((t for t in items if isinstance(t, Mapping)), None)
    if first is None:
        return "tooldisc"
    if first.get("type") == "function" and isinstance(first.get("function"), Mapping):
        return "openai"
    if "inputSchema" in first or "annotations" in first:
        return "mcp"
    if "input_schema" in first:
        return "anthropic"
    if isinstance(data, list):
        return "openai" if "parameters" in first else "anthropic"
    return "tooldisc"


def to_catalog_document(
    data: Any, fmt: str, *, side_effect: str | None = None, file: str | None = None
) -> dict[str, Any]:
    """A parsed document of format ``fmt`` → a tooldisc catalog document (dict)."""
    if fmt == "tooldisc":
        return data
    if fmt == "jsonl":
        return _from_rows(data, side_effect, file)
    if fmt == "mcp":
        body = data["result"] if isinstance(data, Mapping) and "result" in data else data
        tools = body.get("tools") if isinstance(body, Mapping) else body
        return {"catalog_version": None, "tools": [_from_mcp(t, i, side_effect, file) for i, t in enumerate(_items(tools, file))]}
    if fmt == "openai":
        tools = data.get("tools") if isinstance(data, Mapping) else data
        return {"catalog_version": None, "tools": [_from_openai(t, i, side_effect, file) for i, t in enumerate(_items(tools, file))]}
    if fmt == "anthropic":
        tools = data.get("tools") if isinstance(data, Mapping) else data
        return {"catalog_version": None, "tools": [_from_anthropic(t, i, side_effect, file) for i, t in enumerate(_items(tools, file))]}
    raise DataError(f"unknown catalog format {fmt!r}; expected one of {', '.join(FORMATS)}", file=file)


def _items(tools: Any, file: str | None) -> Sequence[Any]:
    if not isinstance(tools, list):
        raise DataError("expected a list of tools", file=file, where="tools")
    return tools


def _need(tool: Any, key: str, where: str, file: str | None) -> Any:
    if not isinstance(tool, Mapping) or key not in tool:
        raise DataError(f"missing required field {key!r}", file=file, where=where)
    return tool[key]


def _from_openai(tool: Any, i: int, side_effect: str | None, file: str | None) -> dict[str, Any]:
    fn = tool.get("function", tool) if isinstance(tool, Mapping) else tool
    name = _need(fn, "name", f"tools[{i}]", file)
    return {"name": name, "description": fn.get("description"), "parameters": fn.get("parameters"),
            "side_effect": side_effect}


def _from_anthropic(tool: Any, i: int, side_effect: str | None, file: str | None) -> dict[str, Any]:
    name = _need(tool, "name", f"tools[{i}]", file)
    return {"name": name, "description": tool.get("description"), "parameters": tool.get("input_schema"),
            "side_effect": side_effect}


def mcp_side_effect(annotations: Any) -> str | None:
    """DESIGN §3: readOnlyHint → none; destructiveHint → delete; otherwise unknown."""
    if not isinstance(annotations, Mapping):
        return None
    if annotations.get("readOnlyHint") is True:
        return "none"
    if annotations.get("destructiveHint") is True:
        return "delete"
    return None


def _from_mcp(tool: Any, i: int, side_effect: str | None, file: str | None) -> dict[str, Any]:
    name = _need(tool, "name", f"tools[{i}]", file)
    mapped = mcp_side_effect(tool.get("annotations"))
    out: dict[str, Any] = {
        "name": name,
        "description": tool.get("description"),
        "parameters": tool.get("inputSchema"),
        "side_effect": mapped if mapped is not None else side_effect,
    }
    if isinstance(tool.get("outputSchema"), Mapping):
        out["output_schema"] = tool["outputSchema"]
    return out


def _from_rows(rows: Sequence[Any], side_effect: str | None, file: str | None) -> dict[str, Any]:
    """Benchmark ``tools.jsonl``: name, description, parameters; nothing else is policy."""
    tools = []
    for line, row in rows:
        where = f"line {line}"
        name = _need(row, "name", where, file)
        if not isinstance(name, str) or not name:
            raise DataError("'name' must be a non-empty string", file=file, where=where)
        params = row.get("parameters")
        tools.append({
            "name": name,
            "description": row.get("description") if isinstance(row.get("description"), str) else None,
            "parameters": params if isinstance(params, Mapping) else None,
            "side_effect": side_effect,
        })
    return {"catalog_version": None, "tools": tools}
