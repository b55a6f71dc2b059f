"""The ``search_tools`` meta-tool and the session that remembers what the model saw.

The model always gets a small, stable ``search_tools`` schema next to its offer
(seed 003 §11, option C). A search runs through the one chokepoint
(:meth:`Discoverer.discover`) for the current request's context, with the user's
request class as the pipeline's mutation cap, so it only ever sees the set the
*user's* request authorizes (the model's search text can narrow it, never widen a
read request into a write one); results are then narrowed by capability/domain.
Each result is recorded in the :class:`ToolSession`, so the execution guard can
refuse a call to any name the model was never shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from tooldisc import values
from tooldisc.discovery.catalog.names import NameMap
from tooldisc.discovery.model import Context, Offer, Tool
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.discovery.security import READ
from tooldisc.errors import UsageError
from tooldisc.params import Interval, checked

META_TOOL_NAME = "search_tools"
MAX_SCHEMAS_PER_CALL = 32  # the absolute cap on tools one search may add (DESIGN §5)
DEFAULT_LIMIT = 10

META_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 500,
                  "description": "What the tool should do, in the user's words."},
        "capability": {"type": "string", "maxLength": 100,
                       "description": "Optional capability prefix, e.g. 'sales' or 'sales.invoice'."},
        "domain": {"type": "string", "maxLength": 100, "description": "Optional domain, e.g. 'inventory'."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SCHEMAS_PER_CALL, "default": DEFAULT_LIMIT},
    },
    "required": ["query"],
    "additionalProperties": False,
}

META_TOOL = Tool(
    name=META_TOOL_NAME,
    description=("Find more tools you may use when none of the offered tools fits. "
                 "Returns tool names with a one-line description; only tools you are allowed to use."),
    parameters=META_TOOL_PARAMETERS,
    side_effect="none",
)


@dataclass(frozen=True)
class SearchHit:
    name: str
    description: str
    score: float


@dataclass(frozen=True)
class SearchResult:
    """What one ``search_tools`` call returned (authorized tools only) and which were new."""

    query: str
    hits: tuple[SearchHit, ...]
    new: tuple[str, ...]
    offer: Offer  # the chokepoint's offer the hits were drawn from

    def to_model(self, names: NameMap) -> dict[str, Any]:
        """Compact JSON for the model, with provider-safe names."""
        tools = [{"name": names.to_provider(h.name), "description": h.description, "score": round(h.score, 4)}
                 for h in self.hits]
        out: dict[str, Any] = {"tools": tools}
        if not tools:
            out["note"] = "No tool you may use matched. Ask the user to clarify instead of guessing a tool."
        return out


def one_line(text: str, limit: int = 160) -> str:
    """First line/sentence of an untrusted description, whitespace-collapsed and cut."""
    flat = " ".join(text.split())
    for stop in (". ", "। ", "؟ "):
        i = flat.find(stop)
        if 0 < i < limit:
            flat = flat[: i + 1]
            break
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def parse_search_arguments(arguments: Mapping[str, Any]) -> tuple[str, str | None, str | None, int]:
    """Validate a ``search_tools`` call against its schema; a bad call is a UsageError."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator(META_TOOL_PARAMETERS).validate(dict(arguments))
    except jsonschema.ValidationError as exc:
        raise UsageError(f"search_tools: invalid arguments: {exc.message}") from None
    return (str(arguments["query"]), arguments.get("capability"), arguments.get("domain"),
            int(arguments.get("limit", DEFAULT_LIMIT)))


