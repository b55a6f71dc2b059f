"""Labelled traffic for ``tooldisc learn``: gold sets and ``queries.jsonl`` files as examples.

An example is a request, the tools that finally served it (empty: no tool was
needed), its earlier user turns and, when the file labels it, its intent. Only what
``learn`` may use leaves this module: never ids, categories or sources.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tooldisc.errors import DataError, UsageError

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog


@dataclass(frozen=True)
class Example:
    """One labelled request. ``intent`` is None unless the file labels it explicitly.

    ``acceptable`` are tools a gold set says are reasonable to offer too (not the one
    that served the request): the judges grade them as nDCG does (DESIGN §6: primary 2,
    acceptable 1), so a part is judged by the measure it will be measured by; nothing
    is learned *for* them (expansions and phrase weights read ``relevant`` only).
    """

    query: str
    relevant: tuple[str, ...]
    history: tuple[str, ...] = ()
    intent: str | None = None
    acceptable: tuple[str, ...] = ()

    @property
    def no_tool(self) -> bool:
        return not self.relevant


def load_examples(paths: Sequence[str | os.PathLike[str]], catalog: Catalog) -> tuple[Example, ...]:
    """Every example of every file, in order; a tool the catalog lacks is bad input."""
    from tooldisc.gold.loader import EXTERNAL_NOTE, load_gold

    if not paths:
        raise UsageError("learn needs at least one --from FILE (a gold set or a queries.jsonl)")
    names = catalog.by_name
    out: list[Example] = []
    for path in paths:
        file = os.fspath(path)
        gold = load_gold(path)
        explicit = _explicit_intents(file) if EXTERNAL_NOTE in gold.notes else None
        for i, q in enumerate(gold.queries):
            relevant = () if q.no_match else tuple(q.primary_expected_tools)
            acceptable = () if q.no_match else tuple(t for t in q.acceptable_tools if t not in relevant)
            for t in (*relevant, *acceptable):
                if t not in names:
                    raise DataError(f"query {q.id!r} names tool {t!r}, which the catalog does not have", file=file,
                                    where=f"queries[{i}]")
            intent = q.intent if explicit is None else explicit.get(q.id)
            history = tuple(c for r, c in q.history if r == "user")
            out.append(Example(q.query, relevant, history, intent, acceptable))
    return tuple(out)


def _explicit_intents(file: str) -> dict[str, str]:
    """Query id → intent for rows of an external-format file that label one.

    The external format reads every row as intent ``read`` (DESIGN §6); a learner must
    not mistake that default for a label, so it looks at which rows really say.
    """
    from tooldisc.gold.model import INTENTS

    out: dict[str, str] = {}
    with open(file, encoding="utf-8-sig") as fh:
        for line in fh:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # the gold loader already accepted the file; a JSON document is not line-based
            intent = row.get("intent") if isinstance(row, dict) else None
            if isinstance(intent, str) and intent in INTENTS and "id" in row:
                out[str(row["id"])] = intent
    return out
