"""Slices (``--by FIELD[,FIELD]``): which queries share a label, read from the gold set itself.

A slice field is any label the gold queries carry: the native label fields
(``category``, ``difficulty``, ``hard_case``, ``intent``, ``required_capability``,
``source``, ``no_match``, ``require_all_primary``), a native set's ``labels`` object, or
any string, boolean or integer key of a benchmark ``queries.jsonl`` row (MetaTool's
``subset``, Seal-Tools' ``difficulty`` and ``n_gold_calls``). An integer field is a
slice only while it has at most :data:`MAX_INTEGER_VALUES` distinct values (a count,
not an id). A field that no query carries is a one-line warning, never a silent empty
table; a field that cannot be a slice (the query text, a list, an id-like integer) is
a :class:`~tooldisc.errors.UsageError` before any work is done.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tooldisc.errors import UsageError

if TYPE_CHECKING:
    from tooldisc.gold.model import GoldSet, LabelValue

# What eval slices by when --by is not given (fields no query carries are skipped quietly).
SLICE_FIELDS: tuple[str, ...] = ("category", "difficulty", "hard_case", "intent")
NONE_LABEL = "(none)"
MAX_INTEGER_VALUES = 20
# Fields every query has its own value of, or that are not labels at all.
_NOT_SLICES = ("id", "query", "primary_expected_tools", "acceptable_tools", "forbidden_tools", "history", "labels")


@dataclass(frozen=True)
class Slices:
    """``groups``: field → value → query ids (values in display order); ``warnings``: fields no query carries."""

    groups: dict[str, dict[str, set[str]]]
    warnings: tuple[str, ...] = ()


def parse_by(text: str | None) -> tuple[str, ...] | None:
    """``--by`` text → field names (``None`` when not given: the quiet defaults)."""
    if text is None:
        return None
    fields = _names(p.strip() for p in text.split(","))
    if not fields:
        raise UsageError(f"--by needs at least one field name (FIELD[,FIELD]); got {text!r}")
    return fields


def _names(names: Iterable[str]) -> tuple[str, ...]:
    fields = tuple(dict.fromkeys(n for n in names if n))
    for name in fields:
        if name in _NOT_SLICES:
            raise UsageError(f"--by {name}: not a slice label (every query has its own, or it is a list); "
                             "name a string, boolean or small-integer field of the gold queries")
    return fields


def _text(value: LabelValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _order(values: dict[LabelValue | None, set[str]]) -> list[LabelValue | None]:
    """Integers in numeric order, everything else as text, the unlabelled last."""
    def key(v: LabelValue | None) -> tuple:
        if v is None:
            return (2, "")
        if isinstance(v, int) and not isinstance(v, bool):
            return (0, v, "")
        return (1, _text(v))
    return sorted(values, key=key)


def slice_groups(gold: GoldSet, by: Sequence[str] | None) -> Slices:
    """Group ``gold``'s query ids by each field of ``by`` (``None``: :data:`SLICE_FIELDS`, quietly).

    A field no query carries is left out: silently for the defaults, with a warning
    line when it was asked for. An integer field with more than
    :data:`MAX_INTEGER_VALUES` values, or a field holding something else than strings,
    booleans and integers, is a :class:`UsageError`.
    """
    explicit = by is not None
    fields = SLICE_FIELDS if by is None else _names(by)
    groups: dict[str, dict[str, set[str]]] = {}
    warnings: list[str] = []
    source = gold.source or "the gold set"
    for name in fields:
        values: dict[LabelValue | None, set[str]] = {}
        for q in gold.queries:
            v = q.label(name)
            values.setdefault(v, set()).add(q.id)
        labelled = [v for v in values if v is not None]
        if not labelled:
            if explicit:
                warnings.append(f"warning: --by {name}: no query in {source} has this field as a string, boolean "
                                "or integer label, so there is no table for it")
            continue
        ints = [v for v in labelled if isinstance(v, int) and not isinstance(v, bool)]
        if ints and len(ints) == len(labelled) and len(ints) > MAX_INTEGER_VALUES:
            raise UsageError(f"--by {name}: an integer field with {len(ints)} distinct values is not a slice "
                             f"(at most {MAX_INTEGER_VALUES}); name a string, boolean or small-integer field")
        out: dict[str, set[str]] = {}
        for v in _order(values):
            out.setdefault(NONE_LABEL if v is None else _text(v), set()).update(values[v])
        groups[name] = out
    return Slices(groups, tuple(warnings))
