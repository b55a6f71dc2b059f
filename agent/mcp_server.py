"""tooldisc as an MCP server: ``tools/list`` is a capped offer, ``tools/call`` is guarded.

:class:`AgentService` is the whole behaviour in plain Python (no ``mcp`` import):

* a ``tools/list`` with ``_meta["tooldisc/query"]`` starts a new *current request*:
  the offer is :meth:`Discoverer.discover` for that text in the server's context.
  ``_meta["tooldisc/forced"]`` (names this server issued) marks a pending approval
  turn: those tools skip only the mutation step. A ``tools/list`` with neither key
  re-lists the current request — the official SDK re-lists without ``_meta`` after
  calling a tool it had not listed, and that must not drop an approval turn's forced
  names or the request's mutation class; after a catalog reload the same request
  (text and forced names) is decided again on the new catalog. Only the first
  ``tools/list`` without text starts an empty (READ) request, whose offer is the
  catalog's core tools drawn from the chokepoint's authorized set, sorted by name
  and capped at the default K. Tools returned by ``search_tools`` are listed too
  (progressive loading: re-list after a search). Nothing is listed that the guard
  would refuse for the current request (a tool a reload disabled, removed or
  de-authorized; a search result of an earlier, wider request). ``_meta`` of the
  result carries the offer hash and names.
* ``tools/call search_tools`` searches the current request's authorized set
  (:class:`ToolSession`); a ``_meta["tooldisc/query"]`` on it starts a new request
  first, exactly as a ``tools/list`` would. The search text itself never does.
* any other call must name a tool this server issued (a listed or searched
  provider name, never a raw catalog name), passes :func:`guard` against the
  current request, and then goes to the handler (by default a documented no-op
  echo: nothing is executed).

The ``_meta`` keys under ``tooldisc/`` are a closed schema (:mod:`~tooldisc.agent.mcp_meta`): an
unknown key, a key the method does not read, or a wrong type is an error reply,
never ignored. Other namespaces are not tooldisc's and stay untouched.

With ``interleave`` (:class:`~tooldisc.agent.interleaving.Interleave`) a share of requests
is offered a team-draft interleaving of the serving ranker (A) and a challenger (B), both
over the request's one authorized set (:meth:`Discoverer.discover_interleaved`); the
guard judges their calls exactly as any other. Such a request's telemetry is one schema
version 3 event with its teams and each call's credited team, written when the request
ends (the next request, or :meth:`AgentService.close`). ``_meta["tooldisc/user"]`` on a
request that starts one assigns it by the user's bucket; it is read for nothing else.

The catalog file is re-checked on every request; a changed file is loaded into a
new engine and swapped in whole. A bad new file is reported (stderr and
``reload_errors``) and the old catalog keeps serving. :func:`build_server` adapts
the service to the official ``mcp`` SDK's low-level server; it is the only part
that imports ``mcp``.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tooldisc import values
from tooldisc.agent.guard import GuardDecision, ToolCall, guard, unissued
from tooldisc.agent.interleaving import Credit, Interleave
from tooldisc.agent.mcp_meta import (
    CALL,
    LIST,
    SEARCH,
    RequestMeta,
    read_meta,
)
from tooldisc.agent.schemas import SchemaCache, load_schemas, offer_tokens
from tooldisc.agent.search_tools import META_TOOL, META_TOOL_NAME, ToolSession
from tooldisc.agent.sink import Arm, Telemetry
from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.catalog.names import NameMap
from tooldisc.discovery.config import RankerConfig
from tooldisc.discovery.context import default_context
from tooldisc.discovery.model import Context, Offer
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.discovery.security import check_tool
from tooldisc.errors import ToolDiscError, UsageError

SERVER_NAME = "tooldisc"

Handler = Callable[[str, Mapping[str, Any]], Any]


def echo_handler(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The default handler: executes nothing, echoes the guarded call back."""
    return {"tool": name, "arguments": dict(arguments), "executed": False,
            "note": "tooldisc serve has no handler configured: the call passed the guard and was not executed"}


