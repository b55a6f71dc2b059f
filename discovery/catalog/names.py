"""Reversible mapping between tooldisc tool names and provider-safe names.

A tool's name is its identity exactly as the catalog writes it (dots, ``::``, ``&``,
Persian, any length up to 256), but OpenAI, Anthropic and most MCP clients accept
only ``^[a-zA-Z0-9_-]{1,64}$``. Exporters therefore send a provider-safe name and the
host maps a tool call back with :meth:`NameMap.from_provider`. The mapping is a pure
function of the *set* of names, so the host can rebuild it from the catalog alone;
a name the map did not issue maps back to ``None`` and is never executed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
RESERVED_NAMES = frozenset({"search_tools"})
"""Provider names tooldisc itself issues (the meta-tool): a catalog may not use them (an
error at load), and no other name is ever mapped onto one (``search.tools`` becomes
``search_tools_<hash>``); given as itself, a reserved name maps to itself."""
# Cyrillic and Greek letters that print as the Latin ones of the reserved names; NFKC already
# folds full-width and compatibility forms. Enough to catch "ѕearch_tools" (Cyrillic dze), not a
# general confusables table: a name is refused only when it would pass for a reserved one.
_LOOKALIKES = str.maketrans({
    "а": "a", "с": "c", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "м": "m", "о": "o", "р": "p",
    "ѕ": "s", "т": "t", "у": "y", "х": "x", "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "ⅼ": "l", "ı": "i",
})


def reserved_fold(name: str) -> str:
    """The form a name is compared in against :data:`RESERVED_NAMES`: NFKC, case folded,
    surrounding space stripped, Cyrillic/Greek look-alikes read as Latin letters."""
    from tooldisc.closed_schema import fold

    return fold(name).translate(_LOOKALIKES)


_RESERVED_FOLDED = frozenset(reserved_fold(n) for n in RESERVED_NAMES)


def is_reserved(name: str) -> bool:
    """Whether a catalog tool name is, or would pass for, a name tooldisc issues itself
    (``Search_Tools``, ``search_tools `` and ``ѕearch_tools`` all are)."""
    if name.isascii():  # NFKC leaves ASCII as it is and casefolds it as lower(): the same form, without the tables
        return name.lower().strip() in _RESERVED_FOLDED
    return reserved_fold(name) in _RESERVED_FOLDED


MAX_PROVIDER_NAME = 64
_DISALLOWED = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_CHARS = 8


def is_provider_safe(name: str) -> bool:
    """Whether ``name`` is already acceptable to every provider as is."""
    return bool(PROVIDER_NAME.fullmatch(name))


def _digest(name: str, length: int) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:length]


def _candidate(name: str, length: int) -> str:
    """``name`` with disallowed characters replaced, truncated, plus a hash suffix."""
    base = _DISALLOWED.sub("_", name).strip("_")
    # A name with no Latin letter or digit left (e.g. all Persian) gets a neutral stem
    # instead of a run of underscores that would say nothing and collide.
    if not re.search(r"[a-zA-Z0-9]", base):
        base = "tool"
    suffix = "_" + _digest(name, length)
    return base[: MAX_PROVIDER_NAME - len(suffix)] + suffix


class NameMap:
    """A deterministic, collision-free, exactly reversible name mapping.

    Names that are already provider-safe keep themselves (so a catalog of safe names
    exports unchanged). Every other name gets its disallowed characters replaced by
    ``_``; when that result collides, is too long, or lost every Latin character, it is
    truncated and suffixed with a short SHA-256 of the original name. Unsafe names are
    assigned in sorted order, so the map does not depend on the order given.
    """

    def __init__(self, names: Iterable[str]):
        unique = sorted(set(names))
        self._to: dict[str, str] = {}
        self._from: dict[str, str] = {}
        for name in unique:
            if is_provider_safe(name):  # a reserved name given here is the meta-tool itself
                self._bind(name, name)
        for name in unique:
            if name in self._to:
                continue
            self._bind(name, self._safe_for(name))

    def _safe_for(self, name: str) -> str:
        simple = _DISALLOWED.sub("_", name)
        if (is_provider_safe(simple) and simple not in self._from and simple not in RESERVED_NAMES
                and re.search(r"[a-zA-Z0-9]", simple)):
            return simple
        length = _HASH_CHARS
        while True:
            candidate = _candidate(name, length)
            if candidate not in self._from and candidate not in RESERVED_NAMES:
                return candidate
            length += 4  # a SHA-256 prefix collision: lengthen until unique

    def _bind(self, name: str, safe: str) -> None:
        self._to[name] = safe
        self._from[safe] = name

    def to_provider(self, name: str) -> str:
        """The provider-safe name of a tool; a name outside the map is a ``KeyError``."""
        return self._to[name]

    def from_provider(self, safe: str) -> str | None:
        """The tooldisc name behind a provider name, or ``None`` when the map never issued it."""
        return self._from.get(safe)

    @property
    def renamed(self) -> Mapping[str, str]:
        """Only the names that changed: tooldisc name → provider name, sorted."""
        return {k: v for k, v in sorted(self._to.items()) if k != v}

    def to_dict(self) -> dict[str, str]:
        return dict(sorted(self._to.items()))

    def __contains__(self, name: object) -> bool:
        return name in self._to

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._to))

    def __len__(self) -> int:
        return len(self._to)
