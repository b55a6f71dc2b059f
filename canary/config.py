"""Gate thresholds: shipped defaults (``data/gates.yaml``) and validated overrides.

A gates file is parsed with a safe loader and checked key by key; an unknown key or a
bad value is a :class:`~tooldisc.errors.ConfigError` naming the file and the key, so a
typo can never silently fall back to a default. The schema is closed (tooldisc.closed_schema):
an unknown key names the nearest known one, ``x-`` keys are extension data and never read.
Every number is bounded: counts at most :data:`MAX_COUNT`, an absolute latency margin at most
:data:`MAX_LATENCY_MARGIN_MS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from typing import Any

from tooldisc.closed_schema import check_keys, without_extensions
from tooldisc.errors import ConfigError
from tooldisc.params import Interval, Problem, message, refuse

MAX_CONFIG_BYTES = 1 << 20
MAX_COUNT = 10**9  # min_requests_per_arm, sequential_tuning_requests and the shadow counts
MAX_LATENCY_MARGIN_MS = 60_000.0  # an absolute latency margin: a minute


@dataclass(frozen=True)
class ShadowGateConfig:
    min_eligible_turns: int = 50
    min_labelled_insufficient_cases: int = 1
    required_golden_scenarios: tuple[str, ...] = ()


@dataclass(frozen=True)
class InterleavingGateConfig:
    """``--profile interleaving``: B may lose at most ``margin`` of preference
    (``(wins_B − wins_A) / (wins_B + wins_A)`` ≥ −margin) to PROMOTE; comparisons start at
    ``min_requests`` interleaved requests; the confidence sequence is tightest near
    ``sequential_tuning_requests`` decisive requests (both fixed in advance, not fitted)."""

    margin: float = 0.05
    min_requests: int = 500
    sequential_tuning_requests: int = 1_000


@dataclass(frozen=True)
class Margin:
    """How much worse than control a guarded metric may be: absolute (rate points or
    milliseconds) or relative (a share of control's value)."""

    kind: str  # "absolute" | "relative"
    value: float


DEFAULT_MARGINS: dict[str, Margin] = {
    "task_success": Margin("absolute", 0.02),
    "tool_execution_success": Margin("absolute", 0.02),
    "discovery_miss": Margin("absolute", 0.01),
    "fallback": Margin("absolute", 0.01),
    "latency": Margin("relative", 0.10),
}


@dataclass(frozen=True)
class GateConfig:
    min_requests_per_arm: int = 500
    sample_ratio_alpha: float = 0.001
    confidence: float = 0.95
    fallback_max_lower_bound: float = 0.5
    latency_quantile: float = 0.95
    max_quarantine_share: float = 0.01
    ladder: tuple[float, ...] = (5, 10, 25, 50, 100)
    non_inferiority_alpha: float = 0.05
    worse_alpha: float = 0.01
    power: float = 0.8
    sequential_tuning_requests: int = 10_000
    segments: tuple[str, ...] = ("channel", "mode", "mutation")
    margins: dict[str, Margin] = field(default_factory=lambda: dict(DEFAULT_MARGINS))
    shadow: ShadowGateConfig = field(default_factory=ShadowGateConfig)
    interleaving: InterleavingGateConfig = field(default_factory=InterleavingGateConfig)


# --- constraints (data, checked by the rulebook, tooldisc.params) ---------------------
#
# Each settable key of a section declares its rule; a refused value is a ConfigError naming
# the file and the key, in the rulebook's one message form.


def _count(low: int) -> Interval:
    return Interval(int, low, MAX_COUNT, strict=True)


_UNIT = Interval(float, 0, 1, closed="neither")  # a probability, a share or a margin strictly inside (0, 1)


def _ladder(value: Any) -> tuple[float, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        return None
    steps = tuple(float(v) for v in value)
    if any(not 0 < s <= 100 for s in steps) or list(steps) != sorted(set(steps)) or steps[-1] != 100:
        return None
    return steps


def _segments(value: Any) -> tuple[str, ...] | None:
    """Segment columns: string columns of the event schema (never an id: none exists)."""
    from tooldisc.canary.events import EVENT_SCHEMA

    allowed = {c.name for c in EVENT_SCHEMA.columns if c.kind in ("string", "enum")} - {
        "arm", "experiment", "fallback_reason"}
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        return None
    return tuple(dict.fromkeys(value))


def _scenarios(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        return None
    return tuple(sorted(set(value)))


@dataclass(frozen=True)
class Parsed:
    """A rule whose check is a parser (``None``: refused) for a value no interval describes."""

    what: str
    parse: Callable[[Any], Any]

    def describe(self) -> str:
        return self.what

    def problem(self, value: Any, name: str) -> Problem | None:
        if self.parse(value) is not None:
            return None
        return (ValueError if isinstance(value, list) else TypeError), message(name, self.what, value)

    def cast(self, value: Any) -> Any:
        return self.parse(value)


GATE_RULES: dict[str, Interval | Parsed] = {
    "min_requests_per_arm": _count(1),
    "sample_ratio_alpha": _UNIT,
    "confidence": _UNIT,
    "fallback_max_lower_bound": _UNIT,
    "latency_quantile": _UNIT.but(grid=10_000),
    "max_quarantine_share": _UNIT.but(closed="left"),
    "ladder": Parsed("a list of increasing percents in (0, 100] ending at 100", _ladder),
    "non_inferiority_alpha": _UNIT,
    "worse_alpha": _UNIT,
    "power": _UNIT,
    "sequential_tuning_requests": _count(1),
    "segments": Parsed("a list of event columns holding classes (channel, mode, mutation, …)", _segments),
}

SHADOW_RULES: dict[str, Interval | Parsed] = {
    "min_eligible_turns": _count(1),
    "min_labelled_insufficient_cases": _count(0),
    "required_golden_scenarios": Parsed("a list of scenario names", _scenarios),
}

INTERLEAVING_RULES: dict[str, Interval | Parsed] = {
    "margin": _UNIT,
    "min_requests": _count(1),
    "sequential_tuning_requests": _count(1),
}


def margin_rule(metric: str, kind: str) -> Interval:
    """A margin's number: a rate or a relative margin below 1, an absolute latency below a minute."""
    high = 1 if kind == "relative" or metric != "latency" else MAX_LATENCY_MARGIN_MS
    return Interval(float, 0, high, closed="neither",
                    why=f"1 for a rate or a relative margin, {MAX_LATENCY_MARGIN_MS:g} ms for absolute latency")


def _margins(value: Any, file: str) -> dict[str, Margin]:
    if not isinstance(value, dict):
        raise ConfigError("must be a mapping of metric: {absolute: x} or {relative: x}",
                          file=file, where="margins")
    out = dict(DEFAULT_MARGINS)
    check_keys(value, DEFAULT_MARGINS, where="margins", file=file, error=ConfigError)
    value = without_extensions(value)
    for metric in sorted(value, key=str):
        where = f"margins.{metric}"
        item = value[metric]
        if isinstance(item, dict):
            check_keys(item, ("absolute", "relative"), where=where, file=file, error=ConfigError)
            item = without_extensions(item)
        if not isinstance(item, dict) or len(item) != 1:
            raise ConfigError(f"must be {{absolute: x}} or {{relative: x}}; got {item!r}",
                              file=file, where=where)
        kind, number = next(iter(item.items()))
        out[metric] = Margin(kind, margin_rule(metric, kind).check(number, where, file))
    return out


def _section(rules: dict[str, Interval | Parsed], value: Any, file: str, prefix: str = "") -> dict[str, Any]:
    """The checked keys a section sets, in sorted order (the first refused one is the error)."""
    changes: dict[str, Any] = {}
    for key in sorted(value, key=str):
        where = f"{prefix}{key}"
        rule = rules[key]
        found = rule.problem(value[key], where)
        if found is not None:
            refuse(found, ConfigError, file=file, where=where)
        changes[key] = rule.cast(value[key])
    return changes


def parse_gates(data: Any, file: str) -> GateConfig:
    """Validate a parsed gates mapping over the defaults."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping of gate settings", file=file)
    cfg = GateConfig()
    known = {f.name for f in fields(GateConfig)}
    check_keys(data, known, file=file, error=ConfigError)
    data = without_extensions(data)
    sections = {"shadow": _parse_shadow, "interleaving": _parse_interleaving, "margins": _margins}
    changes: dict[str, Any] = {}
    for key in sorted(data, key=str):  # in key order: the first refused key is the error
        if key in sections:
            changes[key] = sections[key](data[key], file)
        else:
            changes.update(_section(GATE_RULES, {key: data[key]}, file))
    return replace(cfg, **changes)


def _parse_shadow(value: Any, file: str) -> ShadowGateConfig:
    if value is None:
        return ShadowGateConfig()
    if not isinstance(value, dict):
        raise ConfigError("must be a mapping", file=file, where="shadow")
    known = {f.name for f in fields(ShadowGateConfig)}
    check_keys(value, known, where="shadow", file=file, error=ConfigError)
    value = without_extensions(value)
    changes = _section(SHADOW_RULES, value, file, "shadow.")
    return ShadowGateConfig(**{**ShadowGateConfig().__dict__, **changes})


def _parse_interleaving(value: Any, file: str) -> InterleavingGateConfig:
    if value is None:
        return InterleavingGateConfig()
    if not isinstance(value, dict):
        raise ConfigError("must be a mapping", file=file, where="interleaving")
    check_keys(value, INTERLEAVING_RULES, where="interleaving", file=file, error=ConfigError)
    changes = _section(INTERLEAVING_RULES, without_extensions(value), file, "interleaving.")
    return replace(InterleavingGateConfig(), **changes)


def load_gates(path: str | os.PathLike[str] | None = None) -> GateConfig:
    """The shipped defaults, or ``path`` validated over them."""
    from tooldisc.documents import parse_yaml

    if path is None:
        text = resources.files("tooldisc.canary").joinpath("data", "gates.yaml").read_text("utf-8")
        label = "gates.yaml (shipped)"
    else:
        label = str(path)
        try:
            if os.path.getsize(path) > MAX_CONFIG_BYTES:
                raise ConfigError(f"is larger than {MAX_CONFIG_BYTES} bytes", file=label)
            with open(path, encoding="utf-8") as fh:
                text = fh.read(MAX_CONFIG_BYTES + 1)  # a pipe or a device: never past the limit
            if len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
                raise ConfigError(f"is larger than {MAX_CONFIG_BYTES} bytes", file=label)
        except OSError as exc:
            raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=label) from exc
        except UnicodeDecodeError as exc:
            raise ConfigError("is not UTF-8 text", file=label) from exc
    # The hardened reader: duplicate keys, deep nesting and alias bombs are refused.
    data = parse_yaml(text, label, error=ConfigError, prefix="is not valid YAML")
    return parse_gates(data, label)