@dataclass(frozen=True)
class Engine:
    """One loaded catalog and everything derived from it; replaced whole on reload."""

    catalog: Catalog
    discoverer: Discoverer
    names: NameMap
    stamp: tuple[int, int, int]


def _stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def file_stamp(path: str | os.PathLike[str]) -> tuple[int, int, int]:
    """What :class:`CatalogSource` compares to see that a file changed (modification time, size, inode);
    taken before a catalog is read, so a change during the read is seen afterwards."""
    return _stamp(Path(path))


class CatalogSource:
    """A catalog file that reloads atomically when it changes; a bad file never replaces a good one."""

    def __init__(self, path: str | os.PathLike[str], config: RankerConfig | None = None,
                 report: Callable[[str], None] | None = None, fmt: str | None = None, learned: Any = None,
                 cache: Any = None, loaded: tuple[Catalog, tuple[int, int, int]] | None = None):
        from tooldisc.discovery.config import load_config
        from tooldisc.discovery.importers import FORMATS
        from tooldisc.discovery.indexes.cache import IndexCache
        from tooldisc.discovery.learned import Learned

        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"CatalogSource: path must be a str or os.PathLike; got {type(path).__name__}")
        values.instance("CatalogSource", "config", config, RankerConfig)
        values.instance("CatalogSource", "learned", learned, Learned)
        values.instance("CatalogSource", "cache", cache, IndexCache)
        if report is not None and not callable(report):
            raise TypeError(f"CatalogSource: report must be callable or None; got {type(report).__name__}")
        if fmt is not None and not isinstance(fmt, str):
            raise TypeError(f"CatalogSource: fmt must be a str or None; got {type(fmt).__name__}")
        if fmt is not None and fmt not in FORMATS:
            raise UsageError(f"CatalogSource: fmt must be one of {', '.join(FORMATS)} or None; got {fmt!r}")
        self.path = Path(path)
        self.fmt = fmt  # a declared catalog format holds for every reload
        self.config = config or load_config()
        self.learned = learned  # bound to each reloaded catalog; its stale parts are reported, never used
        self.cache = cache  # the on-disk index cache (ranking arrays only; the filter runs on each live catalog)
        self.report = report or (lambda msg: sys.stderr.write(msg + "\n"))
        self.reload_errors: list[str] = []
        self._lock = threading.Lock()
        self._engine = self._load(loaded)
        self._failed_stamp: tuple[int, int, int] | None = None
        self._failed_key: tuple[Any, str] | None = None

    def _load(self, loaded: tuple[Catalog, tuple[int, int, int]] | None = None) -> Engine:
        """An engine over the file as it is now, or over ``loaded`` (a catalog the caller read from this path
        and the :func:`file_stamp` it took before reading it: ``tooldisc serve`` reads it once)."""
        from tooldisc.discovery.catalog.io import load_catalog

        if loaded is not None:
            catalog, stamp = loaded
            values.instance("CatalogSource", "loaded[0]", catalog, Catalog)
        else:
            stamp = _stamp(self.path)
            catalog = load_catalog(self.path, fmt=self.fmt, cache=self.cache)
        discoverer = Discoverer(catalog, self.config, learned=self.learned, cache=self.cache)
        for text in discoverer.notes:
            self.report(f"tooldisc serve: {text}")
        return Engine(catalog, discoverer, NameMap(t.name for t in catalog.tools), stamp)

    def engine(self) -> Engine:
        """The current engine, after reloading the file if it changed since it was loaded."""
        try:
            stamp = _stamp(self.path)
        except OSError as exc:
            return self._failed(None, f"cannot stat the catalog ({exc.strerror}); still serving the previous one")
        if stamp == self._engine.stamp or stamp == self._failed_stamp:
            return self._engine
        with self._lock:
            if stamp == self._engine.stamp:
                return self._engine
            try:
                self._engine = self._load()
                self._failed_stamp = self._failed_key = None
            except Exception as exc:  # whatever a bad file causes (RecursionError too), the old catalog serves on
                text = exc.one_line() if isinstance(exc, ToolDiscError) else f"{type(exc).__name__}: {exc}"
                return self._failed(stamp, f"{text}; still serving the previous catalog")
        return self._engine

    def _failed(self, stamp: tuple[int, int, int] | None, message: str) -> Engine:
        """Report a failed reload once per (file state, message), then keep the old engine."""
        from tooldisc.errors import MAX_ERROR_LINE
        from tooldisc.terminal import clip, escape

        if (stamp, message) != self._failed_key:
            line = clip(escape(f"tooldisc serve: catalog reload failed: {self.path}: {message}"), MAX_ERROR_LINE)
            self.reload_errors.append(line)
            self.report(line)
        self._failed_stamp, self._failed_key = stamp, (stamp, message)
        return self._engine


