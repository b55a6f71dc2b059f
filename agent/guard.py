"""The execution guard: the last check before a tool call runs.

Discovery decided what the model may *see*; the guard decides whether one concrete
call may *run*, now. Its steps are fixed and ordered, and the order is the rule:

1. ``resolve``   — the name exists in the current catalog, else ``unknown_tool``;
2. ``visible``   — the model was shown it in this session (offered, or returned by
   ``search_tools``, in any turn) or it is a ``forced`` name of a pending approval
   turn, else ``not_offered`` — unless the current request does not authorize it
   either, in which case the refusal is the very same ``unknown_tool`` an absent
   name gets: a removed tool must look absent;
3. ``authorize`` — the §4 filter (:func:`check_tool`) for the context *now* and the
   mutation class of the *current* request (the session's latest offer), else
   ``unauthorized``. Being shown in an earlier turn never authorizes: history may
   rank, it never authorizes;
4. ``validate``  — the arguments are valid for the tool's full ``parameters``
   schema (JSON Schema 2020-12, evaluated by :mod:`tooldisc.discovery.catalog.schema_check`:
   RE2 for patterns, bounded depth, no remote ``$ref``), else ``invalid_arguments``
   — a schema that cannot be evaluated safely refuses too, it never raises;
5. ``approve``   — ``requires_approval`` / ``always_confirm`` tools need an approval
   token bound to this exact call (:func:`approval_key`), else ``approval_required``.

Approval comes after authorization: consent can never override a policy denial.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from tooldisc import values
from tooldisc.agent.search_tools import ToolSession
from tooldisc.discovery.catalog import Catalog, canonical_json
from tooldisc.discovery.catalog.schema_check import MAX_ARGUMENT_DEPTH, json_depth_exceeds, validate
from tooldisc.discovery.model import Context, Offer
from tooldisc.discovery.security import check_tool
from tooldisc.errors import UsageError

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

    def __post_init__(self) -> None:
        """The fields the guard compares have their types: a name string (an unknown one is refused
        by the guard as ``unknown_tool``) and an approval token that is a string or None.
        ``arguments`` are what the model sent, untrusted data the guard's ``validate`` step judges:
        a model's non-object arguments are an ``invalid_arguments`` refusal the model is shown,
        never an exception in the host."""
        values.string("ToolCall", "name", self.name, empty=True)
        values.string("ToolCall", "approval", self.approval, optional=True, empty=True)


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
    """The token that approves exactly this call: SHA-256 of the name and canonical arguments.

    Arguments nested deeper than the guard accepts have no key (a UsageError, never
    a RecursionError): the guard refuses such a call before it asks for approval.
    """
    if json_depth_exceeds(arguments, MAX_ARGUMENT_DEPTH):
        raise UsageError(f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; no approval key")
    body = canonical_json({"tool": name, "arguments": dict(arguments)})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _refuse(call: ToolCall, code: str, reason: str, step: str, mutation: str | None,
            detail: str = "") -> GuardDecision:
    message = MODEL_TEXT[code].format(detail=detail) if code == "invalid_arguments" else MODEL_TEXT[code]
    return GuardDecision(call, GuardRefusal(code, message, reason, step), mutation)


def _visible(source: Offer | ToolSession, name: str, context: Context) -> bool:
    if name in context.forced:
        return True  # a pending approval turn: the host forced this name
    return source.visible(name) if isinstance(source, ToolSession) else name in source.names


def guard(call: ToolCall, offer_or_session: Offer | ToolSession, context: Context, catalog: Catalog,
          *, approvals: Collection[str] = ()) -> GuardDecision:
    """Decide whether ``call`` may run now. See the module docstring for the order.

    ``offer_or_session`` is the current request: a bare :class:`Offer`, or a
    :class:`ToolSession` whose latest offer is the current request. ``approvals``
    is a collection of approval keys: a bare ``str`` is a TypeError (``key in
    "…"`` would match by substring).
    """
    values.instance("guard", "call", call, ToolCall, optional=False)
    values.instance("guard", "offer_or_session", offer_or_session, (Offer, ToolSession), optional=False)
    values.instance("guard", "context", context, Context, optional=False)
    values.instance("guard", "catalog", catalog, Catalog, optional=False)
    approvals = values.names("guard", "approvals", approvals)
    tool = catalog.by_name.get(call.name)
    if tool is None:
        return _refuse(call, "unknown_tool", "no tool of that name in the catalog", "resolve", None)
    mutation = offer_or_session.mutation  # the current request's class, never an earlier turn's
    refusal = check_tool(tool, context, mutation)
    if not _visible(offer_or_session, call.name, context):
        if refusal is not None:
            return _refuse(call, "unknown_tool", f"never shown and not authorized: {refusal.reason}",
                           "visible", mutation)
        return _refuse(call, "not_offered", "authorized but neither offered nor returned by search_tools",
                       "visible", mutation)
    if refusal is not None:
        return _refuse(call, "unauthorized", f"{refusal.step}: {refusal.reason} (current request: {mutation})",
                       "authorize", mutation)
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


def unissued(call: ToolCall, mutation: str | None) -> GuardDecision:
    """A name the host never issued (e.g. a raw catalog name in MCP): refused exactly like an absent tool."""
    return _refuse(call, "unknown_tool", "a name this server never issued", "resolve", mutation)


def argument_problem(schema: Mapping[str, Any] | None, arguments: Any) -> str | None:
    """The first schema violation of ``arguments`` (path and message), or None when valid.

    Arguments must be a JSON object; an absent schema accepts any object (DESIGN §3).
    A hostile schema or argument (deep nesting, an unresolvable ``$ref``, a pattern
    RE2 cannot compile) is a problem too, never an exception.
    """
    if not isinstance(arguments, Mapping):
        return f"arguments must be an object; got {type(arguments).__name__}"
    result = validate(schema, dict(arguments))
    if result.unusable is not None:
        return result.unusable
    if not result.violations:
        return None
    first = result.violations[0]
    return f"{first.where}: {first.message}"