class ToolSession:
    """One conversation: what its model was shown, and the request it is in now.

    Two things are kept apart on purpose. *Visibility* grows over the conversation:
    a name offered or returned by ``search_tools`` in any turn stays known to the
    model. *Authorization* belongs to the current request only: :attr:`current` is
    the offer of the latest user request, and the guard re-checks every call
    against its context and mutation class, so a delete tool shown for "delete
    invoice 5" is not callable once the user asks "show my invoices". History may
    rank; it never authorizes. The session itself never grants anything.
    """

    def __init__(self, discoverer: Discoverer, context: Context, offer: Offer | None = None):
        values.instance("ToolSession", "discoverer", discoverer, Discoverer, optional=False)
        values.instance("ToolSession", "context", context, Context, optional=False)
        values.instance("ToolSession", "offer", offer, Offer)
        self.discoverer = discoverer
        self.context = context
        self._shown: dict[str, str] = {}
        self._returned: list[str] = []
        self.current: Offer | None = None
        self.offers: list[Offer] = []
        if offer is not None:
            self.add_offer(offer)

    @cached_property
    def names(self) -> NameMap:
        """One map over the whole catalog (plus the meta-tool): names stay stable across rounds."""
        return NameMap([*(t.name for t in self.discoverer.catalog.tools), META_TOOL_NAME])

    @property
    def mutation(self) -> str:
        """The current request's mutation class (READ before any request)."""
        return self.current.mutation if self.current is not None else READ

    @property
    def request_context(self) -> Context:
        """The current request's context: the session's, plus ``forced`` names of an approval turn."""
        return self.current.context if self.current is not None else self.context

    def add_offer(self, offer: Offer) -> None:
        """Start a new request: ``offer`` was decided for it and now governs every call.

        The offer's context must be the session's; only ``forced`` may differ (a
        pending approval turn names the tools the user is confirming).
        """
        values.instance("ToolSession.add_offer", "offer", offer, Offer, optional=False)
        if replace(offer.context, forced=frozenset()) != replace(self.context, forced=frozenset()):
            raise UsageError("an offer for another context cannot join this session")
        self.offers.append(offer)
        self.current = offer
        for name in offer.names:
            self._shown.setdefault(name, offer.mutation)

    def request(self, query: str, k: int | str | None = None, history: Any = (),
                forced: frozenset[str] = frozenset()) -> Offer:
        """Discover for a new user request through the chokepoint and make it the current one.

        ``forced`` is a collection of tool names (a bare ``str`` is a TypeError, never
        a set of its letters).
        """
        values.instance("ToolSession.request", "query", query, str, optional=False)
        forced = values.names("ToolSession.request", "forced", forced)
        ctx = replace(self.context, forced=forced) if forced else self.context
        offer = self.discoverer.discover(query, ctx, k, history)
        self.add_offer(offer)
        return offer

    def carry_over(self, old: ToolSession) -> None:
        """Keep an earlier session's state (before a catalog reload); the guard re-checks it all."""
        for name, mutation in old._shown.items():
            self._shown.setdefault(name, mutation)
        for name in old._returned:
            if name not in self._returned:
                self._returned.append(name)
        if old.current is not None and self.current is None:
            self.current = old.current  # its mutation and context stay the current request's

    @property
    def shown(self) -> Mapping[str, str]:
        """Every name the model was shown, with the mutation of the request that showed it first."""
        return dict(self._shown)

    @property
    def returned(self) -> tuple[str, ...]:
        """Names returned by search_tools, in the order first returned."""
        return tuple(self._returned)

    def visible(self, name: str) -> bool:
        """Whether the model was ever shown ``name`` in this session (eligibility, never authorization)."""
        return name in self._shown

    def mutation_for(self, name: str) -> str | None:
        return self._shown.get(name)

    def search(self, query: str, capability: str | None = None, domain: str | None = None,
               limit: int = DEFAULT_LIMIT) -> SearchResult:
        """Search the current request's authorized set through the chokepoint; record what was returned.

        ``mutation=`` lets the pipeline narrow the search text's class by the user's
        request: the model's words can never widen what the user asked for.
        """
        values.instance("ToolSession.search", "query", query, str, optional=False)
        values.instance("ToolSession.search", "capability", capability, str)
        values.instance("ToolSession.search", "domain", domain, str)
        checked(Interval(int, 1, MAX_SCHEMAS_PER_CALL, strict=True), limit, "limit", UsageError)
        filtered = bool(capability or domain)
        depth = max(len(self.discoverer.catalog), 1) if filtered else limit
        offer = self.discoverer.discover(query, self.request_context, depth, mutation=self.mutation)
        catalog = self.discoverer.catalog.by_name
        hits: list[SearchHit] = []
        for cand in offer.candidates:
            tool = catalog[cand.name]
            if capability and not _capability_match(tool.capability, capability):
                continue
            if domain and domain not in tool.domains:
                continue
            hits.append(SearchHit(cand.name, one_line(tool.description), cand.score))
            if len(hits) >= limit:
                break
        new = []
        for h in hits:
            if h.name not in self._shown:
                self._shown[h.name] = offer.mutation
                new.append(h.name)
            if h.name not in self._returned:
                self._returned.append(h.name)
        return SearchResult(query, tuple(hits), tuple(new), offer)

    def call_search(self, arguments: Mapping[str, Any]) -> SearchResult:
        """A model's ``search_tools`` call, validated against the meta-tool schema."""
        query, capability, domain, limit = parse_search_arguments(arguments)
        return self.search(query, capability, domain, limit)


def _capability_match(tool_capability: str | None, wanted: str) -> bool:
    if not tool_capability:
        return False
    return tool_capability == wanted or tool_capability.startswith(wanted + ".")