@dataclass(frozen=True)
class _Request:
    """The current request as it was asked: its text and forced tool names (catalog names),
    and — when interleaving — its id (the coins' seed and its event id) and arm."""

    query: str | None
    forced: frozenset[str]
    request_id: str | None = None
    arm: Arm | None = None


@dataclass
class ListResult:
    tools: list[dict[str, Any]]
    meta: dict[str, Any]


@dataclass
class CallResult:
    is_error: bool
    payload: Any
    decision: GuardDecision | None = None


@dataclass
class AgentService:
    """The MCP behaviour of tooldisc for one connection (one conversation).

    ``context`` is who the client acts for. ``None`` (the catalog's default context:
    every role and permission, autonomous) widens access, so it needs
    ``allow_default_context=True`` (fail closed). Every field is checked when the
    service is built, as the file loaders check theirs: a wrong type is a
    ``TypeError`` and a wrong value a ``ValueError``, each naming the field.
    """

    source: CatalogSource
    context: Context | None = None
    handler: Handler = echo_handler
    telemetry: Telemetry | None = None
    k: int | str | None = None
    expose_output_schema: bool = False
    approvals: frozenset[str] = frozenset()  # approval keys the host granted (guard.approval_key)
    allow_default_context: bool = False
    interleave: Interleave | None = None  # a challenger ranker B on a share of requests
    _session: ToolSession | None = field(default=None, init=False)
    _engine: Engine | None = field(default=None, init=False)
    _issued: dict[str, str] = field(default_factory=dict, init=False)  # provider name → tool name
    _cache: SchemaCache = field(default_factory=SchemaCache, init=False)
    _request: _Request | None = field(default=None, init=False)
    _request_engine: Engine | None = field(default=None, init=False)  # the catalog the request was decided on
    _challenger: tuple[Engine, Discoverer] | None = field(default=None, init=False)  # B, for that catalog
    _pending: Credit | None = field(default=None, init=False)  # the interleaved request in progress

    def __post_init__(self) -> None:
        owner = "AgentService"
        values.instance(owner, "source", self.source, CatalogSource, optional=False)
        values.instance(owner, "context", self.context, Context)
        values.instance(owner, "telemetry", self.telemetry, Telemetry)
        values.instance(owner, "interleave", self.interleave, Interleave)
        if not callable(self.handler):
            raise TypeError(f"{owner}: handler must be callable as handler(name, arguments); "
                            f"got {type(self.handler).__name__}")
        for name in ("expose_output_schema", "allow_default_context"):
            values.instance(owner, name, getattr(self, name), bool, optional=False)
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int | str)):
            raise TypeError(f"{owner}: k must be an int, 'auto' or None; got {type(self.k).__name__}")
        if self.k is not None:
            from tooldisc.limits import K_REQUEST
            from tooldisc.params import checked

            checked(K_REQUEST, self.k, "k", UsageError, owner=owner)
        self.approvals = values.names(owner, "approvals", self.approvals)
        if self.context is None and not self.allow_default_context:
            raise UsageError("AgentService needs a context (or allow_default_context=True, which serves "
                             "every role and permission of the catalog in autonomous mode)")
        if self.interleave is not None:
            self._b(self.source.engine())  # build B now: a bad config fails here, not on a request

    def _b(self, engine: Engine) -> Discoverer:
        """The challenger ranker B for ``engine``'s catalog (rebuilt when the catalog reloads)."""
        assert self.interleave is not None
        if self._challenger is None or self._challenger[0] is not engine:
            il = self.interleave
            config = il.config if il.config is not None else self.source.config
            self._challenger = (engine, Discoverer(engine.catalog, config, learned=il.learned,
                                                   cache=self.source.cache))
        return self._challenger[1]

    def _new_id(self) -> str:
        import uuid

        return self.telemetry.new_id() if self.telemetry is not None else str(uuid.uuid4())

    def close(self) -> None:
        """End the current request: an interleaved one's telemetry event (with its credit) is written now."""
        self._flush()

    def _flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None and self.telemetry is not None:
            self.telemetry.record_interleaved(pending.interleaved, pending.catalog, credit=pending.credit,
                                              arm=pending.arm, schema_tokens=pending.schema_tokens)

    def _state(self) -> tuple[Engine, ToolSession]:
        engine = self.source.engine()
        if engine is not self._engine or self._session is None:
            ctx = self.context or default_context(engine.catalog)
            old = self._session
            self._session = ToolSession(engine.discoverer, ctx)
            if old is not None:
                self._session.carry_over(old)
            self._engine = engine
        return engine, self._session

    def offer(self, query: str | None, forced: Collection[str] = frozenset()) -> Offer:
        """The offer for ``query`` through the chokepoint (the core-tools offer when empty).

        ``forced``: catalog names of a pending approval turn.
        """
        values.instance("AgentService.offer", "query", query, str)
        forced = values.names("AgentService.offer", "forced", forced)
        engine, session = self._state()
        ctx = session.context
        if forced:
            ctx = replace(ctx, forced=ctx.forced | forced)
        offer = engine.discoverer.discover(query or "", ctx, self.k)
        if query:
            return offer
        # No request text: the core tools the chokepoint authorizes for this context,
        # by name, capped at K. Drawn from the authorized set only.
        allowed = engine.discoverer.authorized_indices(ctx, offer.mutation)
        core = sorted(engine.catalog.tools[int(i)].name for i in allowed if engine.catalog.tools[int(i)].is_core)
        return _names_offer(offer, tuple(core[: offer.k]))

    def _issue(self, session: ToolSession, names: list[str]) -> None:
        for name in names:
            self._issued[session.names.to_provider(name)] = name

    def _forced_names(self, provider_names: frozenset[str]) -> frozenset[str]:
        """Names of a pending approval turn: only tools this server issued count."""
        return frozenset(self._issued[n] for n in provider_names if n in self._issued)

    def begin_request(self, query: str | None, forced: Collection[str] | None = None,
                      user: str | None = None) -> tuple[Engine, ToolSession, Offer]:
        """Make ``query`` the current request: every later call is authorized against it.

        ``forced``: provider names this server issued, of a pending approval turn.
        ``user``: the user id, when interleaving, for the request's bucket only (never kept).
        """
        owner = "AgentService.begin_request"
        values.instance(owner, "query", query, str)
        provider = values.names(owner, "forced", forced)
        values.string(owner, "user", user, optional=True)
        self._flush()  # the previous request has ended
        request = _Request(query, self._forced_names(provider))
        if self.interleave is not None:
            rid = self._new_id()
            ctx = self._state()[1].context
            arm = self.interleave.arm(rid, ctx, user)
            if not query:  # no request text, nothing ranked: served (and logged) as A alone
                arm = replace(arm, arm="control")
            request = replace(request, request_id=rid, arm=arm)
        return self._decide(request)

    def _decide(self, request: _Request) -> tuple[Engine, ToolSession, Offer]:
        arm = request.arm
        if arm is not None and arm.arm == "experiment" and request.query and request.request_id is not None:
            offer = self._interleaved(request)
        else:
            offer = self.offer(request.query, request.forced)
        engine, session = self._state()
        session.add_offer(offer)
        self._request, self._request_engine = request, engine
        return engine, session, offer

    def _interleaved(self, request: _Request) -> Offer:
        """A and B over the request's one authorized set, team-drafted (the offer the model sees)."""
        assert request.request_id is not None and request.arm is not None and request.query
        engine, session = self._state()
        ctx = session.context
        if request.forced:
            ctx = replace(ctx, forced=ctx.forced | request.forced)
        il = engine.discoverer.discover_interleaved(self._b(engine), request.query, ctx, self.k,
                                                    request_id=request.request_id)
        pending = self._pending
        if pending is not None and pending.interleaved.request_id == request.request_id:
            # the same request decided again on a reloaded catalog: one row, the calls kept
            pending.interleaved, pending.catalog = il, engine.catalog
        else:
            self._pending = Credit(il, request.arm, engine.catalog)
        return il.offer

    def _listable(self, engine: Engine, session: ToolSession, name: str) -> bool:
        """Whether the guard's authorize step passes ``name`` for the current request, on this catalog."""
        tool = engine.catalog.by_name.get(name)
        return tool is not None and check_tool(tool, session.request_context, session.mutation) is None

    def list_tools(self, query: str | None = None, forced: Collection[str] | None = None,
                   user: str | None = None) -> ListResult:
        """One ``tools/list``: a new request when ``query`` or ``forced`` is given, else the current one again.

        ``user`` (with ``query`` or ``forced``) assigns the new request by the user's bucket when interleaving.
        """
        values.instance("AgentService.list_tools", "query", query, str)
        values.names("AgentService.list_tools", "forced", forced)
        values.string("AgentService.list_tools", "user", user, optional=True)
        if user is not None and query is None and forced is None:
            raise UsageError("_meta: 'tooldisc/user' goes with 'tooldisc/query' or 'tooldisc/forced': it assigns "
                             "the request they start (a list without them re-lists the current request)")
        kept = self._request if query is None and forced is None else None
        if kept is None:
            engine, session, offer = self.begin_request(query, forced, user)
        else:
            engine, session = self._state()
            current = session.current
            if engine is not self._request_engine or current is None:
                engine, session, current = self._decide(kept)  # the same request, on the reloaded catalog
            offer = current
        names = [n for n in dict.fromkeys([*offer.names, *session.returned]) if self._listable(engine, session, n)]
        schemas = load_schemas(names, engine.catalog, self._cache)
        from tooldisc.discovery.catalog.exporters import to_mcp

        listed = to_mcp([META_TOOL, *(s.tool for s in schemas)], names=session.names)["tools"]
        self._issue(session, [s.tool.name for s in schemas])
        for entry in listed:
            _output_schema(entry, self.expose_output_schema)
        tokens = offer_tokens(schemas)
        pending = self._pending
        if pending is not None and kept is None and pending.interleaved.offer is offer:
            pending.schema_tokens = tokens  # written with its credit when the request ends
        elif self.telemetry is not None and kept is None:  # one event per request, not per re-list
            arm = self._request.arm if self._request is not None else None
            self.telemetry.record_discovery(offer, engine.catalog, schema_tokens=tokens, arm=arm)
        meta = {"tooldisc/offer": list(offer.names), "tooldisc/offer_hash": offer.offer_hash,
                "tooldisc/catalog_hash": offer.catalog_hash, "tooldisc/k": offer.k,
                "tooldisc/mutation": offer.mutation, "tooldisc/schema_tokens": tokens,
                "tooldisc/forced": sorted(offer.context.forced)}
        return ListResult(listed, meta)

    def call_tool(self, provider_name: str, arguments: Mapping[str, Any] | None,
                  approval: str | None = None, query: str | None = None,
                  forced: Collection[str] | None = None, user: str | None = None) -> CallResult:
        """One ``tools/call``. ``query``, ``forced`` and ``user`` (a new request first) are read only by search_tools."""
        owner = "AgentService.call_tool"
        values.instance(owner, "provider_name", provider_name, str, optional=False)
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"{owner}: arguments must be a mapping or None; got {type(arguments).__name__}")
        values.instance(owner, "approval", approval, str)
        values.instance(owner, "query", query, str)
        values.names(owner, "forced", forced)
        values.string(owner, "user", user, optional=True)
        args = dict(arguments or {})
        if user is not None and query is None and forced is None:
            raise UsageError("_meta: 'tooldisc/user' goes with 'tooldisc/query' or 'tooldisc/forced': it assigns "
                             "the request they start")
        if provider_name == META_TOOL_NAME:
            if query is not None or forced is not None:
                _engine, session = self.begin_request(query, forced, user)[:2]
            else:
                _engine, session = self._state()
            try:
                found = session.call_search(args)
            except UsageError as exc:
                return CallResult(True, {"error": "invalid_arguments", "message": exc.one_line()})
            self._issue(session, [h.name for h in found.hits])
            return CallResult(False, found.to_model(session.names))
        if query is not None or forced is not None:
            raise UsageError(f"{owner}: query and forced start a new request on search_tools or list_tools only; "
                             f"a call to {provider_name!r} is judged against the current request")
        engine, session = self._state()
        if session.current is None:  # a call before any tools/list: the request is empty (READ)
            engine, session, _ = self.begin_request(None)
        offer = session.current
        name = self._issued.get(provider_name)
        if name is None:  # never issued by this server (a raw catalog name included): looks absent
            decision = unissued(ToolCall(provider_name, args, approval=approval), session.mutation)
        else:
            call = ToolCall(name, args, approval=approval)
            decision = guard(call, session, session.request_context, engine.catalog, approvals=self.approvals)
        arm = self._request.arm if self._request is not None else None
        if decision.refusal is not None:
            if self.telemetry is not None:
                self.telemetry.record_guard(decision, offer, engine.catalog, arm=arm)
            return CallResult(True, decision.refusal.to_model(), decision)
        if self._pending is not None and self._pending.interleaved.offer is offer:
            self._pending.call(decision.call.name)  # credit the team that placed the tool (the "click")
        result = self.handler(decision.call.name, args)
        if self.telemetry is not None:
            self.telemetry.record_guard(decision, offer, engine.catalog, tool_execution_success=True, arm=arm)
        return CallResult(False, result, decision)


