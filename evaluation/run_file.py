"""Any retriever's TREC run scored as tooldisc scores its own offers: a run file as an eval arm.

A run from an embedding retriever, ranx, Pyserini or an earlier ``tooldisc eval
--run-out`` is read (names decoded, :mod:`tooldisc.gold.trec`), ordered by score desc
then tool name, cut at the same K as the other arms, and measured with the same gold
set and measures. Nothing about it is trusted for security:

- ``forbidden@K`` reads the catalog's side effect of every offered tool, so a run that
  offers a write tool to a read request is caught as discovery's offers are; a tool the
  catalog lacks has no known policy and counts as forbidden (unknown is never
  authorized, DESIGN §2);
- tools the catalog lacks, judged queries the run has no line for (an empty offer),
  and run queries the gold set does not judge are counted and named in the notes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tooldisc.evaluation.run import RunFile

if TYPE_CHECKING:
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.evaluation.inputs import RunInputs
    from tooldisc.evaluation.run import RunResult

# How many names a note lists before "and N more".
_NAMED = 10


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def load_run_file(path: str | Path, inputs: RunInputs, k: int | str, *, config: RankerConfig | None = None) -> RunResult:
    """The run file at ``path`` as a :class:`RunResult` over ``inputs.gold``, cut at the arms' K.

    ``k`` is the K the other arms use (``"auto"``: their adaptive cap, from
    ``config``, else ``inputs.config``); each query's offer is the run's top ``cutoff``
    tools. The result's ``run_file`` carries the file's hash and the notes.
    """
    from tooldisc.documents import read_at_most
    from tooldisc.errors import DataError
    from tooldisc.evaluation.run import QueryRun, RunResult, cutoff_for
    from tooldisc.gold.trec import MAX_BYTES, read_scored_run

    cfg = config if config is not None else inputs.config
    cutoff = cutoff_for(cfg, k)
    source = str(path)
    try:
        digest = hashlib.sha256(read_at_most(path, MAX_BYTES + 1)).hexdigest()[:16]  # read_scored_run refuses past it
    except OSError as exc:
        raise DataError(f"cannot read run file: {exc.strerror or exc}", file=source) from None
    ranked = read_scored_run(path)
    known = {t.name for t in inputs.catalog.tools}
    judged = set(inputs.gold.by_id)
    queries: list[QueryRun] = []
    unknown: dict[str, int] = {}
    deeper = 0
    absent = []
    for q in inputs.gold.queries:
        pairs = ranked.get(q.id)
        if pairs is None:
            absent.append(q.id)
            pairs = ()
        deeper += len(pairs) > cutoff
        cut = pairs[:cutoff]
        for tool, _ in cut:
            if tool not in known:
                unknown[tool] = unknown.get(tool, 0) + 1
        queries.append(QueryRun(q.id, tuple(t for t, _ in cut), tuple(s for _, s in cut), len(cut)))
    notes = []
    if unknown:
        names = sorted(unknown)
        notes.append(f"note: {source}: {sum(unknown.values())} offered tool(s) within the top {cutoff} "
                     f"({len(names)} distinct) are not in the catalog and count as forbidden (unknown policy is "
                     f"never authorized): {_named(names)}")
    if absent:
        one = len(absent) == 1
        notes.append(f"note: {source}: {len(absent)} judged quer{'y has' if one else 'ies have'} no line in the run "
                     f"and count{'s' if one else ''} as an empty offer: {_named(absent)}")
    extra = sorted(set(ranked) - judged)
    if extra:
        notes.append(f"note: {source}: {len(extra)} run quer{'y is' if len(extra) == 1 else 'ies are'} not in the "
                     f"gold set and were left out: {_named(extra)}")
    if deeper:
        notes.append(f"note: {source}: {deeper} quer{'y ranks' if deeper == 1 else 'ies rank'} more than "
                     f"{cutoff} tools; each was cut at {cutoff}, as every arm is")
    result = RunResult(inputs.gold, inputs.catalog, cfg, inputs.context, k, cutoff, tuple(queries))
    return replace(result, run_file=RunFile(source, digest, tuple(notes)))
