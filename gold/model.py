"""Gold query records: what a query should be offered, and the set they belong to.

Frozen so that a loaded gold set cannot drift while an evaluation runs; tool lists
are tuples in file order so exports (qrels, reports) are reproducible, and
:meth:`GoldQuery.judgment` turns them into the sets the metrics read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooldisc.metrics.judgment import Judgment

INTENTS: tuple[str, ...] = ("read", "write", "delete", "export", "execute", "none")
# The GoldQuery fields a slice (``--by``) may name; any key of ``labels`` may be named too.
FIELD_LABELS: tuple[str, ...] = ("category", "difficulty", "hard_case", "intent", "required_capability", "source",
                                 "no_match", "require_all_primary")
LabelValue = str | bool | int


@dataclass(frozen=True)
class GoldQuery:
    """One labelled query (DESIGN §6).

    ``history`` holds earlier turns as ``(role, content)`` pairs. Empty labels
    (``""``) are stored as ``None`` so a slice never splits on both. ``labels`` holds
    a file's other slice labels, ``(name, value)`` pairs sorted by name with string,
    boolean or integer values (a native set's ``labels`` object; a benchmark row's
    extra keys, such as MetaTool's ``subset`` or Seal-Tools' ``n_gold_calls``). They
    are read only by ``--by``: never by discovery or any measure.
    """

    id: str
    query: str
    primary_expected_tools: tuple[str, ...] = ()
    acceptable_tools: tuple[str, ...] = ()
    forbidden_tools: tuple[str, ...] = ()
    required_capability: str | None = None
    intent: str = "read"
    category: str | None = None
    difficulty: str | None = None
    hard_case: str | None = None
    no_match: bool = False
    history: tuple[tuple[str, str], ...] = ()
    require_all_primary: bool = False
    source: str | None = None
    labels: tuple[tuple[str, LabelValue], ...] = ()

    @property
    def matched(self) -> bool:
        """Scored by the ranking measures: has a primary tool and is not labelled no-match."""
        return bool(self.primary_expected_tools) and not self.no_match

    def judgment(self) -> Judgment:
        """The labels as the metrics read them."""
        from tooldisc.metrics.judgment import Judgment  # keeps numpy out of plain gold loading

        return Judgment(
            qid=self.id,
            primary=frozenset(self.primary_expected_tools),
            acceptable=frozenset(self.acceptable_tools),
            forbidden=frozenset(self.forbidden_tools),
            intent=self.intent,
            no_match=self.no_match,
        )

    def label(self, name: str) -> LabelValue | None:
        """The slice label ``name``: a field of :data:`FIELD_LABELS`, else a key of ``labels``; None if absent."""
        if name in FIELD_LABELS:
            value = getattr(self, name)
            if value is not None:
                return value
        for key, value in self.labels:
            if key == name:
                return value
        return None

    def to_dict(self) -> dict[str, Any]:
        """The native JSON record (what :func:`~tooldisc.gold.loader.load_gold` reads back).

        ``labels`` appears only when the query has some, so a set without them writes
        (and hashes) exactly as before labels existed.
        """
        body = self._core_dict()
        if self.labels:
            body["labels"] = dict(self.labels)
        return body

    def _core_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "primary_expected_tools": list(self.primary_expected_tools),
            "acceptable_tools": list(self.acceptable_tools),
            "forbidden_tools": list(self.forbidden_tools),
            "required_capability": self.required_capability,
            "intent": self.intent,
            "category": self.category,
            "difficulty": self.difficulty,
            "hard_case": self.hard_case,
            "no_match": self.no_match,
            "history": [{"role": r, "content": c} for r, c in self.history],
            "require_all_primary": self.require_all_primary,
            "source": self.source,
        }


@dataclass(frozen=True)
class GoldSet:
    """A gold set: its queries in file order and the versions it was written for.

    ``source`` is where it was read from; ``notes`` are facts a report must repeat
    (e.g. that the external benchmark format carries no policy).
    """

    queries: tuple[GoldQuery, ...]
    dataset_version: str | None = None
    catalog_version: str | None = None
    source: str | None = None
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[GoldQuery]:
        return iter(self.queries)

    @cached_property
    def by_id(self) -> Mapping[str, GoldQuery]:
        return {q.id: q for q in self.queries}

    @cached_property
    def hash(self) -> str:
        """SHA-256 of the queries' canonical JSON: what decides the measures, whatever the file.

        The same queries read from JSON, JSONL or YAML hash alike; versions, notes, the
        path and the extra slice ``labels`` (read only by ``--by``) do not count, so a
        baseline can tell "another gold set" from "another copy".
        """
        import hashlib
        import json

        body = json.dumps([q._core_dict() for q in self.queries], sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def judgments(self) -> dict[str, Judgment]:
        """Query id → metrics judgment, in file order."""
        return {q.id: q.judgment() for q in self.queries}

    def with_queries(self, queries: tuple[GoldQuery, ...]) -> GoldSet:
        """The same set (versions, source, notes) over other queries, e.g. a split."""
        return replace(self, queries=tuple(queries))

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset_version": self.dataset_version,
            "catalog_version": self.catalog_version,
            "queries": [q.to_dict() for q in self.queries],
        }
