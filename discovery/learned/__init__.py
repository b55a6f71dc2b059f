"""The learned file: what ``tooldisc learn`` fitted from labelled traffic, and how it is read.

One versioned, human-readable JSON document (never pickle), recognised by its content
whatever the file is called. It holds only aggregate, k-anonymous data — phrases that
several distinct requests for a tool share, and model coefficients — never a request
as it was written. Every part may *rank*; none may *authorize* (DESIGN §2): nothing
here is read by the security filter, and the mutation part can only narrow a query's
class to READ.

Integrity: the document carries the SHA-256 of its own canonical JSON. A file that was
edited by hand or truncated no longer matches and is refused as bad input (exit 2). The
checksum catches accidents, not an adversary (who could recompute it); that is enough
because a learned file cannot widen what a request may see.

Catalog binding: the file names the catalog hash it was learned on, and each tool's
expansions name that tool's definition hash. Used with another catalog, the file is
*not* refused: the parts that are stale — expansions of tools that are gone or whose
definition changed — are ignored, and :func:`bind` returns notes saying so, which every
command prints as a warning. The models read catalog-independent features (scaled
scores, shares, gaps), so they still apply.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tooldisc import values

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog

FORMAT = "tooldisc-learned"
VERSION = 1
MAX_LEARNED_BYTES = 64 * 1024 * 1024
MUTATION_CLASSES = ("WRITE", "DESTRUCTIVE", "EXPORT", "EXECUTE")
_MAX_PHRASE_CHARS = 200
MAX_COUNT = 10**9  # the largest count a learned file may hold (min_requests, max_phrases, a phrase's requests)


def _range(owner: str, name: str, value: Any, bounds: str) -> None:
    """``value`` within the named entry of the one range table a config is checked with."""
    from tooldisc.discovery.config import RANGES

    r = RANGES[bounds]
    values.number(owner, name, value, r.low, r.high)


@dataclass(frozen=True)
class LinearModel:
    """``intercept + coef · x`` over named features; the link is applied by the caller."""

    features: tuple[str, ...]
    coef: np.ndarray
    intercept: float = 0.0

    def __post_init__(self) -> None:
        """Distinct feature names, one finite coefficient each (a list is taken as its array), all
        within the coefficient range; a part's own range is checked by :class:`Learned`."""
        names = values.strings("LinearModel", "features", self.features)
        if not names or len(set(names)) != len(names):
            raise values.value_error("LinearModel", "features", "a non-empty collection of distinct names", names)
        object.__setattr__(self, "features", names)
        coef = self.coef
        if not isinstance(coef, np.ndarray):
            if not isinstance(coef, list | tuple) or not all(
                    isinstance(c, int | float) and not isinstance(c, bool) for c in coef):
                raise values.type_error("LinearModel", "coef", "an array or list of numbers", coef)
            coef = np.array(coef, dtype=np.float64)
        if coef.ndim != 1 or coef.dtype.kind not in "fiu" or len(coef) != len(names):
            raise values.value_error("LinearModel", "coef", f"{len(names)} numbers, one per feature", coef)
        for i, c in enumerate(coef.tolist()):
            _range("LinearModel", f"coef[{i}]", c, "coefficient")
        object.__setattr__(self, "coef", coef.astype(np.float64, copy=False))
        _range("LinearModel", "intercept", self.intercept, "coefficient")

    def decision(self, x: np.ndarray) -> np.ndarray:
        """Linear score of each row of ``x`` (columns in ``features`` order)."""
        return x @ self.coef + self.intercept

    def probability(self, x: np.ndarray) -> np.ndarray:
        """Logistic link: the calibrated probability of the positive class."""
        # min/max, not np.clip: the same bits (NaN included) at half the fixed cost on a per-request row
        z = np.minimum(np.maximum(self.decision(x), -60.0), 60.0)
        return 1.0 / (1.0 + np.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "coef": [_num(c) for c in self.coef.tolist()],
                "intercept": _num(self.intercept)}


