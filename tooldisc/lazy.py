"""Lazy public faces: a package re-exports names whose modules load on first use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps each public name to its module.

    Why: ``import tooldisc`` (and a one-shot's imports) stay light; a name's module is imported
    only when the name is used.
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(module), name)

    return __getattr__
