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
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from typing import Any

from tooldisc.closed_schema import check_keys, without_extensions
from tooldisc.errors import ConfigError

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


def _int_min(value: Any, lo: int) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= MAX_COUNT else None


def _unit(value: Any, closed_low: bool = False) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    ok = (0 <= value < 1) if closed_low else (0 < value < 1)
    return float(value) if ok else None


_RULES: dict[str, tuple[str, Any]] = {
    "min_requests_per_arm": (f"an integer in [1, {MAX_COUNT:g}]", lambda v: _int_min(v, 1)),
    "sample_ratio_alpha": ("a number in (0, 1)", _unit),
    "confidence": ("a number in (0, 1)", _unit),
    "fallback_max_lower_bound": ("a number in (0, 1)", _unit),
    "latency_quantile": ("a number in (0, 1) in steps of 0.0001", lambda v: _basis_point(v)),
    "max_quarantine_share": ("a number in [0, 1)", lambda v: _unit(v, closed_low=True)),
    "non_inferiority_alpha": ("a number in (0, 1)", _unit),
    "worse_alpha": ("a number in (0, 1)", _unit),
    "power": ("a number in (0, 1)", _unit),
    "sequential_tuning_requests": (f"an integer in [1, {MAX_COUNT:g}]", lambda v: _int_min(v, 1)),
}

def _basis_point(value: Any) -> float | None:
    v = _unit(value)
    return v if v is not None and abs(v * 10_000 - round(v * 10_000)) < 1e-9 else None


def _segments(value: Any) -> tuple[str, ...] | None:
    """Segment columns: string columns of the event schema (never an id: none exists)."""
    from tooldisc.canary.events import EVENT_SCHEMA

    allowed = {c.name for c in EVENT_SCHEMA.columns if c.kind in ("string", "enum")} - {
        "arm", "experiment", "fallback_reason"}
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        return None
    return tuple(dict.fromkeys(value))


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
        high = 1 if kind == "relative" or metric != "latency" else MAX_LATENCY_MARGIN_MS
        if isinstance(number, bool) or not isinstance(number, int | float) or not 0 < number < high:
            raise ConfigError(f"must be a number > 0 and < {high:g} (1 for a rate or a relative margin, "
                              f"{MAX_LATENCY_MARGIN_MS:g} ms for absolute latency); got {number!r}",
                              file=file, where=where)
        out[metric] = Margin(kind, float(number))
    return out
_SHADOW_RULES: dict[str, tuple[str, Any]] = {
    "min_eligible_turns": (f"an integer in [1, {MAX_COUNT:g}]", lambda v: _int_min(v, 1)),
    "min_labelled_insufficient_cases": (f"an integer in [0, {MAX_COUNT:g}]", lambda v: _int_min(v, 0)),
}


def _ladder(value: Any) -> tuple[float, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        return None
    steps = tuple(float(v) for v in value)
    if any(not 0 < s <= 100 for s in steps) or list(steps) != sorted(set(steps)) or steps[-1] != 100:
        return None
    return steps


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
    changes: dict[str, Any] = {}
    for key in sorted(data, key=str):
        value = data[key]
        if key == "ladder":
            steps = _ladder(value)
            if steps is None:
                raise ConfigError("must be a list of increasing percents in (0, 100] ending "
                                  f"at 100; got {value!r}", file=file, where=key)
            changes[key] = steps
        elif key == "shadow":
            changes[key] = _parse_shadow(value, file)
        elif key == "interleaving":
            changes[key] = _parse_interleaving(value, file)
        elif key == "margins":
            changes[key] = _margins(value, file)
        elif key == "segments":
            segs = _segments(value)
            if segs is None:
                raise ConfigError("must be a list of event columns holding classes (channel, mode, "
                                  f"mutation, …); got {value!r}", file=file, where=key)
            changes[key] = segs
        else:
            changes[key] = _checked(_RULES[key], value, file, key)
    return replace(cfg, **changes)


def _checked(rule: tuple[str, Any], value: Any, file: str, where: str) -> Any:
    """``value`` parsed by a (description, check) rule, or a ConfigError naming file and key."""
    what, check = rule
    parsed = check(value)
    if parsed is None:
        raise ConfigError(f"must be {what}; got {value!r}", file=file, where=where)
    return parsed


def _parse_shadow(value: Any, file: str) -> ShadowGateConfig:
    if value is None:
        return ShadowGateConfig()
    if not isinstance(value, dict):
        raise ConfigError("must be a mapping", file=file, where="shadow")
    known = {f.name for f in fields(ShadowGateConfig)}
    check_keys(value, known, where="shadow", file=file, error=ConfigError)
    value = without_extensions(value)
    changes: dict[str, Any] = {}
    for key in sorted(value, key=str):
        where = f"shadow.{key}"
        item = value[key]
        if key == "required_golden_scenarios":
            if not isinstance(item, list) or not all(isinstance(s, str) and s for s in item):
                raise ConfigError(f"must be a list of scenario names; got {item!r}",
                                  file=file, where=where)
            changes[key] = tuple(sorted(set(item)))
        else:
            changes[key] = _checked(_SHADOW_RULES[key], item, file, where)
    return ShadowGateConfig(**{**ShadowGateConfig().__dict__, **changes})


_INTERLEAVING_RULES: dict[str, tuple[str, Any]] = {
    "margin": ("a number in (0, 1)", _unit),
    "min_requests": (f"an integer in [1, {MAX_COUNT:g}]", lambda v: _int_min(v, 1)),
    "sequential_tuning_requests": (f"an integer in [1, {MAX_COUNT:g}]", lambda v: _int_min(v, 1)),
}


def _parse_interleaving(value: Any, file: str) -> InterleavingGateConfig:
    if value is None:
        return InterleavingGateConfig()
    if not isinstance(value, dict):
        raise ConfigError("must be a mapping", file=file, where="interleaving")
    check_keys(value, _INTERLEAVING_RULES, where="interleaving", file=file, error=ConfigError)
    value = without_extensions(value)
    changes = {key: _checked(_INTERLEAVING_RULES[key], value[key], file, f"interleaving.{key}")
               for key in sorted(value, key=str)}
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
                text = fh.read()
        except OSError as exc:
            raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=label) from exc
        except UnicodeDecodeError as exc:
            raise ConfigError("is not UTF-8 text", file=label) from exc
    # The hardened reader: duplicate keys, deep nesting and alias bombs are refused.
    data = parse_yaml(text, label, error=ConfigError, prefix="is not valid YAML")
    return parse_gates(data, label)