@dataclass(frozen=True)
class Expansions:
    """Per tool: phrases that at least ``min_requests`` distinct requests for it contained.

    ``tools`` maps a tool name to (definition hash, ((phrase, distinct requests), ...)).
    """

    min_requests: int
    max_phrases: int
    tools: Mapping[str, tuple[str, tuple[tuple[str, int], ...]]]
    weight: float = 1.0  # the expansion feature's weight when no learned ranker gives one
    # Phrase weights (the affinity part): tool → phrase → weight, over the tool's own phrases only.
    affinity: Mapping[str, Mapping[str, float]] | None = None
    affinity_weight: float = 0.0  # the affinity feature's weight when no learned ranker gives one
    temperature: float = 0.1  # of the softmax that turns summed phrase weights into the feature

    def __post_init__(self) -> None:
        """The reader's rules (k-anonymity included) for expansions built in Python. A phrase list
        shared by many tools (a grown bench catalog) is checked once."""
        owner = "Expansions"
        values.number(owner, "min_requests", self.min_requests, 2, MAX_COUNT, integer=True)
        values.number(owner, "max_phrases", self.max_phrases, 1, MAX_COUNT, integer=True)
        _range(owner, "weight", self.weight, "weight")
        _range(owner, "affinity_weight", self.affinity_weight, "weight")
        _range(owner, "temperature", self.temperature, "affinity_temperature")
        values.mapping(owner, "tools", self.tools)
        checked: set[int] = set()
        for name, entry in self.tools.items():
            values.string(owner, "tools (a key)", name)
            if type(entry) is not tuple or len(entry) != 2 or type(entry[0]) is not str or type(entry[1]) is not tuple:
                raise values.type_error(owner, f"tools[{name!r}]", "a (definition hash, phrases tuple) pair", entry)
            if id(entry[1]) not in checked:
                self._check_phrases(name, entry[1])
                checked.add(id(entry[1]))
        values.mapping(owner, "affinity", self.affinity, optional=True)
        for name, weights in (self.affinity or {}).items():
            values.mapping(owner, f"affinity[{name!r}]", weights)
            if id(weights) not in checked:
                for phrase, w in weights.items():
                    values.string(owner, f"affinity[{name!r}] (a phrase)", phrase)
                    _range(owner, f"affinity[{name!r}][{phrase!r}]", w, "weight")
                checked.add(id(weights))

    def _check_phrases(self, name: str, phrases: tuple[Any, ...]) -> None:
        at = f"tools[{name!r}].phrases"
        if len(phrases) > self.max_phrases:
            raise values.value_error("Expansions", at, f"at most max_phrases ({self.max_phrases}) phrases",
                                     len(phrases))
        for pair in phrases:
            if type(pair) is not tuple or len(pair) != 2 or not isinstance(pair[0], str):
                raise values.type_error("Expansions", at, "(phrase, count) pairs", pair)
            if not pair[0].strip() or len(pair[0]) > _MAX_PHRASE_CHARS:
                raise values.value_error("Expansions", at, f"phrases of 1–{_MAX_PHRASE_CHARS} characters", pair[0])
            values.number("Expansions", f"{at} (a count)", pair[1], self.min_requests, MAX_COUNT, integer=True)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "min_requests": self.min_requests,
            "max_phrases": self.max_phrases,
            "weight": _num(self.weight),
        }
        aff = self.affinity
        if aff is not None:
            out["affinity"] = {"weight": _num(self.affinity_weight), "temperature": _num(self.temperature)}
        out["tools"] = {name: {"definition": h, "phrases": self._rows(name, ps)} for name, (h, ps) in sorted(self.tools.items())}
        return out

    def _rows(self, name: str, ps: tuple[tuple[str, int], ...]) -> list[list[Any]]:
        """One tool's phrases as the document lists them: ``[phrase, count]`` or ``[phrase, count, weight]``."""
        aff = self.affinity
        if aff is None:
            return [[p, c] for p, c in ps]
        weights = aff.get(name, {})
        return [[p, c, _num(weights.get(p, 0.0))] for p, c in ps]

    def tools_json(self) -> Iterator[str]:
        """The canonical JSON text of ``to_dict()["tools"]``, in pieces (what the digest hashes).

        Tools that share their phrases and weights (the variants of one tool in a grown
        bench catalog, or tools learned alike) share one encoded phrase list, so the cost
        follows the distinct phrase lists, not the tools.
        """
        from json.encoder import encode_basestring  # _canonical of a str, minus the dispatch

        aff = self.affinity
        memo: dict[tuple[Any, int], str] = {}
        yield "{"
        for i, (name, (h, ps)) in enumerate(sorted(self.tools.items())):
            key = (ps, id(aff.get(name)) if aff is not None else 0)  # the weights dict is alive: its id is stable here
            rows = memo.get(key)
            if rows is None:
                rows = memo[key] = _canonical(self._rows(name, ps))
            yield f'{"," if i else ""}{encode_basestring(name)}:{{"definition":{encode_basestring(h)},"phrases":{rows}}}'
        yield "}"


