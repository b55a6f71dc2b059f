"""Telemetry: the DESIGN §7 event for every discover and guard decision, to a sink.

An event is one privacy-safe row: counts, flags, classes and timings. It never holds
a tenant or user id, the query text, arguments or tool names; ids are used only to
compute the canary bucket (:mod:`tooldisc.canary.assignment`) and are then dropped.
Events are schema version 2: each carries a fresh random ``event_id`` (UUID4, derived
from nothing), so a consumer counts an event once even when it is delivered twice. An
interleaved request (:mod:`tooldisc.agent.interleaving`) is one schema version 3 event,
written when the request ends: its ``event_id`` is the request id that seeded the team
draft, ``teams`` the team of each offered position, ``credit`` the team of each tool
call (letters only: never a tool name) and ``contested`` whether both rankers offered a tool.
Sinks are a JSONL file (appended, one line per event, flushed) or any Python callable.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.model import Context, Offer
from tooldisc.discovery.security import check_tool

EVENT_SCHEMA_VERSION = 2
INTERLEAVED_SCHEMA_VERSION = 3
NO_EXPERIMENT = "none"


class EventSink(Protocol):
    def emit(self, event: Mapping[str, Any]) -> None: ...


class JsonlSink:
    """Appends each event as one JSON line; safe to share between threads."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def emit(self, event: Mapping[str, Any]) -> None:
        line = json.dumps(dict(event), ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()


class CallbackSink:
    """Hands each event (a plain dict) to a Python callable."""

    def __init__(self, callback: Callable[[dict[str, Any]], None]):
        self.callback = callback

    def emit(self, event: Mapping[str, Any]) -> None:
        self.callback(dict(event))


@dataclass(frozen=True)
class Experiment:
    """A configured canary experiment: its name, salt and rollout percent in force."""

    name: str
    salt: str
    percent: float


@dataclass(frozen=True)
class Arm:
    experiment: str
    percent: float
    bucket: int
    arm: str


def assign_arm(experiment: Experiment | None, tenant_id: str | None, user_id: str | None) -> Arm:
    """The canary arm of a request; control with bucket 0 when no experiment or no ids."""
    if experiment is None or not tenant_id or not user_id:
        return Arm(experiment.name if experiment else NO_EXPERIMENT, experiment.percent if experiment else 0.0,
                   0, "control")
    from tooldisc.canary.assignment import assign

    a = assign(experiment.salt, tenant_id, user_id, experiment.percent)
    return Arm(experiment.name, a.percent, a.bucket, a.arm)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _offer_violations(offer: Offer, catalog: Catalog) -> dict[str, bool]:
    """Independent re-check of every offered tool: should always be all False."""
    unauthorized = tenant = permission = False
    ctx = offer.context
    for name in offer.names:
        tool = catalog.by_name.get(name)
        if tool is None:
            unauthorized = True
            continue
        if check_tool(tool, ctx, offer.mutation) is not None:
            unauthorized = True
        if tool.tenant_required and not ctx.tenant:
            tenant = True
        if any(p not in ctx.permissions for p in tool.permissions):
            permission = True
    return {"unauthorized_candidate": unauthorized, "tenant_leak": tenant, "permission_violation": permission}


@dataclass(frozen=True)
class Telemetry:
    """Builds §7 events and sends them to a sink.

    ``channel`` names the surface (``api``, ``mcp``, ``cli``). ``clock`` returns the
    ISO 8601 timestamp and ``new_id`` the event id (both injectable for byte-identical
    tests).
    """

    sink: EventSink
    channel: str = "api"
    experiment: Experiment | None = None
    kill_switch: bool = False
    clock: Callable[[], str] = _now
    new_id: Callable[[], str] = lambda: str(uuid.uuid4())

    def _base(self, context: Context, mutation: str, tenant_id: str | None, user_id: str | None,
              arm: Arm | None = None) -> dict[str, Any]:
        if arm is None:  # an interleaving surface passes the request's arm; ids are then not needed
            arm = assign_arm(self.experiment, tenant_id, user_id)
        return {
            "schema_version": EVENT_SCHEMA_VERSION,
            "event_id": self.new_id(),
            "ts": self.clock(),
            "experiment": arm.experiment,
            "percent": arm.percent,
            "arm": arm.arm,
            "bucket": arm.bucket,
            "channel": self.channel,
            "mode": context.mode,
            "mutation": mutation,
            "kill_switch": self.kill_switch,
        }

    def discovery_event(self, offer: Offer, catalog: Catalog, *, schema_tokens: int = 0,
                        tenant_id: str | None = None, user_id: str | None = None,
                        arm: Arm | None = None) -> dict[str, Any]:
        event = self._base(offer.context, offer.mutation, tenant_id, user_id, arm)
        fallback = bool(offer.fallback)
        offered = [catalog.by_name[n] for n in offer.names if n in catalog.by_name]
        event.update({
            "candidate_count": int(offer.authorized_count),
            "final_tool_count": len(offer.candidates),
            "k": int(offer.k),
            "index_hit": offer.retrieval == "index",
            "fallback": fallback,
            "fallback_reason": "unknown" if fallback else None,
            "discovery_miss": not offer.candidates,
            "schema_miss": any(t.parameters is None for t in offered),
            "retrieval_miss": False,
            "authorization_failure": False,
            **_offer_violations(offer, catalog),
            "tool_execution_success": None,
            "task_success": None,
            "latency_ms": round(float(offer.timings.get("total", 0.0)), 4),
            "schema_tokens": int(schema_tokens),
        })
        return event

    def guard_event(self, decision: Any, offer: Offer, catalog: Catalog, *, latency_ms: float = 0.0,
                    tool_execution_success: bool | None = None, tenant_id: str | None = None,
                    user_id: str | None = None, arm: Arm | None = None) -> dict[str, Any]:
        """A guard decision as an event: refusals set the miss/failure flags, never names."""
        event = self.discovery_event(offer, catalog, tenant_id=tenant_id, user_id=user_id, arm=arm)
        code = decision.refusal.code if decision.refusal is not None else None
        event.update({
            "retrieval_miss": code == "not_offered",
            "authorization_failure": code in ("unauthorized", "unknown_tool") and decision.call.name in catalog.by_name,
            "tool_execution_success": tool_execution_success if code is None else False,
            "latency_ms": round(float(latency_ms), 4),
        })
        return event

    def interleaved_event(self, interleaved: Any, catalog: Catalog, *, credit: str, arm: Arm,
                          schema_tokens: int = 0) -> dict[str, Any]:
        """One interleaved request as a schema version 3 event (see the module docstring).

        ``interleaved`` is an :class:`~tooldisc.discovery.rank.interleave.InterleavedOffer` whose
        ``request_id`` is a UUID (it becomes the ``event_id``, so a replay of the row's id
        gives the same offer); ``credit`` one letter per tool call (``A``, ``B`` or ``-``).
        """
        import re

        from tooldisc.errors import UsageError

        rid = interleaved.request_id
        if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", rid):
            raise UsageError("Telemetry.interleaved_event: the request id must be a lower-case UUID (it is the "
                             f"event's id and the team draft's seed); got {rid[:40]!r}")
        if not isinstance(credit, str) or re.fullmatch(r"[AB-]*", credit) is None:
            raise UsageError("Telemetry.interleaved_event: credit must be letters A, B or - (one per tool call)")
        event = self.discovery_event(interleaved.offer, catalog, schema_tokens=schema_tokens, arm=arm)
        event.update({"schema_version": INTERLEAVED_SCHEMA_VERSION, "event_id": rid,
                      "teams": interleaved.teams or None, "credit": credit or None,
                      "contested": interleaved.contested})
        return event

    def record_interleaved(self, interleaved: Any, catalog: Catalog, **kw: Any) -> dict[str, Any]:
        event = self.interleaved_event(interleaved, catalog, **kw)
        self.sink.emit(event)
        return event

    def record_discovery(self, offer: Offer, catalog: Catalog, **kw: Any) -> dict[str, Any]:
        event = self.discovery_event(offer, catalog, **kw)
        self.sink.emit(event)
        return event

    def record_guard(self, decision: Any, offer: Offer, catalog: Catalog, **kw: Any) -> dict[str, Any]:
        event = self.guard_event(decision, offer, catalog, **kw)
        self.sink.emit(event)
        return event
