"""The records discovery passes around: tools, contexts, candidates and offers.

All are frozen dataclasses so a stage can never mutate what an earlier stage
decided; dicts exist only at the JSON/YAML edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import repeat
from operator import call
from typing import Any

from tooldisc import values

SIDE_EFFECTS: tuple[str, ...] = ("none", "write", "delete", "export", "execute")
MODES: tuple[str, ...] = ("analyzer", "supervised", "autonomous")

_SIDE_EFFECT_SET = frozenset(SIDE_EFFECTS)
_TOOL_LISTS = ("roles", "permissions", "domains", "aliases", "keywords", "examples", "companion_tools")
_TOOL_FLAGS = ("requires_approval", "always_confirm", "tenant_required", "is_core", "enabled", "deprecated")
_TOOL_TEXTS = ("version", "namespace", "risk_level", "capability", "replacement", "quarantine")
_TOOL_SCHEMAS = ("parameters", "compact_parameters", "output_schema")
_IDENTIFIERS = ("roles", "permissions", "companion_tools")  # printed and compared as written


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

    def __post_init__(self) -> None:
        # C-level type tests for the valid case (a catalog load builds 100,000 tools); only a tool
        # that fails them pays for the precise diagnosis.
        se, name = self.side_effect, self.name
        if not (type(name) is str and (se is None or (type(se) is str and se in _SIDE_EFFECT_SET))
                and type(self.description) is str and type(self.schema_version) is str
                and type(self.definition_hash) is str
                and type(self.requires_approval) is bool and type(self.always_confirm) is bool
                and type(self.tenant_required) is bool and type(self.is_core) is bool
                and type(self.enabled) is bool and type(self.deprecated) is bool
                and type(self.roles) is tuple and type(self.permissions) is tuple and type(self.domains) is tuple
                and type(self.aliases) is tuple and type(self.keywords) is tuple and type(self.examples) is tuple
                and type(self.companion_tools) is tuple
                and "" not in self.roles and "" not in self.permissions
                and (self.version is None or type(self.version) is str)
                and (self.namespace is None or type(self.namespace) is str)
                and (self.risk_level is None or type(self.risk_level) is str)
                and (self.capability is None or type(self.capability) is str)
                and (self.replacement is None or type(self.replacement) is str)
                and (self.quarantine is None or type(self.quarantine) is str)
                and (self.parameters is None or isinstance(self.parameters, Mapping))
                and (self.compact_parameters is None or isinstance(self.compact_parameters, Mapping))
                and (self.output_schema is None or isinstance(self.output_schema, Mapping))
                and _texts_ok(self)):
            _check_tool(self)

    @classmethod
    def of_fields(cls, values: Sequence[Any]) -> Tool:
        """The tool whose fields, in declaration order, are ``values``: checked as ``Tool(...)`` checks it.

        For loaders building 100,000 records: a frozen dataclass's ``__init__`` sets each of its 27
        fields through ``object.__setattr__``, most of a record's construction; this sets the slots
        directly, then runs the same ``__post_init__``."""
        if len(values) != len(_SLOT_SETTERS):
            raise TypeError(f"Tool.of_fields takes {len(_SLOT_SETTERS)} values (every field); got {len(values)}")
        tool = object.__new__(cls)
        any(map(call, _SLOT_SETTERS, repeat(tool), values))  # each setter returns None: all of them run
        tool.__post_init__()
        return tool


def _all_str(items: tuple[Any, ...]) -> bool:
    return all(type(x) is str for x in items)


_SLOT_SETTERS = tuple(Tool.__dict__[f.name].__set__ for f in fields(Tool))  # the slots' descriptors, in field order


def _texts_ok(tool: Tool) -> bool:
    """Every list item a string, and the name and identifiers printable (the catalog loader's
    rule): one C-level join each; a non-printable join (ZWNJ and ZWJ, which Persian needs, are
    allowed) goes to the exact check."""
    try:
        ident = tool.name + "".join(tool.roles) + "".join(tool.permissions) + "".join(tool.companion_tools)
        "".join(tool.domains), "".join(tool.aliases), "".join(tool.keywords), "".join(tool.examples)
    except TypeError:
        return False
    return bool(tool.name) and ident.isprintable()


def _check_tool(tool: Tool) -> None:
    """The precise error for a :class:`Tool` that failed the fast check: the first bad field,
    TypeError for a wrong type, ValueError for a bad value. A list for a tuple field is taken as
    its tuple (a value, not a type mistake); a bare string never is."""
    from tooldisc.terminal import escape, is_clean

    owner = "Tool"
    values.string(owner, "name", tool.name)
    if not is_clean(tool.name):
        raise values.value_error(owner, "name", "printable text (no control or format character)", escape(tool.name))
    values.string(owner, "description", tool.description, empty=True)
    values.string(owner, "schema_version", tool.schema_version)
    values.string(owner, "definition_hash", tool.definition_hash, empty=True)
    if tool.side_effect is not None:
        values.choice(owner, "side_effect", tool.side_effect, SIDE_EFFECTS)
    for name in _TOOL_FLAGS:
        values.flag(owner, name, getattr(tool, name))
    for name in _TOOL_TEXTS:
        values.string(owner, name, getattr(tool, name), optional=True, empty=True)
    for name in _TOOL_SCHEMAS:
        values.mapping(owner, name, getattr(tool, name), optional=True)
    for name in _TOOL_LISTS:
        value = getattr(tool, name)
        if isinstance(value, set | frozenset):  # an unordered set would make the definition hash vary
            raise values.type_error(owner, name, "a list or tuple of strings", value)
        items = values.strings(owner, name, value, empty_items=name not in ("roles", "permissions"))
        if name in _IDENTIFIERS and not all(map(is_clean, items)):
            bad = next(x for x in items if not is_clean(x))
            raise values.value_error(owner, f"{name}[]", "printable text (no control or format character)", escape(bad))
        object.__setattr__(tool, name, items)


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

    def __post_init__(self) -> None:
        """The context file's rules (discovery/context.py) for an object built in Python: an exact
        mode, a tenant that is a non-empty string or None, and collections of non-empty strings
        (a list or set is taken as its frozenset; a bare ``str`` never is)."""
        values.string("Context", "tenant", self.tenant, optional=True)
        for name in ("roles", "permissions", "forced"):
            value = getattr(self, name)
            if type(value) is not frozenset or not _all_str(tuple(value)) or "" in value:
                object.__setattr__(self, name, frozenset(values.strings("Context", name, value)))
        values.choice("Context", "mode", self.mode, MODES)
        values.flag("Context", "is_default", self.is_default)

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
