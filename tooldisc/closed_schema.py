"""The closed-schema rule: every document that carries policy or behaviour names only known keys.

A catalog, context, ranker config, gates file, learned file and plan are *closed*: a key
the format does not define is an error, never a warning and a guess. A misspelled policy
key (``Roles:``, ``permission:``) that loaded as "unknown, ignored" left a delete tool open
to every role; read as an error, it names the key and the nearest known one
(``tools[0].Roles: unknown field; did you mean 'roles'?``), the same words in every loader.

Extension data has one open place, the same in every closed document: a key starting with
``x-`` (lower-case, as OpenAPI's), at any object level whose keys are field names. Nothing
in tooldisc reads an extension key or what it holds, and it never enters a hash. So that a
policy field can never hide in it, an extension key may not be named after a field of its
object (``x-roles``), and a document's policy fields may not appear anywhere inside an
extension value (``x-team: {roles: [...]}``): both are errors, as a misspelling is.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Collection, Iterator, Mapping
from functools import lru_cache
from typing import Any

from tooldisc.errors import DataError, ToolDiscError

EXTENSION_PREFIX = "x-"
"""Keys starting with this are extension data: allowed at every field-keyed object level, never read."""

_CUTOFF = 0.6  # difflib's default: "Roles"→roles, "permission"→permissions, "rοles" (Greek o)→roles
_SHADOW_CUTOFF = 0.85  # an x- key this close to a field is that field ("x-role"); "x-description_source" is not


def fold(text: str) -> str:
    """The form two spellings share when they differ only by case, width, compatibility
    characters or surrounding spaces: NFKC, then casefold, then strip."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def is_extension(key: Any) -> bool:
    """Whether ``key`` is extension data (``x-`` prefixed): allowed, never read."""
    return isinstance(key, str) and key.startswith(EXTENSION_PREFIX)


@lru_cache(maxsize=4096)
def _nearest(key: str, known: tuple[str, ...], cutoff: float) -> str | None:
    folded: dict[str, str] = {}
    for k in known:
        folded.setdefault(fold(k), k)
    match = difflib.get_close_matches(fold(key), list(folded), n=1, cutoff=cutoff)
    return folded[match[0]] if match else None


def nearest(key: Any, known: Collection[str], cutoff: float = _CUTOFF) -> str | None:
    """The known key closest to ``key`` (case-insensitive, :func:`difflib.get_close_matches`), or None."""
    return _nearest(str(key), tuple(sorted(known)), cutoff)


def unknown_field(key: Any, known: Collection[str], *, extensions: bool = True) -> str:
    """The one wording of an unknown key, naming the nearest known key when one is close, else
    every known key. ``extensions``: the document has the ``x-`` extension place (say so)."""
    hint = nearest(key, known)
    if hint is not None:
        return f"unknown field; did you mean {hint!r}?"
    tail = " (extension data goes under x- keys)" if extensions else ""
    return f"unknown field; known: {', '.join(sorted(known))}{tail}"


def place(where: str, key: Any) -> str:
    """The path of ``key`` inside the object at ``where`` (``tools[0]`` + ``Roles``)."""
    return f"{where}.{key}" if where else str(key)


def key_problems(mapping: Mapping[Any, Any], known: Collection[str], where: str = "",
                 policy: Collection[str] = ()) -> Iterator[tuple[str, str]]:
    """``(path, message)`` for every key of ``mapping`` the schema does not allow, in document order.

    ``known``: the object's fields. ``policy``: field names that may never appear inside
    an extension value of this object (the document's policy fields).
    """
    for key in mapping:
        if key in known:
            continue
        at = place(where, key)
        if not is_extension(key):
            yield at, unknown_field(key, known)
            continue
        rest = key[len(EXTENSION_PREFIX):]
        shadowed = nearest(rest, known, _SHADOW_CUTOFF) if rest else None
        if shadowed is not None:
            yield at, (f"an extension key may not be named after the field {shadowed!r} "
                       "(x- keys are never read); write the field itself")
            continue
        if policy:
            hidden = _policy_inside(mapping[key], frozenset(fold(p) for p in policy), at)
            if hidden is not None:
                yield hidden, ("a policy field inside extension data is never read; write it at its own "
                               "place, not under an x- key")


def _policy_inside(value: Any, policy: frozenset[str], where: str) -> str | None:
    """The path of the first key inside ``value`` that folds to a policy field name, or None."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, Mapping):
            for k, v in node.items():
                if isinstance(k, str) and (fold(k) in policy or fold(k.removeprefix(EXTENSION_PREFIX)) in policy):
                    return place(at, k)
                stack.append((v, place(at, k)))
        elif isinstance(node, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(node))
    return None


def check_keys(mapping: Mapping[Any, Any], known: Collection[str], *, where: str = "", file: str | None = None,
               error: type[ToolDiscError] = DataError, policy: Collection[str] = ()) -> None:
    """Raise ``error`` for the first key of ``mapping`` the closed schema does not allow."""
    for at, message in key_problems(mapping, known, where, policy):
        raise error(message, file=file, where=at)


def without_extensions(mapping: Mapping[Any, Any]) -> dict[Any, Any]:
    """``mapping`` without its extension keys (what a reader then looks at)."""
    return {k: v for k, v in mapping.items() if not is_extension(k)}
