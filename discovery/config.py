"""Ranker configuration: one declared schema for every key a ranker YAML may hold.

Weights are data, judged by evaluation (DESIGN §2 "measured, not guessed"). The
schema below is the single source of the keys: each section is a frozen dataclass
whose attribute path equals the YAML path (``cfg.bm25.k1`` is ``bm25.k1``), and each
key declares its neutral default and its constraint as data. Validation, the tunable
keys of ``tooldisc tune``, defaults and the config hash are all read from it, so a
key added here is validated, tunable and hashed with no other edit. The shipped
values live in ``discovery/data/default.yaml``, overlaid on the neutral defaults.
An error names the file, the key, what is allowed and what arrived (the
scikit-learn convention).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from typing import Any, ClassVar

from tooldisc.closed_schema import check_keys, without_extensions
from tooldisc.discovery.rank.features import REGISTRY as FEATURE_REGISTRY
from tooldisc.errors import ConfigError
from tooldisc.limits import COUNTS
from tooldisc.params import Flag, Interval, NumberMap, Options, refuse

# BM25F fields a ``fields`` weight may name (what :mod:`.fields` can build a column for).
FIELDS = ("name", "aliases", "keywords", "capability", "domains", "description", "examples", "parameters")
# Ranking features a ``weights`` entry may name, and the weight of one no file names: derived
# from the feature registry (:data:`tooldisc.discovery.rank.features.REGISTRY`), in its order.
FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURE_REGISTRY)
DEFAULT_WEIGHTS: dict[str, float] = {f.name: f.default_weight for f in FEATURE_REGISTRY if f.default_weight}


# --- constraints (data, checked in one place) ----------------------------------------
#
# Each key declares its rule with the rulebook's constraint objects (tooldisc.params): a file
# loader raises a refusal as a ConfigError (exit 2, the file named), a constructor of the
# Python API as TypeError/ValueError (:func:`validate_section`), so both refuse exactly the
# same values with the same message.

Rule = Interval | Options | Flag | NumberMap


# --- ranges: one table for every bounded number of a config or a learned file ------------
#
# A learned file's parts are checked against the same entries as the config keys they stand
# for (learned_read): its ranker's coefficients and its expansion/affinity weights are
# feature weights, its clauses weight is ``clauses.weight``. Every bound is finite, so a
# weight of 1e308 (whose products overflow to inf and then NaN) is refused at load.

RANGES: dict[str, Interval] = {
    # a ranking feature's weight (weights.*, a learned ranker's coefficients, a learned file's
    # expansion and affinity weights) and a BM25F field's term-frequency multiplier (fields.*)
    "weight": Interval(float, 0.0, 1000.0),
    # the share of the clauses step in the fused score (clauses.weight, a learned clauses part)
    "share": Interval(float, 0.0, 1.0),
    # a learned probability threshold or target rate (abstention, mutation)
    "probability": Interval(float, 0.0, 1.0),
    # a coefficient or intercept of a learned logistic model (abstention, mutation)
    "coefficient": Interval(float, -1e6, 1e6),
    # the softmax temperature of learned phrase weights (a learned file's affinity part)
    "affinity_temperature": Interval(float, 1e-3, 1e3),
}


def key(default: Any, rule: Rule) -> Any:
    """A config key: its neutral default and its constraint."""
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"rule": rule})
    return field(default=default, metadata={"rule": rule})


# --- the schema ----------------------------------------------------------------------


@dataclass(frozen=True)
class TextSection:
    SECTION: ClassVar[str] = "text"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    stem: bool = key(True, Flag())  # Snowball stems on both sides; false folds English plurals only


@dataclass(frozen=True)
class Bm25Section:
    SECTION: ClassVar[str] = "bm25"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    k1: float = key(1.2, Interval(float, 0.0, 100.0))
    b: float = key(0.75, Interval(float, 0.0, 1.0))


@dataclass(frozen=True)
class HistorySection:
    SECTION: ClassVar[str] = "history"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    turns: int = key(3, Interval(int, 0, 100))
    decay: float = key(0.5, Interval(float, 0.0, 1.0))
    cap: float = key(1.0, Interval(float, 0.0, 100.0))


@dataclass(frozen=True)
class AdaptiveSection:
    SECTION: ClassVar[str] = "adaptive"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = (("min_k", "max_k"),)

    policy: str = key("ratio", Options(("ratio", "gap", "confidence", "mass")))
    min_k: int = key(3, Interval(int, 1, 1000))
    max_k: int = key(20, Interval(int, 1, 1000))
    ratio: float = key(0.35, Interval(float, 0.0, 1.0))
    temperature: float = key(0.175, Interval(float, 0.001, 100.0))
    mass: float = key(0.9, Interval(float, 0.0, 1.0))


@dataclass(frozen=True)
class AbstainSection:
    SECTION: ClassVar[str] = "abstain"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    # true: a calibrated model (the shipped default, or a learned file's) decides, and the floors below are unused
    model: bool = key(False, Flag())
    min_bm25: float = key(0.0, Interval(float, 0.0, 1e9))
    min_ngram: float = key(0.0, Interval(float, 0.0, 1.0))
    min_embedding: float = key(0.0, Interval(float, -1.0, 1.0))


@dataclass(frozen=True)
class NgramSection:
    SECTION: ClassVar[str] = "ngram"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = (("lo", "hi"),)

    lo: int = key(3, Interval(int, 1, 10))
    hi: int = key(5, Interval(int, 1, 10))
    long_fields_max_tools: int = key(20000, Interval(int, 0, 10**9))


@dataclass(frozen=True)
class RetrievalSection:
    SECTION: ClassVar[str] = "retrieval"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    min_tools: int = key(5000, Interval(int, 1, 10**9))
    candidates: int = key(100, Interval(int, 1, 10**6))


@dataclass(frozen=True)
class ClausesSection:
    SECTION: ClassVar[str] = "clauses"

    def __post_init__(self) -> None:
        validate_section(self, self.SECTION)

    # weight 0 turns the step off; a multi-step request's ranking is (1 − weight)·whole + weight·clauses
    weight: float = key(0.0, RANGES["share"])
    min_tokens: int = key(2, Interval(int, 1, 100))  # a shorter piece joins its neighbour
    max_clauses: int = key(8, Interval(int, 2, 64))  # bounds the step's cost (one rank per clause)


@dataclass(frozen=True)
class RankerConfig:
    """Everything that shapes ranking, in the YAML's shape. ``source`` names the last file overlaid."""

    k: int = key(15, COUNTS["k"].but(strict=False, why=""))  # the one k rule; a file may write 15.0
    text: TextSection = field(default_factory=TextSection)
    bm25: Bm25Section = field(default_factory=Bm25Section)
    fields: Mapping[str, float] = key({}, NumberMap(FIELDS, RANGES["weight"]))
    weights: Mapping[str, float] = key(DEFAULT_WEIGHTS, NumberMap(FEATURE_NAMES, RANGES["weight"]))
    history: HistorySection = field(default_factory=HistorySection)
    adaptive: AdaptiveSection = field(default_factory=AdaptiveSection)
    abstain: AbstainSection = field(default_factory=AbstainSection)
    ngram: NgramSection = field(default_factory=NgramSection)
    retrieval: RetrievalSection = field(default_factory=RetrievalSection)
    clauses: ClausesSection = field(default_factory=ClausesSection)
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for f in _keys(RankerConfig):
            kind = f.default_factory if f.default_factory is not dataclasses.MISSING else None
            if isinstance(kind, type) and dataclasses.is_dataclass(kind) and type(getattr(self, f.name)) is not kind:
                raise TypeError(f"The {f.name!r} parameter must be a {kind.__name__}. "
                                f"Got {getattr(self, f.name)!r} instead.")
        if self.source is not None and not isinstance(self.source, str):
            raise TypeError(f"The 'source' parameter must be a str or None. Got {self.source!r} instead.")
        validate_section(self, "")

    def weight(self, feature: str) -> float:
        return float(self.weights.get(feature, 0.0))

    def to_mapping(self) -> dict[str, Any]:
        """The config as the YAML it could be loaded from (every key, sorted weights)."""
        out: dict[str, Any] = {}
        for f in _keys(RankerConfig):
            value = getattr(self, f.name)
            if dataclasses.is_dataclass(value):
                out[f.name] = {g.name: getattr(value, g.name) for g in _keys(type(value))}
            elif isinstance(value, Mapping):
                out[f.name] = {n: float(value[n]) for n in sorted(value)}
            else:
                out[f.name] = value
        return out

    @cached_property
    def hash(self) -> str:
        """SHA-256 (first 16 hex digits) of :meth:`to_mapping`: every key, never ``source``.

        Cached: the config is frozen, and every engine build reads it. A section added
        after the first release (:data:`LATE_SECTIONS`) is left out while it holds its
        neutral defaults (the step is off), so configs that do not use it keep the hash,
        and so the offer hashes, they had before it existed.
        """
        mapping = self.to_mapping()
        for name in LATE_SECTIONS:
            section = getattr(self, name)
            if section == type(section)():
                del mapping[name]
        text = json.dumps(mapping, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


# Sections hashed only when set away from their neutral defaults (see RankerConfig.hash).
LATE_SECTIONS = ("clauses",)


def _keys(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    """The schema fields of a section or of the config (``source`` is not a key)."""
    return tuple(f for f in dataclasses.fields(cls) if f.name != "source")


def validate_section(obj: Any, prefix: str) -> None:
    """The constructor's check of a section (or the config's own keys) against the rules a file
    is read with: TypeError for a wrong type, ValueError for a bad value, the key named.

    An accepted int where a float is declared is stored as a float, and a weights mapping as a
    dict of floats, so equal configs hash alike however they were built.
    """
    for f in _keys(type(obj)):
        rule = f.metadata.get("rule")
        if rule is None:
            continue
        value = getattr(obj, f.name)
        path = f"{prefix}.{f.name}" if prefix else f.name
        found = rule.problem(value, path)
        if found is not None:
            refuse(found)
        if isinstance(rule, Interval) and type(value) is not rule.kind:
            object.__setattr__(obj, f.name, rule.kind(value))
        elif isinstance(rule, NumberMap):
            object.__setattr__(obj, f.name, {str(n): float(w) for n, w in value.items()})
    for lo, hi in getattr(type(obj), "ORDERED", ()):
        if getattr(obj, lo) > getattr(obj, hi):
            raise ValueError(_order_message(prefix, lo, hi, getattr(obj, lo), getattr(obj, hi)))


def _order_message(name: str, lo: str, hi: str, low: Any, high: Any) -> str:
    return f"{name}.{lo} ({low}) must not exceed {name}.{hi} ({high})"


def schema() -> Iterator[tuple[str, Rule]]:
    """Every leaf key path with its constraint, in file order (``weights``/``fields`` as maps)."""
    for f in _keys(RankerConfig):
        kind = f.default_factory if f.default_factory is not dataclasses.MISSING else None
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            for g in _keys(kind):
                yield f"{f.name}.{g.name}", g.metadata["rule"]
        else:
            yield f.name, f.metadata["rule"]


def tunable_keys() -> dict[str, type]:
    """Every numeric key path → int or float: what a ``tooldisc tune`` space may name.

    ``k`` is not tunable: the K a run is cut at is the tuner's own parameter, so the
    objective is always measured on the offer size it names.
    """
    out: dict[str, type] = {}
    for path, rule in schema():
        if isinstance(rule, NumberMap):
            out.update({f"{path}.{name}": float for name in rule.names})
        elif isinstance(rule, Interval) and path != "k":
            out[path] = rule.kind
    return out


def value_at(cfg: RankerConfig, path: str) -> Any:
    """The value of a key path (``bm25.k1``, ``weights.ngram``; an unset weight is 0)."""
    head, _, rest = path.partition(".")
    node = getattr(cfg, head)
    if isinstance(node, Mapping):
        return float(node.get(rest, 0.0))
    return getattr(node, rest) if rest else node


# --- loading -------------------------------------------------------------------------

_REMOVED = {"features": "the 'features' section was never read by any ranking step; remove it"}


def config_from_mapping(raw: Any, *, file: str | None = None, base: RankerConfig | None = None) -> RankerConfig:
    """Validate a mapping (from YAML) into a :class:`RankerConfig`, over ``base`` (neutral defaults if None).

    Only the keys ``raw`` sets change; every value is checked against its rule. Closed
    (tooldisc.closed_schema): an unknown key or section is an error naming the nearest known
    one; ``x-`` keys, at any level, are extension data and never read.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("a ranker config must be a mapping", file=file)
    top = {f.name: f for f in _keys(RankerConfig)}
    for name in raw:
        if name in _REMOVED:
            raise ConfigError(_REMOVED[name], file=file, where=str(name))
    check_keys(raw, top, file=file, error=ConfigError)
    b = base or RankerConfig()
    changes: dict[str, Any] = {"source": file or b.source}
    for name, value in without_extensions(raw).items():
        f = top[name]
        current = getattr(b, name)
        if dataclasses.is_dataclass(current):
            changes[name] = _section(current, value, name, file)
        elif isinstance(f.metadata["rule"], NumberMap):
            changes[name] = f.metadata["rule"].check(value, name, file, current)
        else:
            changes[name] = f.metadata["rule"].check(value, name, file)
    return dataclasses.replace(b, **changes)


def _section(current: Any, raw: Any, name: str, file: str | None) -> Any:
    if raw is None:
        return current
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{name} must be a mapping", file=file, where=name)
    keys = {g.name: g for g in _keys(type(current))}
    check_keys(raw, keys, where=name, file=file, error=ConfigError)
    changes = {sub: keys[sub].metadata["rule"].check(value, f"{name}.{sub}", file)
               for sub, value in without_extensions(raw).items()}
    merged = {g: changes.get(g, getattr(current, g)) for g in keys}
    for lo, hi in getattr(type(current), "ORDERED", ()):
        if merged[lo] > merged[hi]:
            raise ConfigError(_order_message(name, lo, hi, merged[lo], merged[hi]), file=file, where=name)
    return dataclasses.replace(current, **changes)


def default_config() -> RankerConfig:
    """The shipped ranker: ``discovery/data/default.yaml`` over the neutral defaults."""
    from tooldisc.discovery.catalog.io import safe_yaml

    text = resources.files("tooldisc.discovery").joinpath("data/default.yaml").read_text("utf-8")
    return config_from_mapping(safe_yaml(text), file="default.yaml")


# The name that means the shipped config wherever a config path is taken (a file named
# "default" is given as ./default).
DEFAULT_NAME = "default"


def load_config(path: str | os.PathLike[str] | None = None) -> RankerConfig:
    """The shipped default, overlaid with a user's YAML (only the keys it sets change).

    ``None`` or the name ``"default"`` is the shipped config itself.
    """
    base = default_config()
    if path is None or (isinstance(path, str) and path == DEFAULT_NAME):
        return base
    from tooldisc.discovery.catalog.io import parse_document, read_text

    file = str(path)
    text = read_text(path, max_bytes=1024 * 1024, what="config")
    try:
        data = parse_document(text, file)
    except Exception as exc:  # DataError from the parser: a config is a ConfigError
        raise ConfigError(getattr(exc, "message", str(exc)), file=file, where=getattr(exc, "where", None)) from None
    return config_from_mapping(data, file=file, base=base)
