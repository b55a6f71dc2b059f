"""Field checks for the constructors of the public value objects (``Context``, ``Tool``, ``ToolCall``
and the learned records): their data contracts, held in Python as a file loader holds them.

A file loader validates what it reads; an object built in Python must be held to the same rules,
or a caller could hand the guard ``Context(mode="Analyzer")`` (the full matrix instead of read-only)
or ``forced="abc"`` (matched by substring). Every check raises ``TypeError`` for a wrong type and
``ValueError`` for a bad value, with a message in the data-contract form — the record and the
field, the rule, the value: ``Context.mode must be one of analyzer, supervised, autonomous; got
'Analyzer'``, as a context file's refusal reads ``ctx.yaml: mode: mode must be one of …; got 'god'``.
This is deliberately not the parameter rulebook's form (:mod:`tooldisc.params` says why): these
are records' contents, not an operation's options. The checks are a few type tests each:
``Tool`` is built 100,000 times by the benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

JSON_SCALARS = frozenset((str, int, float, bool, type(None)))  # exactly these types hold no other value
_NOT_MAPPINGS = JSON_SCALARS | {list, tuple}


def is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, with JSON's own types answered before the ABC's check: a catalog's
    schema checks ask it about every node and value of every distinct schema."""
    kind = type(value)
    return kind is dict or (kind not in _NOT_MAPPINGS and isinstance(value, Mapping))


def shown(value: Any) -> str:
    """``repr`` of a caller's value, cut so an error stays one short line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def type_error(owner: str, name: str, what: str, value: Any) -> TypeError:
    return TypeError(f"{owner}.{name} must be {what}; got {type(value).__name__} {shown(value)}")


def value_error(owner: str, name: str, what: str, value: Any) -> ValueError:
    return ValueError(f"{owner}.{name} must be {what}; got {shown(value)}")


def string(owner: str, name: str, value: Any, *, optional: bool = False, empty: bool = False) -> None:
    """A ``str`` (or None when ``optional``); an empty string only when ``empty``."""
    if value is None and optional:
        return
    if type(value) is not str and not isinstance(value, str):
        raise type_error(owner, name, "a string" + (" or None" if optional else ""), value)
    if not value and not empty:
        raise value_error(owner, name, "a non-empty string" + (" or None" if optional else ""), value)


def flag(owner: str, name: str, value: Any) -> None:
    if type(value) is not bool:
        raise type_error(owner, name, "True or False", value)


def choice(owner: str, name: str, value: Any, options: Collection[str]) -> None:
    """Exactly one of ``options``: no case folding, no spelling variant (``"analyser"`` is refused)."""
    if not isinstance(value, str):
        raise type_error(owner, name, f"one of {', '.join(options)}", value)
    if value not in options:
        raise value_error(owner, name, f"one of {', '.join(options)}", value)


def strings(owner: str, name: str, value: Any, *, empty_items: bool = False) -> tuple[str, ...]:
    """A collection of strings as a tuple: a list, tuple, set or frozenset, never a bare ``str``
    (which would be read character by character) nor a mapping."""
    if type(value) is tuple:
        items: tuple[Any, ...] = value
    elif isinstance(value, list | tuple | set | frozenset):
        items = tuple(value)
    else:
        raise type_error(owner, name, "a collection of strings (a list, tuple or set; never one str)", value)
    for i, item in enumerate(items):
        if type(item) is not str and not isinstance(item, str):
            raise type_error(owner, f"{name}[{i}]", "a str", item)
        if not item and not empty_items:
            raise value_error(owner, f"{name}[{i}]", "a non-empty string", item)
    return items


def number(owner: str, name: str, value: Any, low: float, high: float, *, integer: bool = False) -> None:
    """A finite number in ``[low, high]`` (an int when ``integer``); booleans are not numbers."""
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int if integer else int | float):
        raise type_error(owner, name, f"{kind} in [{low:g}, {high:g}]", value)
    if not (math.isfinite(value) and low <= value <= high):
        raise value_error(owner, name, f"{kind} in [{low:g}, {high:g}]", value)


def mapping(owner: str, name: str, value: Any, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, Mapping):
        raise type_error(owner, name, "a mapping" + (" or None" if optional else ""), value)


def instance(owner: str, name: str, value: Any, kind: type | tuple[type, ...], *, optional: bool = True) -> None:
    """``value`` is a ``kind`` (a ``bool`` is never an ``int`` here), or None when ``optional``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if value is None and optional:
        return
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds and int in kinds):
        return
    names_ = " or ".join(k.__name__ for k in kinds) + (" or None" if optional else "")
    article = "an" if names_[0].lower() in "aeio" else "a"
    raise type_error(owner, name, f"{article} {names_}", value)


def names(owner: str, name: str, value: Any) -> frozenset[str]:
    """A collection of non-empty names as a frozenset; None is the empty set.

    A bare ``str`` is a ``TypeError``, never the set of its characters: ``"delete"`` as
    ``forced`` or ``approvals`` would otherwise be matched letter by letter, or by substring.
    """
    if value is None:
        return frozenset()
    if isinstance(value, Mapping) or not isinstance(value, list | tuple | set | frozenset):
        raise type_error(owner, name, "a collection of strings (a list or set), not a bare "
                         f"{type(value).__name__}", value)
    return frozenset(strings(owner, name, value))