def _output_schema(entry: dict[str, Any], expose: bool) -> None:
    """Keep a listed ``outputSchema`` only when asked for and an MCP client accepts it (an object at the root)."""
    schema = entry.pop("outputSchema", None)
    if not expose or not isinstance(schema, Mapping):
        return
    if "type" not in schema:
        entry["outputSchema"] = {"type": "object", **schema}
    elif schema["type"] == "object":
        entry["outputSchema"] = schema


def _names_offer(base: Offer, names: tuple[str, ...]) -> Offer:
    import hashlib

    from tooldisc.discovery.catalog import canonical_json
    from tooldisc.discovery.model import Candidate

    cands = tuple(Candidate(n, 0.0, {}) for n in names)
    body = {"core_offer": list(names), "context": base.context.to_dict(), "catalog_hash": base.catalog_hash,
            "k": base.k}
    digest = hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()
    return Offer(**{**base.__dict__, "candidates": cands, "k_reason": "no query: core tools, by name",
                    "offer_hash": digest})


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def build_server(service: AgentService) -> Any:
    """The service as an ``mcp`` low-level :class:`Server` (in-process or any transport)."""
    try:
        import mcp_types as types
        from mcp.server.lowlevel import Server
    except ImportError:
        from tooldisc.errors import MissingExtraError

        raise MissingExtraError("tooldisc serve", "mcp", "mcp") from None

    def meta_of(params: Any, request: str) -> RequestMeta:
        from mcp.shared.exceptions import MCPError

        try:
            return read_meta(getattr(params, "meta", None) if params is not None else None, request)
        except UsageError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.one_line()) from None

    async def list_tools(ctx: Any, params: Any) -> Any:
        meta = meta_of(params, LIST)
        try:
            user = {} if meta.user is None else {"user": meta.user}  # (keyword only when given)
            out = service.list_tools(meta.query, meta.forced, **user)
        except ToolDiscError as exc:  # a request the chokepoint refuses (too long): one line, not "internal error"
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, exc.one_line()) from None
        tools = [types.Tool.model_validate(t) for t in out.tools]
        return types.ListToolsResult(tools=tools, _meta=out.meta)

    async def call_tool(ctx: Any, params: Any) -> Any:
        meta = meta_of(params, SEARCH if params.name == META_TOOL_NAME else CALL)
        try:
            res = service.call_tool(params.name, params.arguments, meta.approval, meta.query, meta.forced,
                                    **({} if meta.user is None else {"user": meta.user}))
        except UsageError as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, exc.one_line()) from None
        payload = await _maybe_await(res.payload)
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, sort_keys=True)
        structured = payload if isinstance(payload, dict) else None
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=structured, is_error=res.is_error)

    return Server(SERVER_NAME, instructions=(
        "Tools are offered per request. If none fits, call search_tools, then list tools again."),
        on_list_tools=list_tools, on_call_tool=call_tool)


