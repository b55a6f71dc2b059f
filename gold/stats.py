"""Describing and splitting a gold set: slice counts and a deterministic stratified split.

Counts feed the per-slice tables of a report; the split lets weights be tuned on one
part and judged on the other. The split orders each stratum by a SHA-256 of seed and
query id, so it is the same on every machine and Python version, and adding a query
moves no other query across the split.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tooldisc.errors import UsageError
from tooldisc.gold.model import GoldQuery, GoldSet
from tooldisc.params import Interval, validate

NONE_LABEL = "(none)"

SPLIT_CONSTRAINTS: dict[str, Interval] = {
    "test_fraction": Interval(float, 0, 1),
    # any int: the seed only salts a SHA-256 (the CLI's --seed is held to COUNTS["seed"] before this)
    "seed": Interval(int, None, None, strict=True),
}
"""The rulebook's constraints on :func:`split`'s arguments (the generated bad-value tests read them)."""


def _is_arabic_letter(ch: str) -> bool:
    o = ord(ch)
    in_block = (0x0600 <= o <= 0x06FF or 0x0750 <= o <= 0x077F or 0x08A0 <= o <= 0x08FF
                or 0xFB50 <= o <= 0xFDFF or 0xFE70 <= o <= 0xFEFF)
    return in_block and ch.isalpha()


def language(text: str) -> str:
    """``"fa"`` when the text holds an Arabic-script letter (Persian), else ``"en"``.

    Digits do not count: ``"invoice ۱۲۴"`` is English.
    """
    return "fa" if any(_is_arabic_letter(ch) for ch in text) else "en"


@dataclass(frozen=True)
class GoldStats:
    """How many queries fall in each slice; every mapping is sorted by key."""

    total: int
    matched: int
    no_match: int
    by_intent: Mapping[str, int]
    by_category: Mapping[str, int]
    by_difficulty: Mapping[str, int]
    by_hard_case: Mapping[str, int]
    by_language: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "matched": self.matched,
            "no_match": self.no_match,
            "by_intent": dict(self.by_intent),
            "by_category": dict(self.by_category),
            "by_difficulty": dict(self.by_difficulty),
            "by_hard_case": dict(self.by_hard_case),
            "by_language": dict(self.by_language),
        }


def _count(values: list[str | None]) -> dict[str, int]:
    counts = Counter(v if v else NONE_LABEL for v in values)
    return dict(sorted(counts.items()))


def gold_stats(gold: GoldSet) -> GoldStats:
    """Counts by intent, category, difficulty, hard case and language."""
    qs = gold.queries
    return GoldStats(
        total=len(qs),
        matched=sum(q.matched for q in qs),
        no_match=sum(q.no_match for q in qs),
        by_intent=_count([q.intent for q in qs]),
        by_category=_count([q.category for q in qs]),
        by_difficulty=_count([q.difficulty for q in qs]),
        by_hard_case=_count([q.hard_case for q in qs]),
        by_language=_count([language(q.query) for q in qs]),
    )


def _order_key(seed: int, q: GoldQuery) -> bytes:
    return hashlib.sha256(f"{seed}:{q.id}".encode()).digest()


def split(gold: GoldSet, test_fraction: float = 0.3, seed: int = 0) -> tuple[GoldSet, GoldSet]:
    """``(tune, test)``: each (intent, no_match) stratum split by ``test_fraction``, seeded.

    A stratum of n queries gives round(n × test_fraction) (halves up) to test. Both
    parts keep file order and the set's versions and notes.
    """
    validate(SPLIT_CONSTRAINTS, {"test_fraction": test_fraction, "seed": seed}, error=UsageError)
    strata: dict[tuple[str, bool], list[GoldQuery]] = {}
    for q in gold.queries:
        strata.setdefault((q.intent, q.no_match), []).append(q)
    test_ids: set[int] = set()
    for members in strata.values():
        n_test = int(len(members) * test_fraction + 0.5)
        ordered = sorted(members, key=lambda q: _order_key(seed, q))
        test_ids.update(id(q) for q in ordered[:n_test])
    tune = tuple(q for q in gold.queries if id(q) not in test_ids)
    test = tuple(q for q in gold.queries if id(q) in test_ids)
    return gold.with_queries(tune), gold.with_queries(test)
