"""Plan validation (seed 000, DESIGN §8): every finding, in check order, with a stable code.

A plan is JSON: ``decision`` (``tools`` | ``answer`` | ``insufficient``) and up to 8
``actions``, each ``{id, tool, arguments, depends_on}``. An argument may take its
value from an earlier action's output with a ``$from`` reference, in either form:

* object form: ``{"$from": "a1", "path": "items.0.id"}`` (``path`` may be ``""``
  for the whole output);
* string form: ``"$from:a1.items.0.id"`` (or ``"$from:a1"``). Action ids match
  ``^[A-Za-z0-9_-]{1,64}$``, so the first ``.`` ends the id.

A path is dot-separated; a segment of digits (or ``*``) indexes an array. A path
is *declared* only when the source tool's ``output_schema`` has it (``properties``
for names, ``items`` for indexes); anything else is speculative.

Checks, in this order (a finding's position in the report follows it, then the
action order): :data:`CHECKS`. Before the input-schema check, each reference is
replaced by a placeholder of the type its output path declares, and only *type*
errors are reported at reference locations (the real value is unknown).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tooldisc.closed_schema import check_keys
from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.model import Tool
from tooldisc.errors import DataError

CHECKS: tuple[str, ...] = (
    "unknown_tool",
    "write_tool_forbidden",
    "reference_path_invalid",
    "reference_value_missing",
    "reference_dependency_missing",
    "reference_source_invalid",
    "speculative_reference_path",
    "arguments_schema_invalid",
    "premature_insufficient",
    "dependency_not_earlier",
    "duplicate_action_id",
)
DECISIONS: tuple[str, ...] = ("tools", "answer", "insufficient")
MAX_ACTIONS = 8
HIGH_RISK_LEVELS = frozenset({"high", "critical"})
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SEGMENT = re.compile(r"^(?:[A-Za-z0-9_-]+|\*)$")
STRING_PREFIX = "$from:"

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["decision", "actions"],
    "patternProperties": {"^x-": {}},
    "additionalProperties": False,
    "properties": {
        "decision": {"enum": list(DECISIONS)},
        "actions": {
            "type": "array",
            "maxItems": MAX_ACTIONS,
            "items": {
                "type": "object",
                "required": ["id", "tool"],
                "patternProperties": {"^x-": {}},
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": _ID.pattern},
                    "tool": {"type": "string", "minLength": 1},
                    "arguments": {"type": "object"},
                    "depends_on": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
    "if": {"properties": {"decision": {"const": "tools"}}},
    "then": {"properties": {"actions": {"minItems": 1}}},
}


@dataclass(frozen=True)
class Action:
    id: str
    tool: str
    arguments: Mapping[str, Any]
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    decision: str
    actions: tuple[Action, ...]


@dataclass(frozen=True)
class Finding:
    code: str
    action: str | None  # the action id, or None for a plan-level finding
    where: str  # e.g. "actions[1].arguments.customer_id"
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "action": self.action, "where": self.where, "message": self.message}


@dataclass(frozen=True)
class PlanReport:
    findings: tuple[Finding, ...]

    @property
    def valid(self) -> bool:
        return not self.findings

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(f.code for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "findings": [f.to_dict() for f in self.findings], "checks": list(CHECKS)}


PLAN_FIELDS: tuple[str, ...] = ("decision", "actions")
ACTION_FIELDS: tuple[str, ...] = ("id", "tool", "arguments", "depends_on")


def parse_plan(data: Any, *, file: str | None = None) -> Plan:
    """A raw plan document → :class:`Plan`; a malformed shape is a :class:`DataError` (exit 2).

    Closed (tooldisc.closed_schema): an unknown key of the plan or of an action is an error
    naming the nearest known one (checked first: ``Actions`` is a misspelling, not a missing
    field); ``x-`` keys are extension data and never read. ``arguments`` are the tool's own.
    """
    import jsonschema

    if isinstance(data, Mapping):
        check_keys(data, PLAN_FIELDS, file=file)
        actions = data.get("actions")
        for i, action in enumerate(actions if isinstance(actions, list) else ()):
            if isinstance(action, Mapping):
                check_keys(action, ACTION_FIELDS, where=f"actions[{i}]", file=file)
    errors = sorted(jsonschema.Draft202012Validator(PLAN_SCHEMA).iter_errors(data),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        e = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p))
                        for i, p in enumerate(e.absolute_path)) or "(root)"
        raise DataError(f"not a plan: {e.message}", file=file, where=where)
    actions = tuple(
        Action(a["id"], a["tool"], dict(a.get("arguments") or {}), tuple(a.get("depends_on") or ()))
        for a in data["actions"]
    )
    return Plan(data["decision"], actions)


def load_plan(path: str | os.PathLike[str]) -> Plan:
    from tooldisc.discovery.catalog.io import parse_document, read_text

    file = str(path)
    return parse_plan(parse_document(read_text(path, max_bytes=1024 * 1024, what="plan"), file), file=file)


def is_mutative(tool: Tool) -> bool:
    """Plans are read-only: a write, an unknown side effect, confirmation or high risk is refused."""
    return (tool.side_effect != "none" or tool.requires_approval or tool.always_confirm
            or (tool.risk_level or "").lower() in HIGH_RISK_LEVELS)


@dataclass(frozen=True)
class Reference:
    location: tuple[str | int, ...]  # where in the arguments
    source: str | None
    path: tuple[str, ...]
    problem: str | None  # why it is malformed, or None


def _parse_path(text: Any) -> tuple[str, ...] | None:
    if not isinstance(text, str):
        return None
    if text == "":
        return ()
    parts = tuple(text.split("."))
    return parts if all(_SEGMENT.match(p) for p in parts) else None


def _reference(value: Any, location: tuple[str | int, ...]) -> Reference | None:
    if isinstance(value, Mapping) and "$from" in value:
        extra = sorted(set(value) - {"$from", "path"})
        source, path = value.get("$from"), _parse_path(value.get("path", ""))
        if not isinstance(source, str) or not _ID.match(source):
            return Reference(location, None, (), f"'$from' must be an action id; got {source!r}")
        if extra:
            return Reference(location, source, (), f"a reference has only '$from' and 'path'; got {', '.join(extra)}")
        if path is None:
            return Reference(location, source, (), f"malformed path {value.get('path')!r}")
        return Reference(location, source, path, None)
    if isinstance(value, str) and value.startswith(STRING_PREFIX):
        body = value[len(STRING_PREFIX):]
        source, _, rest = body.partition(".")
        path = _parse_path(rest)
        if not _ID.match(source) or path is None or (rest == "" and body.endswith(".")):
            return Reference(location, None, (), f"malformed reference {value!r}")
        return Reference(location, source, path, None)
    return None


def iter_references(arguments: Any, location: tuple[str | int, ...] = ()) -> Iterator[Reference]:
    """Every ``$from`` reference in ``arguments``, in document order."""
    ref = _reference(arguments, location)
    if ref is not None:
        yield ref
        return
    if isinstance(arguments, Mapping):
        for key, value in arguments.items():
            yield from iter_references(value, (*location, str(key)))
    elif isinstance(arguments, list):
        for i, value in enumerate(arguments):
            yield from iter_references(value, (*location, i))


def resolve_output_path(schema: Mapping[str, Any], path: Sequence[str]) -> Mapping[str, Any] | None:
    """The sub-schema at ``path`` of an output schema, or None when the path is not declared."""
    node: Any = schema
    for seg in path:
        if not isinstance(node, Mapping):
            return None
        if seg.isdigit() or seg == "*":
            node = node.get("items")
        else:
            node = (node.get("properties") or {}).get(seg)
        if node is None:
            return None
    return node if isinstance(node, Mapping) else None


_PLACEHOLDERS: dict[str, Any] = {"integer": 0, "number": 0, "string": "", "boolean": False,
                                 "array": [], "object": {}, "null": None}


def _placeholder(node: Mapping[str, Any] | None) -> tuple[Any, bool]:
    """A value of the declared type, and whether the type is known."""
    if node is None:
        return None, False
    t = node.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if isinstance(t, str) and t in _PLACEHOLDERS:
        return _PLACEHOLDERS[t], True
    return None, False


def _where(index: int, location: Sequence[str | int], base: str = "arguments") -> str:
    out = f"actions[{index}].{base}"
    for p in location:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _replace(arguments: Any, location: tuple[str | int, ...], value: Any) -> Any:
    if not location:
        return value
    head, rest = location[0], location[1:]
    if isinstance(arguments, Mapping):
        return {**arguments, head: _replace(arguments[head], rest, value)}
    items = list(arguments)
    items[int(head)] = _replace(items[int(head)], rest, value)
    return items


def validate_plan(plan: Plan | Mapping[str, Any], catalog: Catalog, routed: Sequence[str] = ()) -> PlanReport:
    """Run every check and report all findings, ordered by :data:`CHECKS` then action."""
    from tooldisc.discovery.catalog.schema_check import validate

    if not isinstance(plan, Plan):
        plan = parse_plan(plan)
    tools = catalog.by_name
    ids = [a.id for a in plan.actions]
    by_id: dict[str, tuple[int, Action]] = {}
    for i, a in enumerate(plan.actions):
        by_id.setdefault(a.id, (i, a))
    found: list[tuple[int, int, Finding]] = []

    def add(code: str, i: int | None, where: str, message: str) -> None:
        action = plan.actions[i].id if i is not None else None
        found.append((CHECKS.index(code), -1 if i is None else i, Finding(code, action, where, message)))

    for i, a in enumerate(plan.actions):
        tool = tools.get(a.tool)
        if tool is None:
            add("unknown_tool", i, f"actions[{i}].tool", f"no tool {a.tool!r} in the catalog")
        elif is_mutative(tool):
            add("write_tool_forbidden", i, f"actions[{i}].tool",
                f"{a.tool!r} is not read-only (side effect {tool.side_effect!r}"
                + (", needs approval" if tool.requires_approval or tool.always_confirm else "")
                + (f", risk {tool.risk_level}" if (tool.risk_level or "").lower() in HIGH_RISK_LEVELS else "")
                + "); plans may only read")
        args: Any = dict(a.arguments)
        type_only: list[tuple[str | int, ...]] = []
        for ref in iter_references(a.arguments):
            where = _where(i, ref.location)
            node = None
            if ref.problem is not None:
                add("reference_path_invalid", i, where, ref.problem)
            elif ref.source not in by_id:
                add("reference_value_missing", i, where, f"no action {ref.source!r} in this plan")
            else:
                if ref.source not in a.depends_on:
                    add("reference_dependency_missing", i, where,
                        f"references {ref.source!r} but does not list it in depends_on")
                src_index, src = by_id[ref.source]
                src_tool = tools.get(src.tool)
                if src_index == i:
                    add("reference_source_invalid", i, where, "an action cannot reference its own output")
                elif src_tool is None or src_tool.output_schema is None:
                    why = "is unknown" if src_tool is None else "declares no output_schema"
                    add("reference_source_invalid", i, where, f"source tool {src.tool!r} {why}")
                else:
                    node = resolve_output_path(src_tool.output_schema, ref.path)
                    if node is None:
                        add("speculative_reference_path", i, where,
                            f"{src.tool!r} does not declare the output path {'.'.join(ref.path) or '(root)'!r}")
            value, _known = _placeholder(node)
            args = _replace(args, ref.location, value)
            type_only.append(ref.location)
        if tool is not None and tool.parameters is not None:
            # The same safe evaluation as the guard: RE2 patterns, bounded depth, no remote $ref.
            result = validate(tool.parameters, args)
            if result.unusable is not None:
                add("arguments_schema_invalid", i, _where(i, ()), result.unusable)
            for err in result.violations:
                loc = err.path
                if loc in type_only and (err.keyword != "type" or _placeholder_unknown(args, loc)):
                    continue  # the real value is unknown; only a declared type mismatch counts
                add("arguments_schema_invalid", i, _where(i, loc), err.message)
    if plan.decision == "insufficient" and routed:
        tried = {a.tool for a in plan.actions}
        untried = [n for n in routed if n in tools and not is_mutative(tools[n]) and n not in tried]
        if untried:
            add("premature_insufficient", None, "decision",
                f"'insufficient' while routed tool(s) {', '.join(untried)} remain untried")
    seen: set[str] = set()
    for i, a in enumerate(plan.actions):
        for dep in a.depends_on:
            if dep not in seen:
                add("dependency_not_earlier", i, f"actions[{i}].depends_on",
                    f"{dep!r} is not an earlier action" + ("" if dep in ids else " (no such action)"))
        if a.id in seen:
            add("duplicate_action_id", i, f"actions[{i}].id", f"action id {a.id!r} is used more than once")
        seen.add(a.id)
    found.sort(key=lambda x: (x[0], x[1]))
    return PlanReport(tuple(f for _, _, f in found))


def _placeholder_unknown(args: Any, loc: tuple[str | int, ...]) -> bool:
    node = args
    for p in loc:
        node = node[p] if isinstance(node, Mapping) else node[int(p)]
    return node is None
