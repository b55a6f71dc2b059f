"""Turn other formats' tool lists into tooldisc catalog documents.

Provider formats carry no policy, so imports are conservative: an OpenAI or
Anthropic tool has no side effect (UNKNOWN, never offered) unless the caller
supplies one; an MCP tool maps its annotations as DESIGN §3 says
(``readOnlyHint`` → none, ``destructiveHint`` → delete, otherwise unknown).

A document is read as exactly one format (issue 10 item 1): declared, or detected
from fields only one format uses. A document mixing two formats is refused, so a
tooldisc catalog carrying an MCP field can never lose its roles, permissions,
tenant rules or ``enabled: false`` to a silent conversion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldisc.errors import DataError

FORMATS = ("tooldisc", "openai", "anthropic", "mcp", "jsonl")
LABELS = {"tooldisc": "tooldisc", "openai": "OpenAI", "anthropic": "Anthropic", "mcp": "MCP",
          "jsonl": "tools.jsonl"}

# Fields that belong to one format only: wherever one appears, it is evidence of that
# format. tooldisc's are every catalog field but the three all formats share.
_SHARED_FIELDS = ("name", "description", "parameters")
_FOREIGN_FIELDS = {
    "mcp": ("inputSchema", "outputSchema", "annotations"),
    "anthropic": ("input_schema", "cache_control"),
    "openai": ("function", "strict"),
}


def _tooldisc_fields() -> frozenset[str]:
    from tooldisc.discovery.catalog import TOOL_FIELDS

    return frozenset(TOOL_FIELDS) - frozenset(_SHARED_FIELDS)


def _tool_list(data: Any) -> tuple[Any, str]:
    """The list of tools in a parsed document and its path (``tools``, ``result.tools``, root)."""
    if isinstance(data, Mapping):
        result = data.get("result")
        if isinstance(result, Mapping) and "tools" in result:
            return result["tools"], "result.tools"
        return data.get("tools"), "tools"
    return data, ""


def format_evidence(data: Any) -> list[tuple[str, str]]:
    """``(format, path)`` of the first field of each format the document holds, in file order.

    Only fields one format alone uses count (``inputSchema`` is MCP, ``roles`` is
    tooldisc, ``input_schema`` is Anthropic, ``function`` or ``type: function`` is
    OpenAI); ``name``, ``description`` and ``parameters`` are everyone's.
    """
    ours = _tooldisc_fields()
    found: dict[str, str] = {}
    if isinstance(data, Mapping):
        if "catalog_version" in data:
            found.setdefault("tooldisc", "catalog_version")
        if isinstance(data.get("result"), Mapping) and "tools" in data["result"]:
            found.setdefault("mcp", "result")
            if "tools" in data:
                found.setdefault("tooldisc", "tools")
    tools, base = _tool_list(data)
    if not isinstance(tools, list):
        return list(found.items())
    foreign = {key: fmt for fmt, keys in _FOREIGN_FIELDS.items() for key in keys}
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        for key in tool:  # the place of a format's first field only (a 100,000-tool file repeats them)
            if key in ours:
                fmt = "tooldisc"
            elif key == "type" and tool[key] == "function":
                fmt = "openai"
            else:
                fmt = foreign.get(key)
            if fmt is not None and fmt not in found:
                found[fmt] = f"{base}[{i}].{key}"
        if len(found) == len(FORMATS) - 1:
            break
    return list(found.items())


def detect_format(data: Any, declared: str | None = None, file: str | None = None) -> str:
    """The one format of a parsed document (see :data:`FORMATS`), or a :class:`DataError`.

    ``declared`` (``--catalog-format``) wins, and a top-level ``catalog_version``
    declares tooldisc's own; a field of any other format is then an error. Without a
    declaration the format follows from the fields only one format uses; fields of
    two formats are an error naming the first field that mixed them — a tooldisc
    catalog with an MCP ``annotations`` key must never be read as MCP, dropping its
    roles, permissions and ``enabled: false``. With no such field at all, the shape
    decides: an object with ``tools`` is tooldisc, a bare list OpenAI or Anthropic.
    """
    if declared is not None and declared not in FORMATS:
        raise DataError(f"unknown catalog format {declared!r}; expected one of {', '.join(FORMATS)}", file=file)
    evidence = format_evidence(data)
    source = f"--catalog-format {declared}"
    if declared is None and isinstance(data, Mapping) and "catalog_version" in data:
        declared, source = "tooldisc", "its catalog_version"
    if declared is not None:
        for fmt, where in evidence:
            if fmt != declared:
                raise DataError(f"{LABELS[fmt]} field in a document read as {LABELS[declared]} ({source}); "
                                "a catalog is exactly one format: remove the field or convert the file",
                                file=file, where=where)
        return declared
    if len(evidence) > 1:
        (first, first_where), (second, where) = evidence[0], evidence[1]
        raise DataError(f"{LABELS[second]} field mixed with {LABELS[first]} fields (first: {first_where}); "
                        "a catalog is exactly one format: remove one, or declare it (--catalog-format)",
                        file=file, where=where)
    if evidence:
        return evidence[0][0]
    first = next((t for t in data if isinstance(t, Mapping)), None) if isinstance(data, list) else None
    if first is None:  # not a list of tools: tooldisc's validation says what a catalog must be
        return "tooldisc"
    return "openai" if "parameters" in first else "anthropic"


def policy_note(fmt: str, file: str, side_effect: str | None) -> str | None:
    """What an imported catalog lacks, for the output (None for tooldisc's own format)."""
    if fmt == "tooldisc":
        return None
    lacks = f"{file}: {LABELS[fmt]} tools carry no policy (roles, permissions, tenant rules)"
    if side_effect is not None:
        return f"{lacks}; every tool's side effect is {side_effect!r}"
    if fmt == "mcp":
        return f"{lacks}; side effects come from annotations, a tool without one is never offered"
    return f"{lacks}; with no side effect no tool is offered (convert with --side-effect)"


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


def _policy_lookalike(key: Any) -> str | None:
    """The policy field a tools.jsonl key is a variant of (``Roles``, ``permission``, ``disabled``), or None.

    The format ignores unknown keys (benchmarks carry many), but one that spells a policy field
    another way would be a policy the reader silently drops: refused like the field itself.
    """
    from tooldisc.closed_schema import nearest
    from tooldisc.discovery.catalog import POLICY_FIELDS

    if not isinstance(key, str) or key in _SHARED_FIELDS:
        return None
    return nearest(key, POLICY_FIELDS, 0.85)


def _from_rows(rows: Sequence[Any], side_effect: str | None, file: str | None) -> dict[str, Any]:
    """Benchmark ``tools.jsonl``: name, description, parameters; nothing else is policy.

    A row carrying a tooldisc policy or discovery field is refused rather than
    silently stripped of it: such a file is a tooldisc catalog in the wrong format.
    """
    ours = _tooldisc_fields()
    looks: dict[str, str | None] = {}  # key → the policy field it passes for (keys repeat on every row)
    tools = []
    for line, row in rows:
        where = f"line {line}"
        mixed = next((k for k in row if k in ours), None) if isinstance(row, Mapping) else None
        if mixed is not None:
            raise DataError(f"tooldisc field {mixed!r} in a tools.jsonl, which carries no policy; "
                            "a catalog is exactly one format: write it as a tooldisc YAML/JSON catalog",
                            file=file, where=where)
        for key in row if isinstance(row, Mapping) else ():
            if key not in looks:
                looks[key] = _policy_lookalike(key)
            if looks[key] is not None:
                raise DataError(f"{key!r} reads as the tooldisc policy field {looks[key]!r}, and a tools.jsonl "
                                "carries no policy (its other keys are ignored); write a tooldisc catalog",
                                file=file, where=where)
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
