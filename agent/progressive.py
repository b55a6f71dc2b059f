"""Progressive schema loading: round 1 sends the offer, later rounds only new schemas.

Seed 003 §11–12: the model always sees its offer (plus ``search_tools``); when it
searches, the next round adds only the schemas it has not been sent, at most
:data:`MAX_SCHEMAS_PER_CALL` per call. Many providers want the whole ``tools`` list
on every call, so two costs are reported: *new* tokens (what this round adds) and
*wire* tokens (everything sent so far, which is what a resend-every-call provider
is billed). :func:`schema_token_report` turns rounds per request into the numbers
``tooldisc eval --schemas`` prints; :func:`gold_rounds` builds the standard
comparison (one round of K=48 in full vs progressive K=15 + search_tools).

Authorization is never cached here: names enter a round only from an offer or a
search result decided for the current request.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tooldisc import values
from tooldisc.agent.schemas import SchemaCache, ToolSchema, build_schema, load_schemas, offer_names
from tooldisc.agent.search_tools import MAX_SCHEMAS_PER_CALL, META_TOOL
from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.model import Context
from tooldisc.errors import UsageError
from tooldisc.params import Interval, checked


@dataclass(frozen=True)
class SchemaRound:
    """One call's schema delta."""

    index: int
    added: tuple[ToolSchema, ...]
    dropped: tuple[str, ...]  # new names beyond the per-call cap, not sent this round
    new_tokens: int
    wire_tokens: int  # every schema sent so far (a provider that wants the full list each call)

    @property
    def added_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.added)


class ProgressiveSchemas:
    """Per-conversation state: which schemas the model already has.

    ``round(names)`` returns only the schemas not sent before, in the given order,
    capped at ``cap`` per call (round 1 is the offer and is not capped; an offer's
    K bounds it). The ``search_tools`` meta-tool counts in round 1 when ``meta_tool``.
    """

    def __init__(self, catalog: Catalog, cache: SchemaCache | None = None, *, cap: int = MAX_SCHEMAS_PER_CALL,
                 compact: bool = False, meta_tool: bool = True):
        owner = "ProgressiveSchemas"
        values.instance(owner, "catalog", catalog, Catalog, optional=False)
        values.instance(owner, "cache", cache, SchemaCache)
        values.instance(owner, "cap", cap, int, optional=False)
        values.instance(owner, "compact", compact, bool, optional=False)
        values.instance(owner, "meta_tool", meta_tool, bool, optional=False)
        checked(Interval(int, 1, MAX_SCHEMAS_PER_CALL, strict=True), cap, "cap", UsageError,
                owner=owner)  # the absolute cap per call (DESIGN §5)
        self.catalog = catalog
        self.cache = cache if cache is not None else SchemaCache()
        self.cap = cap
        self.compact = compact
        self.meta_tool = meta_tool
        self._sent: dict[str, ToolSchema] = {}
        self._rounds: list[SchemaRound] = []

    @property
    def sent(self) -> tuple[str, ...]:
        return tuple(self._sent)

    @property
    def rounds(self) -> tuple[SchemaRound, ...]:
        return tuple(self._rounds)

    def round(self, names: Iterable[str]) -> SchemaRound:
        """The schemas of ``names`` (tool names; a bare ``str`` is a TypeError) not sent before."""
        first = not self._rounds
        fresh = [n for n in dict.fromkeys(offer_names(names)) if n not in self._sent]
        cap = len(fresh) if first else self.cap
        take, dropped = fresh[:cap], tuple(fresh[cap:])
        added = load_schemas(take, self.catalog, self.cache, compact=self.compact)
        new_tokens = sum(s.tokens for s in added)
        if first and self.meta_tool:
            new_tokens += build_schema(META_TOOL).tokens
        for s in added:
            self._sent[s.name] = s
        wire = sum(s.tokens for s in self._sent.values()) + (build_schema(META_TOOL).tokens if self.meta_tool else 0)
        rnd = SchemaRound(len(self._rounds) + 1, added, dropped, new_tokens, wire)
        self._rounds.append(rnd)
        return rnd


@dataclass(frozen=True)
class RequestTokens:
    """Schema tokens of one request over its rounds."""

    initial: int  # tokens of round 1
    incremental: int  # Σ new tokens over rounds (a provider that keeps earlier schemas)
    wire: int  # Σ wire tokens over rounds (a provider that wants every schema on every call)
    rounds: int
    schemas: int


