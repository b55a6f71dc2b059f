"""Row conditions as data: the one vocabulary for validation rules and aggregate filters.

A validation rule ("``fallback_reason`` is required when ``fallback`` is true") or an
aggregate filter ("eligible turns without a valid plan") is a small tree of the frozen
nodes below, never SQL text. An engine renders the tree for its own SQL dialect
(:mod:`tooldisc.canary.sql` for DuckDB), so a second engine adds a renderer and never
restates a rule. Columns are referred to by schema name and read as their *typed*
values (NULL where a raw value was missing or did not parse).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IsTrue:
    column: str


@dataclass(frozen=True)
class IsNull:
    column: str


@dataclass(frozen=True)
class Eq:
    column: str
    value: str | int | float | bool


@dataclass(frozen=True)
class Lt:
    column: str
    value: float


@dataclass(frozen=True)
class Gt:
    column: str
    value: float


@dataclass(frozen=True)
class In:
    column: str
    values: tuple[str | int, ...]


@dataclass(frozen=True)
class NotFinite:
    """NaN or ±infinity."""

    column: str


@dataclass(frozen=True)
class OffStep:
    """Not a multiple of ``step`` (within 1e-6 of a step), e.g. percent in 0.01 steps."""

    column: str
    step: float


@dataclass(frozen=True)
class Matches:
    """The whole text matches ``regex`` (the dialect's full match)."""

    column: str
    regex: str


@dataclass(frozen=True)
class LongerThan:
    """The text has more than ``limit`` characters."""

    column: str
    limit: int


@dataclass(frozen=True)
class LengthNe:
    """The text's length differs from the integer column ``other``."""

    column: str
    other: str


@dataclass(frozen=True)
class StartsWith:
    column: str
    prefix: str


@dataclass(frozen=True)
class Contains:
    column: str
    text: str


@dataclass(frozen=True)
class MoreOf:
    """The one-character ``letter`` occurs in the text more often than ``than``."""

    column: str
    letter: str
    than: str


@dataclass(frozen=True)
class Not:
    cond: Cond


@dataclass(frozen=True)
class All:
    conds: tuple[Cond, ...]


@dataclass(frozen=True)
class Any_:
    conds: tuple[Cond, ...]


@dataclass(frozen=True)
class Valid:
    """The row passed validation (it has no quarantine reason)."""


Cond = (IsTrue | IsNull | Eq | Lt | Gt | In | NotFinite | OffStep | Matches | LongerThan | LengthNe
        | StartsWith | Contains | MoreOf | Not | All | Any_ | Valid)


def all_of(*conds: Cond) -> All:
    return All(tuple(conds))


def any_of(*conds: Cond) -> Any_:
    return Any_(tuple(conds))


def columns(cond: Cond) -> set[str]:
    """Schema columns a condition reads (to check a profile names only real columns)."""
    if isinstance(cond, Not):
        return columns(cond.cond)
    if isinstance(cond, All | Any_):
        return set().union(*(columns(c) for c in cond.conds)) if cond.conds else set()
    if isinstance(cond, Valid):
        return set()
    if isinstance(cond, LengthNe):
        return {cond.column, cond.other}
    return {cond.column}