DRAIN_SECONDS = 60.0
"""How long requests read before stdin closed may take to be answered before the server stops anyway."""


class _InFlight:
    """The ids of the requests read and not yet answered; set once stdin has closed and none is left."""

    def __init__(self) -> None:
        import anyio

        self.ids: set[Any] = set()
        self.closed = False
        self.drained = anyio.Event()

    def read(self, item: Any) -> None:
        import mcp_types as types

        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)

    def written(self, item: Any) -> None:
        import mcp_types as types

        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.ids.discard(message.id)
        self._check()

    def input_closed(self) -> None:
        self.closed = True
        self._check()

    def _check(self) -> None:
        if self.closed and not self.ids:
            self.drained.set()


async def _serve_draining(server: Any, read: Any, write: Any) -> None:
    """``server.run`` over ``read``/``write``, with every request read before stdin closed answered first.

    The SDK stops at the end of its input: requests piped in and stdin closed (``cat requests | tooldisc
    serve``) lost their answers (three of six). Here the server's input closes only once each request read
    has its response written (or after :data:`DRAIN_SECONDS`)."""
    import anyio

    flight = _InFlight()
    to_server, server_read = anyio.create_memory_object_stream[Any](0)
    server_write, from_server = anyio.create_memory_object_stream[Any](0)

    async def pump_in() -> None:
        async with to_server:
            async for item in read:
                flight.read(item)
                await to_server.send(item)
            flight.input_closed()
            with anyio.move_on_after(DRAIN_SECONDS):
                await flight.drained.wait()

    async def pump_out() -> None:
        async with from_server, write:  # the transport's output closes after the server's (its writer then ends)
            async for item in from_server:
                await write.send(item)
                flight.written(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_in)
        tg.start_soon(pump_out)
        try:
            await server.run(server_read, server_write, server.create_initialization_options())
        finally:
            await server_write.aclose()


def serve_stdio(service: AgentService) -> None:
    """Run the server on stdin/stdout until the client closes the connection (requests already read are
    answered first)."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(service)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await _serve_draining(server, read, write)

    try:
        anyio.run(run)
    finally:
        service.close()  # the last interleaved request's event