@dataclass(frozen=True)
class Abstention:
    """P(no authorized tool fits the request) from offer features, and where to abstain."""

    model: LinearModel
    threshold: float
    target_false_abstention: float
    # False: the model only gives the offer's confidence and the config's floors decide
    # (the shipped model under ``abstain.model: false``). Never stored in a file.
    decides: bool = True

    def __post_init__(self) -> None:
        from tooldisc.discovery.learned.features import ABSTENTION_FEATURES

        if not isinstance(self.model, LinearModel):
            raise values.type_error("Abstention", "model", "a LinearModel", self.model)
        unknown = [f for f in self.model.features if f not in ABSTENTION_FEATURES]
        if unknown:
            raise values.value_error("Abstention", "model.features", f"names among {', '.join(sorted(ABSTENTION_FEATURES))}",
                                     unknown[0])
        _range("Abstention", "threshold", self.threshold, "probability")
        _range("Abstention", "target_false_abstention", self.target_false_abstention, "probability")
        values.flag("Abstention", "decides", self.decides)

    def to_dict(self) -> dict[str, Any]:
        return {**self.model.to_dict(), "threshold": _num(self.threshold),
                "target_false_abstention": _num(self.target_false_abstention)}


@dataclass(frozen=True)
class MutationModel:
    """P(the word lists' mutation class is what the request means); below ``threshold`` → READ.

    Terms are stems that at least ``min_requests`` distinct labelled requests contained;
    ``rules`` holds one coefficient per word-list class. It can only narrow.
    """

    terms: Mapping[str, float]
    rules: Mapping[str, float]
    intercept: float
    threshold: float

    def __post_init__(self) -> None:
        owner = "MutationModel"
        values.mapping(owner, "terms", self.terms)
        for term, c in self.terms.items():
            values.string(owner, "terms (a key)", term)
            _range(owner, f"terms[{term!r}]", c, "coefficient")
        values.mapping(owner, "rules", self.rules)
        for rule, c in self.rules.items():
            values.choice(owner, "rules (a key)", rule, MUTATION_CLASSES)
            _range(owner, f"rules[{rule!r}]", c, "coefficient")
        _range(owner, "intercept", self.intercept, "coefficient")
        _range(owner, "threshold", self.threshold, "probability")

    def to_dict(self) -> dict[str, Any]:
        return {"terms": {t: _num(c) for t, c in sorted(self.terms.items())},
                "rules": {r: _num(c) for r, c in sorted(self.rules.items())},
                "intercept": _num(self.intercept), "threshold": _num(self.threshold)}


