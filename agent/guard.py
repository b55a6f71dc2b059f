"""The execution guard: the last check before a tool call runs.

Discovery decided what the model may *see*; the guard decides whether one concrete
call may *run*, now. Its steps are fixed and ordered, and the order is the rule:

1. ``resolve``   — the name exists in the current catalog, else ``unknown_tool``;
2. ``visible``   — it was in the offer or in returned search results (or is a
   ``forced`` name of a pending approval turn), else ``not_offered`` — unless the
   caller is not authorized for it either, in which case the refusal is the very
   same ``unknown_tool`` an absent name gets: a removed tool must look absent;
3. ``authorize`` — :func:`check_tool` re-run for the context *now*, with the
   mutation of the request under which the tool was shown, else ``unauthorized``;
4. ``validate``  — the arguments are valid for the tool's full ``parameters``
   schema (JSON Schema 2020-12), else ``invalid_arguments``;
5. ``approve``   — ``requires_approval`` / ``always_confirm`` tools need an approval
   token bound to this exact call (:func:`approval_key`), else ``approval_required``.

Approval comes after authorization: consent can never override a policy denial.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from tooldisc.agent.search_tools import ToolSession
from tooldisc.discovery.catalog import Catalog, canonical_json
from tooldisc.discovery.model import Context, Offer
from tooldisc.discovery.security import check_tool

REFUSAL_CODES: tuple[str, ...] = (
    "unknown_tool", "not_offered", "unauthorized", "invalid_arguments", "approval_required",
)

# What the model is told. unknown_tool's text never depends on why the name is
# unknown, so an unauthorized tool that was never offered is indistinguishable from
# a name that does not exist.
MODEL_TEXT: dict[str, str] = {
    "unknown_tool": "There is no tool with that name. Use only the tools you were given, or search_tools.",
    "not_offered": "That tool was not offered for this request. Call search_tools to find and load it first.",
    "unauthorized": "That tool is not available for this request any more.",
    "invalid_arguments": "The arguments do not match the tool's schema: {detail}",
    "approval_required": "This call needs the user's approval before it can run. Ask the user to confirm.",
}


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the host received it (tooldisc name, already mapped back)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    approval: str | None = None  # an approval token (see :func:`approval_key`)


@dataclass(frozen=True)
class GuardRefusal:
    """Why a call may not run. ``message`` is for the model; ``reason`` for operators only."""

    code: str
    message: str
    reason: str
    step: str

    def to_model(self) -> dict[str, str]:
        return {"error": self.code, "message": self.message}


@dataclass(frozen=True)
class GuardDecision:
    call: ToolCall
    refusal: GuardRefusal | None
    mutation: str | None

    @property
    def allowed(self) -> bool:
        return self.refusal is None


def approval_key(name: str, arguments: Mapping[str, Any]) -> str:
    """The token that approves exactly this call: SHA-256 of the name and canonical arguments."""
    body = canonical_json({"tool": name, "arguments": dict(arguments)})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _refuse(call: ToolCall, code: str, reason: str, step: str, mutation: str | None,
            detail: str = "") -> GuardDecision:
    message = MODEL_TEXT[code].format(detail=detail) if code == "invalid_arguments" else MODEL_TEXT[code]
    return GuardDecision(call, GuardRefusal(code, message, reason, step), mutation)


def _shown_mutation(source: Offer | ToolSession, name: str, context: Context) -> str | None:
    if isinstance(source, ToolSession):
        mutation = source.mutation_for(name)
        fallback = source.mutation
    else:
        mutation = source.mutation if name in source.names else None
        fallback = source.mutation
    if mutation is None and name in context.forced:
        return fallback  # a pending approval turn: the host forced this name
    return mutation


def guard(call: ToolCall, offer_or_session: Offer | ToolSession, context: Context, catalog: Catalog,
          *, approvals: Collection[str] = ()) -> GuardDecision:
    """Decide whether ``call`` may run now. See the module docstring for the order."""
    tool = catalog.by_name.get(call.name)
    if tool is None:
        return _refuse(call, "unknown_tool", "no tool of that name in the catalog", "resolve", None)
    source_mutation = offer_or_session.mutation
    mutation = _shown_mutation(offer_or_session, call.name, context)
    if mutation is None:
        refusal = check_tool(tool, context, source_mutation)
        if refusal is not None:
            return _refuse(call, "unknown_tool", f"never offered and not authorized: {refusal.reason}",
                           "visible", None)
        return _refuse(call, "not_offered", "authorized but neither offered nor returned by search_tools",
                       "visible", source_mutation)
    refusal = check_tool(tool, context, mutation)
    if refusal is not None:
        return _refuse(call, "unauthorized", f"{refusal.step}: {refusal.reason}", "authorize", mutation)
    problem = argument_problem(tool.parameters, call.arguments)
    if problem is not None:
        return _refuse(call, "invalid_arguments", problem, "validate", mutation, detail=problem)
    if (tool.requires_approval or tool.always_confirm) and not (
        call.approval is not None and call.approval == approval_key(tool.name, call.arguments)
        and call.approval in approvals
    ):
        return _refuse(call, "approval_required", "the tool needs an approval token for this exact call",
                       "approve", mutation)
    return GuardDecision(call, None, mutation)


def argument_problem(schema: Mapping[str, Any] | None, arguments: Any) -> str | None:
    """The first schema violation of ``arguments`` (path and message), or None when valid.

    Arguments must be a JSON object; an absent schema accepts any object (DESIGN §3).
    """
    import jsonschema

    if not isinstance(arguments, Mapping):
        return f"arguments must be an object; got {type(arguments).__name__}"
    if schema is None:
        return None
    validator = jsonschema.Draft202012Validator(dict(schema))
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return None
    first = errors[0]
    where = ".".join(str(p) for p in first.absolute_path) or "(root)"
    return f"{where}: {first.message}"
