"""What a gold query says about tools: the judgment record the measures read.

Metrics stay independent of discovery and of the gold file format: a judgment is only
the query id, its tool labels and its labelled intent. ``GoldQuery.judgment()`` builds
one from a gold set; qrels importers and tests build them directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tooldisc.errors import UsageError

INTENTS: tuple[str, ...] = ("read", "write", "delete", "export", "execute", "none")

# DESIGN §4, read per query intent: the tool side effects an intent may be offered.
# READ and UNKNOWN mutations allow read-only tools only, and the gold intent "none"
# (chit-chat, no-match) counts as read. A tool whose side effect is missing or not
# one of the five is UNKNOWN and allowed under no intent (fail closed).
INTENT_ALLOWS: Mapping[str, frozenset[str]] = {
    "read": frozenset({"none"}),
    "none": frozenset({"none"}),
    "write": frozenset({"none", "write"}),
    "delete": frozenset({"none", "delete"}),
    "export": frozenset({"none", "export"}),
    "execute": frozenset({"none", "execute"}),
}


@dataclass(frozen=True)
class Judgment:
    """The labels of one query.

    ``primary`` tools answer the query; ``acceptable`` ones are reasonable to offer;
    ``forbidden`` ones must never be offered. A query is *matched* when it has at
    least one primary tool and is not labelled no-match; only matched queries enter
    the ranking measures.
    """

    qid: str
    primary: frozenset[str] = frozenset()
    acceptable: frozenset[str] = frozenset()
    forbidden: frozenset[str] = frozenset()
    intent: str = "read"
    no_match: bool = False

    def __post_init__(self) -> None:
        if self.intent not in INTENT_ALLOWS:
            raise UsageError(
                f"judgment {self.qid!r}: intent must be one of {', '.join(INTENTS)}; got {self.intent!r}"
            )
        for name in ("primary", "acceptable", "forbidden"):
            value = getattr(self, name)
            if not isinstance(value, frozenset):
                object.__setattr__(self, name, frozenset(value))

    @property
    def matched(self) -> bool:
        return bool(self.primary) and not self.no_match

    def allows(self, side_effect: str | None) -> bool:
        """Whether the labelled intent may be offered a tool with this side effect."""
        return side_effect in INTENT_ALLOWS[self.intent]

    def grade(self, tool: str) -> int:
        """Graded relevance: 2 primary, 1 acceptable, 0 otherwise (primary wins)."""
        return 2 if tool in self.primary else 1 if tool in self.acceptable else 0