@dataclass(frozen=True)
class Learned:
    """A loaded, verified learned file. ``report`` is what ``learn`` measured (free-form)."""

    catalog_hash: str
    expansions: Expansions | None = None
    ranker: LinearModel | None = None
    abstention: Abstention | None = None
    mutation: MutationModel | None = None
    report: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None
    clauses: float | None = None  # the clauses step's weight (discovery/rank/clauses.py), when learn kept it

    def __post_init__(self) -> None:
        """Each part of its record type and within the ranges a config's keys have (RANGES): the
        ranker's coefficients are feature weights, the clauses part is ``clauses.weight``."""
        from tooldisc.discovery.learned.features import RANKER_FEATURES

        owner = "Learned"
        values.string(owner, "catalog_hash", self.catalog_hash)
        for name, kind in (("expansions", Expansions), ("ranker", LinearModel), ("abstention", Abstention),
                           ("mutation", MutationModel)):
            part = getattr(self, name)
            if part is not None and not isinstance(part, kind):
                raise values.type_error(owner, name, f"a {kind.__name__} or None", part)
        if self.ranker is not None:
            unknown = [f for f in self.ranker.features if f not in RANKER_FEATURES]
            if unknown:
                raise values.value_error(owner, "ranker.features", f"names among {', '.join(sorted(RANKER_FEATURES))}",
                                         unknown[0])
            for i, c in enumerate(self.ranker.coef.tolist()):
                _range(owner, f"ranker.coef[{i}]", c, "weight")
        if self.clauses is not None:
            _range(owner, "clauses", self.clauses, "share")
        values.mapping(owner, "report", self.report)
        values.string(owner, "source", self.source, optional=True)

    @property
    def parts(self) -> tuple[str, ...]:
        """Names of the parts this file holds, in a fixed order (``affinity`` lives in the expansions)."""
        held = {p: getattr(self, p) is not None for p in ("expansions", "ranker", "clauses", "abstention", "mutation")}
        held["affinity"] = self.expansions is not None and self.expansions.affinity is not None
        return tuple(p for p in ("expansions", "affinity", "ranker", "clauses", "abstention", "mutation") if held[p])

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical document: identifies this learned file in offer hashes.

        The same bytes as ``_checksum(_body(self))``, hashed in pieces: the expansions'
        tools (nearly all of a large file) are encoded once per distinct phrase list
        (:meth:`Expansions.tools_json`) instead of as one document of every value.
        """
        if self.expansions is None:
            return _checksum(_body(self))
        slot = secrets.token_hex(16)  # stands in for the tools object; no other text can contain it
        body = _body(self, tools=slot)
        before, sep, after = _canonical(body).partition(_canonical(slot))
        if not sep:  # unreachable (the slot is in the body); the whole document then
            return _checksum(_body(self))
        h = hashlib.sha256(before.encode("utf-8"))
        for piece in self.expansions.tools_json():
            h.update(piece.encode("utf-8"))
        h.update(after.encode("utf-8"))
        return h.hexdigest()


# --- writing ------------------------------------------------------------------------


def _num(x: float) -> float:
    """A float as JSON keeps it stably: 10 significant digits (reproducible across runs)."""
    return float(f"{float(x):.10g}")


def _body(learned: Learned, tools: str | None = None) -> dict[str, Any]:
    """The document without its checksum; ``tools``: a placeholder for the expansions' tools object."""
    parts: dict[str, Any] = {}
    if learned.expansions is not None:
        parts["expansions"] = learned.expansions.to_dict() if tools is None else {
            **dataclasses.replace(learned.expansions, tools={}).to_dict(), "tools": tools}
    if learned.ranker is not None:
        parts["ranker"] = learned.ranker.to_dict()
    if learned.clauses is not None:
        parts["clauses"] = {"weight": _num(learned.clauses)}
    if learned.abstention is not None:
        parts["abstention"] = learned.abstention.to_dict()
    if learned.mutation is not None:
        parts["mutation"] = learned.mutation.to_dict()
    return {"format": FORMAT, "version": VERSION, "catalog_hash": learned.catalog_hash,
            "parts": parts, "report": json.loads(json.dumps(learned.report, sort_keys=True))}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _checksum(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


_SCALAR = r'(?:"(?:[^"\\\[\]]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)'
_LEAF_ARRAY = re.compile(r"\[\s*(" + _SCALAR + r"(?:\s*,\s*" + _SCALAR + r")*)\s*\]")


def dumps_learned(learned: Learned) -> str:
    """The file text: indented, sorted keys, UTF-8 kept, with its checksum; byte-stable.

    Arrays of plain values (a ``[phrase, count, weight]`` row, a coefficient list) stay
    on one line, so a person can read a tool's expansions top to bottom.
    """
    body = _body(learned)
    doc = {**body, "sha256": _checksum(body)}
    text = json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False)
    return _LEAF_ARRAY.sub(lambda m: "[" + ", ".join(re.split(r"\s*,\s*(?=" + _SCALAR + ")", m.group(1))) + "]",
                           text) + "\n"


