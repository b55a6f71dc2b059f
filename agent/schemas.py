"""Schemas for an offer: loaded only for offered tools, cached, rendered, counted.

Discovery ranks names and never carries a JSON Schema (DESIGN §5). Once an offer is
decided, :func:`load_schemas` fetches the argument schema of each offered tool from a
:class:`SchemaCache` keyed by ``(name, schema_version)`` and :func:`render_offer`
renders them for a provider through :mod:`tooldisc.discovery.catalog.exporters`, with the
reversible :class:`~tooldisc.discovery.catalog.names.NameMap`.

The cache is **never an authorization cache** (seed 003 §12): it is only consulted
for names the caller passes in, which must come from an offer (or search results)
decided for this request, and every lookup starts from the tool in the *current*
catalog. A name that left the catalog is not served from the cache, and a tool whose
definition changed without a new ``schema_version`` is rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tooldisc import values
from tooldisc.agent.tokens import TokenModel, default_token_model
from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.catalog.names import NameMap
from tooldisc.discovery.model import Offer, Tool
from tooldisc.errors import UsageError
from tooldisc.params import Interval, checked


@dataclass(frozen=True)
class ToolSchema:
    """What a model sees of one tool, and what it costs in tokens.

    ``tokens`` estimates the provider-neutral body ``{name, description, parameters}``
    as compact JSON; providers add a few tokens of framing each.
    """

    tool: Tool
    parameters: Mapping[str, Any]
    compact: bool
    tokens: int

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def schema_version(self) -> str:
        return self.tool.schema_version


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    stale: int


class SchemaCache:
    """Process-wide cache of built schemas, keyed by ``(name, schema_version, compact)``.

    Holds schema bodies and token counts only. It cannot answer "may this caller use
    this tool": :func:`load_schemas` asks it only about names already authorized.
    """

    def __init__(self, token_model: TokenModel | None = None, max_entries: int = 100_000):
        values.instance("SchemaCache", "token_model", token_model, TokenModel)
        values.instance("SchemaCache", "max_entries", max_entries, int, optional=False)
        checked(Interval(int, 1, None, strict=True), max_entries, "max_entries", UsageError, owner="SchemaCache")
        self._model = token_model or default_token_model()
        self._max = max_entries
        self._entries: dict[tuple[str, str, bool], ToolSchema] = {}
        self._hits = self._misses = self._stale = 0

    def get(self, tool: Tool, *, compact: bool = False) -> ToolSchema:
        """The schema of ``tool`` (the current catalog's record), built once per version."""
        key = (tool.name, tool.schema_version, compact)
        hit = self._entries.get(key)
        if hit is not None and hit.tool.definition_hash == tool.definition_hash and hit.tool == tool:
            self._hits += 1
            return hit
        if hit is not None:
            self._stale += 1
        else:
            self._misses += 1
        built = build_schema(tool, compact=compact, token_model=self._model)
        if len(self._entries) >= self._max:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = built
        return built

    @property
    def stats(self) -> CacheStats:
        return CacheStats(self._hits, self._misses, self._stale)

    def __len__(self) -> int:
        return len(self._entries)


def build_schema(tool: Tool, *, compact: bool = False, token_model: TokenModel | None = None) -> ToolSchema:
    """Build one tool's schema (uncached): compact when asked and present, else full."""
    from tooldisc.discovery.catalog.exporters import input_schema

    params = input_schema(tool, compact=compact)
    body = {"name": tool.name, "description": tool.description, "parameters": params}
    model = token_model or default_token_model()
    return ToolSchema(tool=tool, parameters=params, compact=compact, tokens=model.estimate_json(body))


def offer_names(offer: Offer | Sequence[str]) -> tuple[str, ...]:
    """The names of an offer, or names given directly (a bare ``str`` is a TypeError, not its letters)."""
    if isinstance(offer, Offer):
        return offer.names
    if isinstance(offer, str | bytes) or not isinstance(offer, Iterable) or isinstance(offer, Mapping):
        raise TypeError(f"offer must be an Offer or a sequence of tool names, not a bare {type(offer).__name__}")
    names = tuple(offer)
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"offer[{i}] must be a tool name (str); got {type(name).__name__}")
    return names


def load_schemas(
    offer: Offer | Sequence[str],
    catalog: Catalog,
    cache: SchemaCache | None = None,
    *,
    compact: bool = False,
) -> tuple[ToolSchema, ...]:
    """Schemas of the offered tools only, in offer order.

    ``offer`` is an :class:`Offer` or names taken from one (or from search results
    decided for this request). A name missing from the current catalog is skipped:
    the cache never resurrects a removed tool.
    """
    cache = cache if cache is not None else SchemaCache()
    out = []
    for name in offer_names(offer):
        tool = catalog.by_name.get(name)
        if tool is not None:
            out.append(cache.get(tool, compact=compact))
    return tuple(out)


def offer_tokens(schemas: Iterable[ToolSchema]) -> int:
    """Estimated schema tokens of an offer (sum over its tools)."""
    return sum(s.tokens for s in schemas)


@dataclass(frozen=True)
class RenderedOffer:
    """Provider payload plus the name map needed to route a tool call back."""

    provider: str
    payload: Any
    names: NameMap
    tokens: int  # estimated schema tokens loaded into the model's context

    def tool_for(self, provider_name: str) -> str | None:
        """The tooldisc name behind a provider name, or None when this offer never issued it."""
        return self.names.from_provider(provider_name)


def render_offer(
    schemas: Sequence[ToolSchema],
    provider: str,
    *,
    meta_tool: Tool | None = None,
    names: NameMap | None = None,
    deferred: bool = False,
    tool_search: str | None = None,
) -> RenderedOffer:
    """Render schemas for ``openai``, ``anthropic`` or ``mcp`` via the exporters.

    ``meta_tool`` (the ``search_tools`` meta-tool) is put first. With
    ``deferred=True`` (Anthropic only) the meta-tool is sent in full and every other
    tool is marked ``defer_loading`` so the model loads it on demand; ``tool_search``
    optionally adds Anthropic's server-side search tool as well.
    """
    from tooldisc.discovery.catalog import exporters

    tools = ([meta_tool] if meta_tool is not None else []) + [s.tool for s in schemas]
    compact = any(s.compact for s in schemas)
    nm = names or NameMap(t.name for t in tools)
    if deferred:
        if provider != "anthropic":
            raise UsageError(f"deferred loading is an Anthropic feature; got provider {provider!r}")
        full = {meta_tool.name} if meta_tool is not None else set()
        payload = exporters.to_anthropic(tools, names=nm, compact=compact, full=full, tool_search=tool_search)
    else:
        payload = exporters.render(tools, provider, names=nm, compact=compact)
    # Deferred tools are not loaded into the model's context until asked for, so only
    # what is sent in full counts.
    tokens = 0 if deferred else offer_tokens(schemas)
    if meta_tool is not None:
        tokens += build_schema(meta_tool).tokens
    return RenderedOffer(provider, payload, nm, tokens)


def schema_json(schema: ToolSchema) -> str:
    """The provider-neutral body whose tokens :attr:`ToolSchema.tokens` estimates."""
    body = {"name": schema.name, "description": schema.tool.description, "parameters": schema.parameters}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
