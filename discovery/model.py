"""The records discovery passes around: tools, contexts, candidates and offers.

All are frozen dataclasses so a stage can never mutate what an earlier stage
decided; dicts exist only at the JSON/YAML edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SIDE_EFFECTS: tuple[str, ...] = ("none", "write", "delete", "export", "execute")
MODES: tuple[str, ...] = ("analyzer", "supervised", "autonomous")


@dataclass(frozen=True, slots=True)  # no per-record __dict__: ~70 bytes less a tool, 100,000 tools in a benchmark
class Tool:
    """One catalog entry with every DESIGN §3 default filled in.

    ``side_effect`` is ``None`` when the catalog does not say: such a tool is
    UNKNOWN to the security filter and never becomes a candidate.
    ``parameters`` is ``None`` when the argument shape is unknown. ``quarantine``
    says why a tool whose embedded JSON Schema is broken may never be offered.
    """

    name: str
    description: str = ""
    version: str | None = None
    namespace: str | None = None
    parameters: Mapping[str, Any] | None = None
    compact_parameters: Mapping[str, Any] | None = None
    schema_version: str = "1"
    output_schema: Mapping[str, Any] | None = None
    side_effect: str | None = None
    risk_level: str | None = None
    requires_approval: bool = False
    always_confirm: bool = False
    roles: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()
    tenant_required: bool = False
    domains: tuple[str, ...] = ()
    capability: str | None = None
    aliases: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    companion_tools: tuple[str, ...] = ()
    is_core: bool = False
    enabled: bool = True
    deprecated: bool = False
    replacement: str | None = None
    definition_hash: str = field(default="", compare=False)
    quarantine: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Context:
    """Who is asking: the only input besides the query that decides an offer.

    ``forced`` names (a pending approval turn) skip only the mutation step,
    never roles, permissions or tenant.
    """

    tenant: str | None = None
    roles: frozenset[str] = frozenset()
    permissions: frozenset[str] = frozenset()
    mode: str = "autonomous"
    forced: frozenset[str] = frozenset()
    is_default: bool = field(default=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "roles": sorted(self.roles),
            "permissions": sorted(self.permissions),
            "mode": self.mode,
            "forced": sorted(self.forced),
            "default": self.is_default,
        }


@dataclass(frozen=True)
class Candidate:
    """A ranked tool: its score and the weighted feature contributions behind it."""

    name: str
    score: float
    features: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "score": round(self.score, 6),
            "features": {k: round(v, 6) for k, v in sorted(self.features.items())},
        }


@dataclass(frozen=True)
class Confidence:
    """How sure discovery is: top score, gap to the runner-up, a level, and (with an
    abstention model) the calibrated probability that some authorized tool fits."""

    top_score: float
    gap: float
    level: str  # "high" | "medium" | "low" | "none"
    probability: float | None = None  # calibrated P(some authorized tool fits), when an abstention model runs

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"top_score": round(self.top_score, 6), "gap": round(self.gap, 6), "level": self.level}
        if self.probability is not None:
            out["probability"] = round(self.probability, 6)
        return out


@dataclass(frozen=True)
class Offer:
    """What discovery decided for one request. Timings never enter ``offer_hash``."""

    query: str
    context: Context
    mutation: str
    k: int
    k_reason: str
    candidates: tuple[Candidate, ...]
    confidence: Confidence
    authorized_count: int
    retrieval: str
    catalog_hash: str
    offer_hash: str
    fallback: tuple[str, ...] = ()
    fallback_reason: str | None = None
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates)

    def to_dict(self, *, timings: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "context": self.context.to_dict(),
            "mutation": self.mutation,
            "k": self.k,
            "k_reason": self.k_reason,
            "candidates": [c.to_dict() for c in self.candidates],
            "confidence": self.confidence.to_dict(),
            "authorized_count": self.authorized_count,
            "retrieval": self.retrieval,
            "fallback": list(self.fallback),
            "fallback_reason": self.fallback_reason,
            "catalog_hash": self.catalog_hash,
            "offer_hash": self.offer_hash,
        }
        if timings:
            out["timings_ms"] = {k: round(v, 4) for k, v in self.timings.items()}
        return out
