"""Turn other formats' tool lists into tooldisc catalog documents.

Provider formats carry no policy, so imports are conservative: an OpenAI or
Anthropic tool has no side effect (UNKNOWN, never offered) unless the caller
supplies one; an MCP tool maps its annotations as DESIGN §3 says
(``readOnlyHint`` → none, ``destructiveHint`` → delete, otherwise unknown).

A document is read as exactly one format (issue 10 item 1): declared, or detected
from fields only one format uses. A document mixing two formats is refused, so a
tooldisc catalog carrying an MCP field can never lose its roles, permissions,
tenant rules or ``enabled: false`` to a silent conversion.

Each format is one :class:`ImportFormat` record in :data:`REGISTRY` (its evidence, reader,
label and the policy it carries); detection, conversion, the notes, the loader's line-oriented
choice and the CLI's choices all read it, so a new format is one record and its reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from tooldisc.errors import DataError

# Fields every format shares: never evidence of one.
_SHARED_FIELDS = ("name", "description", "parameters")

Reader = Callable[[Any, "str | None", "str | None"], dict[str, Any]]
"""(parsed document, side effect for tools without one, file) → a tooldisc catalog document."""


@dataclass(frozen=True)
class ImportFormat:
    """One catalog format tooldisc reads: the record detection, conversion, notes and the CLI read.

    ``fields``: tool fields only this format uses (wherever one appears, it is evidence of the
    format); ``native``: tooldisc's own, whose evidence is every catalog field but the shared three.
    ``field_values``: a field that is evidence only with this value (OpenAI's ``type: function``).
    ``document_fields``: top-level keys that are evidence; ``wrapper``: the key its tools list
    sits under (MCP's ``result``). ``bare_list``: whether a bare list of tools with no
    format-only field is this format, judged by its first tool (the first record that says yes
    wins). ``policy``: what the format carries — ``full`` (roles, permissions, tenant rules, side
    effects), ``side_effects`` (MCP annotations) or ``none``. ``lines``: one JSON object per
    line, chosen by declaration or by a name ending in ``suffixes``, never detected from fields;
    ``read_only_for_evaluation``: read without a side effect, its tools count as read-only (a
    benchmark's tool list), with a note saying so.
    """

    name: str
    label: str
    read: Reader
    policy: Literal["full", "side_effects", "none"] = "none"
    fields: tuple[str, ...] = ()
    native: bool = False
    field_values: Mapping[str, Any] = field(default_factory=dict)
    document_fields: tuple[str, ...] = ()
    wrapper: str | None = None
    bare_list: Callable[[Mapping[str, Any]], bool] | None = None
    lines: bool = False
    suffixes: tuple[str, ...] = ()
    read_only_for_evaluation: bool = False


def _tooldisc_fields() -> frozenset[str]:
    from tooldisc.discovery.catalog import TOOL_FIELDS

    return frozenset(TOOL_FIELDS) - frozenset(_SHARED_FIELDS)


def _as_is(data: Any, side_effect: str | None, file: str | None) -> dict[str, Any]:
    return data


def _read_openai(data: Any, side_effect: str | None, file: str | None) -> dict[str, Any]:
    tools = data.get("tools") if isinstance(data, Mapping) else data
    return {"catalog_version": None, "tools": [_from_openai(t, i, side_effect, file) for i, t in enumerate(_items(tools, file))]}


def _read_anthropic(data: Any, side_effect: str | None, file: str | None) -> dict[str, Any]:
    tools = data.get("tools") if isinstance(data, Mapping) else data
    return {"catalog_version": None, "tools": [_from_anthropic(t, i, side_effect, file) for i, t in enumerate(_items(tools, file))]}


def _read_mcp(data: Any, side_effect: str | None, file: str | None) -> dict[str, Any]:
    body = data["result"] if isinstance(data, Mapping) and "result" in data else data
    tools = body.get("tools") if isinstance(body, Mapping) else body
    return {"catalog_version": None, "tools": [_from_mcp(t, i, side_effect, file) for i, t in enumerate(_items(tools, file))]}


def _read_rows(data: Any, side_effect: str | None, file: str | None) -> dict[str, Any]:
    return _from_rows(data, side_effect, file)


# In this order: the order of FORMATS (the CLI's choices) and of the bare-list judgement.
REGISTRY: tuple[ImportFormat, ...] = (
    ImportFormat("tooldisc", "tooldisc", _as_is, policy="full", native=True, document_fields=("catalog_version",)),
    ImportFormat("openai", "OpenAI", _read_openai, fields=("function", "strict"), field_values={"type": "function"},
                 bare_list=lambda first: "parameters" in first),
    ImportFormat("anthropic", "Anthropic", _read_anthropic, fields=("input_schema", "cache_control"),
                 bare_list=lambda first: True),
    ImportFormat("mcp", "MCP", _read_mcp, policy="side_effects", fields=("inputSchema", "outputSchema", "annotations"),
                 wrapper="result"),
    ImportFormat("jsonl", "tools.jsonl", _read_rows, lines=True, suffixes=(".jsonl",), read_only_for_evaluation=True),
)
BY_NAME: dict[str, ImportFormat] = {f.name: f for f in REGISTRY}
FORMATS: tuple[str, ...] = tuple(BY_NAME)
LABELS: dict[str, str] = {f.name: f.label for f in REGISTRY}
NATIVE: str = next(f.name for f in REGISTRY if f.native)


def choices_text() -> str:
    """The format names as a sentence's list (``tooldisc, openai, anthropic, mcp or jsonl``), for help texts."""
    return f"{', '.join(FORMATS[:-1])} or {FORMATS[-1]}"


def carries_policy(fmt: str) -> bool:
    """Whether a catalog read as ``fmt`` carries tooldisc's whole policy (roles, permissions, tenant rules)."""
    return BY_NAME[fmt].policy == "full"


def line_format(file: str, declared: str | None) -> ImportFormat | None:
    """The line-oriented format ``file`` is read as: declared, or chosen by its name's ending; else None."""
    if declared is not None:
        found = BY_NAME.get(declared)
        return found if found is not None and found.lines else None
    suffix = PurePath(file).suffix.lower()
    return next((f for f in REGISTRY if f.lines and suffix in f.suffixes), None)


def _tool_list(data: Any) -> tuple[Any, str]:
    """The list of tools in a parsed document and its path (``tools``, ``<wrapper>.tools``, root)."""
    if isinstance(data, Mapping):
        for fmt in REGISTRY:
            wrapped = data.get(fmt.wrapper) if fmt.wrapper is not None else None
            if isinstance(wrapped, Mapping) and "tools" in wrapped:
                return wrapped["tools"], f"{fmt.wrapper}.tools"
        return data.get("tools"), "tools"
    return data, ""


def format_evidence(data: Any) -> list[tuple[str, str]]:
    """``(format, path)`` of the first field of each format the document holds, in file order.

    Only fields one format alone uses count (``inputSchema`` is MCP, ``roles`` is
    tooldisc, ``input_schema`` is Anthropic, ``function`` or ``type: function`` is
    OpenAI); ``name``, ``description`` and ``parameters`` are everyone's.
    """
    found: dict[str, str] = {}
    if isinstance(data, Mapping):
        for fmt in REGISTRY:
            for key in fmt.document_fields:
                if key in data:
                    found.setdefault(fmt.name, key)
            if fmt.wrapper is not None and isinstance(data.get(fmt.wrapper), Mapping) and "tools" in data[fmt.wrapper]:
                found.setdefault(fmt.name, fmt.wrapper)
                if "tools" in data:  # a tools list beside the wrapped one: tooldisc's shape
                    found.setdefault(NATIVE, "tools")
    tools, base = _tool_list(data)
    if not isinstance(tools, list):
        return list(found.items())
    # a tooldisc field first, then a field's value, then a field only another format uses
    ours, native = _tooldisc_fields(), NATIVE
    foreign = {key: fmt.name for fmt in REGISTRY for key in fmt.fields}
    values = {key: (value, fmt.name) for fmt in REGISTRY for key, value in fmt.field_values.items()}
    detectable = sum(1 for fmt in REGISTRY if not fmt.lines)
    # fields that can only be tooldisc's or no one's: once tooldisc's is placed, a tool holding nothing
    # else adds nothing (one C-level subset test instead of a look-up per field of 100,000 tools)
    from tooldisc.discovery.catalog import TOOL_FIELDS

    quiet = frozenset(k for k in TOOL_FIELDS if k in ours or (k not in values and k not in foreign))
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or (native in found and quiet.issuperset(tool)):
            continue
        for key in tool:  # the place of a format's first field only (a 100,000-tool file repeats them)
            if key in ours:
                owner = native
            elif key in values and tool[key] == values[key][0]:
                owner = values[key][1]
            else:
                owner = foreign.get(key)
            if owner is not None and owner not in found:
                found[owner] = f"{base}[{i}].{key}"
        if len(found) == detectable:
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
    if declared is None and isinstance(data, Mapping):
        declaring = next(((f.name, key) for f in REGISTRY for key in f.document_fields if key in data), None)
        if declaring is not None:
            declared, source = declaring[0], f"its {declaring[1]}"
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
        return NATIVE
    return next(f.name for f in REGISTRY if f.bare_list is not None and f.bare_list(first))


def policy_note(fmt: str, file: str, side_effect: str | None) -> str | None:
    """What an imported catalog lacks, for the output (None for a format carrying the whole policy)."""
    record = BY_NAME[fmt]
    if record.policy == "full":
        return None
    lacks = f"{file}: {record.label} tools carry no policy (roles, permissions, tenant rules)"
    if side_effect is not None:
        return f"{lacks}; every tool's side effect is {side_effect!r}"
    if record.policy == "side_effects":
        return f"{lacks}; side effects come from annotations, a tool without one is never offered"
    return f"{lacks}; with no side effect no tool is offered (convert with --side-effect)"


def to_catalog_document(
    data: Any, fmt: str, *, side_effect: str | None = None, file: str | None = None
) -> dict[str, Any]:
    """A parsed document of format ``fmt`` → a tooldisc catalog document (dict)."""
    record = BY_NAME.get(fmt)
    if record is None:
        raise DataError(f"unknown catalog format {fmt!r}; expected one of {', '.join(FORMATS)}", file=file)
    return record.read(data, side_effect, file)


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
