"""Checks for the agent surface's Python inputs, done the way the file loaders do theirs.

A public constructor or method of :mod:`tooldisc.agent` that takes a value from its
caller checks it before it is used: a wrong type is a ``TypeError`` and a wrong value
a ``ValueError`` (:class:`~tooldisc.errors.UsageError`), each naming the owner and
the field. The one that matters most for security: a bare ``str`` where a collection
of names is expected is a ``TypeError``, never a set of its characters (``"delete"``
as ``forced`` or ``approvals`` would otherwise be matched letter by letter, or by
substring with ``in``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from tooldisc.errors import UsageError


def short(value: Any, limit: int = 60) -> str:
    """``repr`` of a caller's value, cut so an error stays one short line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_type(owner: str, name: str, value: Any, kind: type | tuple[type, ...], *, optional: bool = True) -> None:
    """``value`` is a ``kind`` (a ``bool`` is never an ``int`` here), or None when ``optional``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if value is None and optional:
        return
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds and int in kinds):
        return
    names = " or ".join(k.__name__ for k in kinds) + (" or None" if optional else "")
    article = "an" if names[0].lower() in "aeio" else "a"
    raise TypeError(f"{owner}: {name} must be {article} {names}; got {type(value).__name__}")


def check_text(owner: str, name: str, value: Any) -> None:
    check_type(owner, name, value, str)


def name_set(owner: str, name: str, value: Any) -> frozenset[str]:
    """A collection of non-empty names as a frozenset; None is the empty set."""
    if value is None:
        return frozenset()
    if isinstance(value, str | bytes) or not isinstance(value, Collection) or isinstance(value, Mapping):
        raise TypeError(f"{owner}: {name} must be a collection of strings (a list or set), not a bare "
                        f"{type(value).__name__}; got {short(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{owner}: {name}[{i}] must be a str; got {type(item).__name__}")
        if not item:
            raise UsageError(f"{owner}: {name}[{i}] must be a non-empty string")
    return frozenset(value)