def request_tokens(rounds: Sequence[Sequence[str]], catalog: Catalog, cache: SchemaCache | None = None,
                   *, meta_tool: bool = True, compact: bool = False) -> RequestTokens:
    """Tokens of one request whose calls show ``rounds`` (names per call, round 1 first)."""
    state = ProgressiveSchemas(catalog, cache, meta_tool=meta_tool, compact=compact)
    done = [state.round(r) for r in rounds] or [state.round(())]
    return RequestTokens(
        initial=done[0].new_tokens,
        incremental=sum(r.new_tokens for r in done),
        wire=sum(r.wire_tokens for r in done),
        rounds=len(done),
        schemas=len(state.sent),
    )


def _summary(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    s = sorted(values)

    def pct(p: float) -> float:
        i = max(0, math.ceil(p * len(s)) - 1)
        return float(s[i])

    return {"mean": round(sum(s) / len(s), 2), "p50": pct(0.5), "p95": pct(0.95), "max": float(s[-1])}


def schema_token_report(offers_by_round: Mapping[str, Sequence[Sequence[Sequence[str]]]], catalog: Catalog,
                        *, cache: SchemaCache | None = None, compact: bool = False) -> dict[str, Any]:
    """Per strategy: initial / incremental / wire schema tokens per request, summarised.

    ``offers_by_round`` maps a strategy name (e.g. ``"full_k48"``) to one entry per
    request, each a list of rounds, each the names shown in that call. A strategy
    whose name starts with ``full`` is counted without the meta-tool. Deterministic.
    """
    cache = cache if cache is not None else SchemaCache()
    out: dict[str, Any] = {"token_model": "calibrated estimate (agent/data/token_model.json, o200k_base)"}
    strategies: dict[str, Any] = {}
    for name, requests in offers_by_round.items():
        meta = not name.startswith("full")
        rows = [request_tokens(r, catalog, cache, meta_tool=meta, compact=compact) for r in requests]
        strategies[name] = {
            "requests": len(rows),
            "meta_tool": meta,
            "initial": _summary([r.initial for r in rows]),
            "incremental": _summary([r.incremental for r in rows]),
            "wire": _summary([r.wire for r in rows]),
            "rounds": _summary([r.rounds for r in rows]),
            "requests_with_search": sum(1 for r in rows if r.rounds > 1),
        }
    out["strategies"] = strategies
    return out


def gold_rounds(discoverer: Any, queries: Iterable[Any], context: Context | None = None, *,
                k_full: int = 48, k_initial: int = 15, search_limit: int = 10) -> dict[str, list[list[list[str]]]]:
    """The standard comparison for a gold set: ``full_k48`` vs ``progressive_k15``.

    Each query needs ``query``, ``primary_expected_tools`` and optionally ``history``
    (attributes or mapping keys). Full: one round of the top ``k_full``. Progressive:
    round 1 is the top ``k_initial``; when a primary tool is missing from it, the model
    is assumed to call ``search_tools`` with the user's query, and round 2 adds the
    results not yet shown (about ``search_limit`` of them; a search returns at most
    32) through a real :class:`ToolSession`.
    """
    from tooldisc.agent.search_tools import ToolSession

    full: list[list[list[str]]] = []
    prog: list[list[list[str]]] = []
    for q in queries:
        text = _field(q, "query")
        primary = set(_field(q, "primary_expected_tools") or ())
        history = tuple(_field(q, "history") or ())
        ctx = context or discoverer.default_context
        full.append([list(discoverer.discover(text, ctx, k_full, history).names)])
        offer = discoverer.discover(text, ctx, k_initial, history)
        rounds = [list(offer.names)]
        if primary - set(offer.names):
            # The same text searched again returns the offer first; asking for
            # k_initial + search_limit results makes the new ones the next ranks.
            session = ToolSession(discoverer, ctx, offer)
            found = session.search(text, limit=min(k_initial + search_limit, MAX_SCHEMAS_PER_CALL))
            rounds.append(list(found.new))
        prog.append(rounds)
    return {f"full_k{k_full}": full, f"progressive_k{k_initial}": prog}


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)