# --- binding to a catalog -----------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """A learned file as it applies to one catalog: stale expansions removed, with notes."""

    learned: Learned
    expansions: Mapping[str, tuple[tuple[str, int], ...]]  # tool name → phrases, current tools only
    notes: tuple[str, ...] = ()
    affinity: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # current tools only


def bind(learned: Learned, catalog: Catalog) -> Bound:
    """Keep the expansions of tools whose definition is unchanged; say loudly what was dropped."""
    notes: list[str] = []
    kept: dict[str, tuple[tuple[str, int], ...]] = {}
    where = learned.source or "learned file"
    if learned.expansions is not None:
        by_name = catalog.by_name
        gone = changed = 0
        for name, (definition, phrases) in learned.expansions.tools.items():
            tool = by_name.get(name)
            if tool is None:
                gone += 1
            elif tool.definition_hash != definition:
                changed += 1
            else:
                kept[name] = phrases
        if gone or changed:
            notes.append(f"warning: {where}: expansions of {gone + changed} tool(s) ignored as stale "
                         f"({gone} not in the catalog, {changed} changed since learning); re-run 'tooldisc learn'")
    if learned.catalog_hash != catalog.hash:
        notes.append(f"warning: {where}: learned on catalog {learned.catalog_hash[:12]}, used with "
                     f"{catalog.hash[:12]}; models still apply, stale expansions do not")
    aff = learned.expansions.affinity if learned.expansions is not None else None
    affinity = {name: aff[name] for name in kept if aff is not None and name in aff}
    return Bound(learned, kept, tuple(notes), affinity)


# --- applying a learned file ---------------------------------------------------------


def narrows(model: MutationModel, query_terms: set[str], rule_class: str) -> bool:
    """True when ``model`` says the word lists' ``rule_class`` is not what the request means.

    Only a mutation class can be narrowed (to READ); READ and UNKNOWN never change.
    """
    if rule_class not in MUTATION_CLASSES:
        return False
    z = model.intercept + model.rules.get(rule_class, 0.0) + sum(model.terms.get(t, 0.0) for t in query_terms)
    p = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
    return p < model.threshold


def for_grown_catalog(learned: Learned, base: Catalog, grown: Catalog) -> Learned:
    """The learned file re-bound to a synthetic catalog grown from its own (``tooldisc bench``).

    Base tools keep their expansions; each variant (named ``{namespace}_{base name}_…``
    by :mod:`.synthetic`) takes its base tool's, so the expansion index is as large,
    relative to the catalog, as in the file's own catalog. Refused when ``base`` is not
    the catalog the file was learned on.
    """
    from tooldisc.errors import UsageError

    if base.hash != learned.catalog_hash:
        raise UsageError("a learned file applies to the catalog it was learned on: pass that catalog with "
                         f"--catalog (learned on {learned.catalog_hash[:12]}, got {base.hash[:12]})")
    if learned.expansions is None:
        return dataclasses.replace(learned, catalog_hash=grown.hash)
    own = {name: phrases for name, (_, phrases) in learned.expansions.tools.items()}
    weights = learned.expansions.affinity
    tools: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}
    affinity: dict[str, Mapping[str, float]] = {}
    for t in grown.tools:
        source = t.name if t.name in own else _variant_base(t, own)
        if source is not None:
            tools[t.name] = (t.definition_hash, own[source])
            if weights is not None and source in weights:
                affinity[t.name] = weights[source]
    grown_exp = dataclasses.replace(learned.expansions, tools=tools, affinity=affinity if weights is not None else None)
    return dataclasses.replace(learned, catalog_hash=grown.hash, expansions=grown_exp)


def _variant_base(tool: Any, names: Mapping[str, Any]) -> str | None:
    rest = tool.name[len(tool.namespace) + 1:] if tool.namespace and tool.name.startswith(f"{tool.namespace}_") else ""
    cut = rest.rfind("_")
    while cut > 0:
        if rest[:cut] in names:
            return rest[:cut]
        cut = rest.rfind("_", 0, cut)
    return None
