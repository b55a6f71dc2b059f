"""Render tools in a provider's format: OpenAI and Anthropic ``tools``, MCP ``tools/list``.

The inverse of :mod:`tooldisc.discovery.importers`. Names go through a
:class:`~tooldisc.discovery.catalog.names.NameMap` so that every provider accepts them and a
tool call maps back exactly. Exporters render what they are given: callers pass the
tools discovery already authorized (an offer), never the raw catalog, because a
rendered schema is something the model may call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from tooldisc.discovery.catalog.names import NameMap
from tooldisc.discovery.model import Tool
from tooldisc.errors import UsageError

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object"}
# Anthropic's server-side tool search variants; one must accompany deferred tools.
ANTHROPIC_TOOL_SEARCH: dict[str, dict[str, str]] = {
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
}


def input_schema(tool: Tool, *, compact: bool = False) -> dict[str, Any]:
    """The argument schema a model sees: compact when asked and present, else full.

    Always ``"type": "object"`` at the root: every provider requires it (the MCP SDK
    refuses a whole ``tools/list`` over one schema without it). A tool without
    parameters gets ``{"type": "object"}``, which is what an absent schema means
    (DESIGN §3); a schema without a root ``type`` is read as an object schema and
    gets it added — tool arguments are always an object, and the guard refuses any
    other value, so the added type narrows nothing the guard accepts. A root
    ``type`` that is not ``"object"`` is quarantined at catalog load
    (:func:`~tooldisc.discovery.catalog.schema_check.argument_schema_problem`); a tool
    built in memory with one is refused here rather than exported.
    """
    schema = tool.compact_parameters if compact and tool.compact_parameters is not None else tool.parameters
    if schema is None:
        return dict(EMPTY_PARAMETERS)
    out = copy.deepcopy(dict(schema))
    if "type" not in out:
        return {**EMPTY_PARAMETERS, **out}
    if out["type"] != "object":
        from tooldisc.errors import DataError

        key = "compact_parameters" if schema is tool.compact_parameters else "parameters"
        raise DataError(f"{key}.type must be 'object' (tool arguments are a JSON object); got {out['type']!r}",
                        where=f"tool {tool.name!r}")
    return out


def _name_map(tools: Sequence[Tool], names: NameMap | None) -> NameMap:
    return names if names is not None else NameMap(t.name for t in tools)


def to_openai(tools: Iterable[Tool], *, names: NameMap | None = None, compact: bool = False) -> list[dict[str, Any]]:
    """OpenAI chat ``tools``: ``[{"type": "function", "function": {...}}]``."""
    tools = list(tools)
    nm = _name_map(tools, names)
    return [
        {
            "type": "function",
            "function": {
                "name": nm.to_provider(t.name),
                "description": t.description,
                "parameters": input_schema(t, compact=compact),
            },
        }
        for t in tools
    ]


def to_anthropic(
    tools: Iterable[Tool],
    *,
    names: NameMap | None = None,
    compact: bool = False,
    full: Collection[str] | None = None,
    tool_search: str | None = "bm25",
) -> list[dict[str, Any]]:
    """Anthropic Messages ``tools``, optionally with deferred loading.

    ``full`` names the tools sent in full (tooldisc names); every other tool is marked
    ``"defer_loading": true`` so the model loads it on demand through Anthropic's tool
    search. When any tool is deferred, the ``tool_search`` server tool ("bm25" or
    "regex") is put first, since the API refuses deferred tools without one; pass
    ``None`` when the request adds its own. ``full=None`` sends every tool in full.
    """
    tools = list(tools)
    nm = _name_map(tools, names)
    if isinstance(full, str | bytes):  # "name" in "a_name" would match by substring
        raise TypeError(f"full must be a collection of tool names or None, not a bare {type(full).__name__}")
    if tool_search is not None and tool_search not in ANTHROPIC_TOOL_SEARCH:
        raise UsageError(f"tool_search must be one of {', '.join(ANTHROPIC_TOOL_SEARCH)} or None; got {tool_search!r}")
    out: list[dict[str, Any]] = []
    for t in tools:
        entry: dict[str, Any] = {
            "name": nm.to_provider(t.name),
            "description": t.description,
            "input_schema": input_schema(t, compact=compact),
        }
        if full is not None and t.name not in full:
            entry["defer_loading"] = True
        out.append(entry)
    if tool_search is not None and any(e.get("defer_loading") for e in out):
        out.insert(0, dict(ANTHROPIC_TOOL_SEARCH[tool_search]))
    return out


def mcp_annotations(side_effect: str | None) -> dict[str, bool]:
    """MCP hints from a side effect, conservatively.

    Only ``none`` claims read-only. For every other value ``destructiveHint`` is left
    out except for ``delete``: MCP clients then assume the default (destructive),
    which is the safe reading of a write, export, execute or unknown tool.
    """
    if side_effect == "none":
        return {"readOnlyHint": True}
    if side_effect == "delete":
        return {"readOnlyHint": False, "destructiveHint": True}
    return {"readOnlyHint": False}


def to_mcp(tools: Iterable[Tool], *, names: NameMap | None = None, compact: bool = False) -> dict[str, Any]:
    """An MCP ``tools/list`` result: ``{"tools": [{name, description, inputSchema, annotations}]}``."""
    tools = list(tools)
    nm = _name_map(tools, names)
    rendered = []
    for t in tools:
        entry: dict[str, Any] = {
            "name": nm.to_provider(t.name),
            "description": t.description,
            "inputSchema": input_schema(t, compact=compact),
            "annotations": mcp_annotations(t.side_effect),
        }
        if t.output_schema is not None:
            entry["outputSchema"] = copy.deepcopy(dict(t.output_schema))
        rendered.append(entry)
    return {"tools": rendered}


def render(tools: Iterable[Tool], provider: str, *, names: NameMap | None = None, compact: bool = False) -> Any:
    """One entry point for every provider in :data:`EXPORTERS` (``openai``, ``anthropic``, ``mcp``)."""
    from tooldisc.params import Options, checked

    checked(Options(PROVIDERS), provider, "provider", UsageError)
    return EXPORTERS[provider](tools, names=names, compact=compact)


# One record per export format: the CLI's --to choices and render's dispatch both derive from it.
EXPORTERS: dict[str, Callable[..., Any]] = {"openai": to_openai, "anthropic": to_anthropic, "mcp": to_mcp}
PROVIDERS = tuple(EXPORTERS)
