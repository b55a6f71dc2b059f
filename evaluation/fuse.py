"""Fusing TREC runs: "tooldisc + my embeddings" as one run (``tooldisc fuse``).

Two methods, as ranx computes them (``ranx.fuse(runs, norm="min-max", method=…)``;
parity is tested on a fixture):

- ``rrf`` — reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): a tool's score is
  the sum over the runs that rank it of ``1 / (k + rank)``, rank 1-based, ``k`` 60;
- ``combmnz`` — CombMNZ (Fox & Shaw 1994): each run's scores min-max normalised per
  query (``(s - min) / max(max - min, 1e-9)``, so a one-tool query scores 0), summed
  over the runs that rank the tool, times how many runs rank it.

Each input run is ordered by score desc, then tool name (as :func:`read_scored_run`
reads it), and the fused run is ordered the same way: ties break by tool name. Every
query any run ranks is fused (a query one run lacks simply gets nothing from it).
Pure: runs in, a run out; the CLI reads and writes the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tooldisc.errors import UsageError
from tooldisc.params import Interval, checked

METHODS = ("rrf", "combmnz")
RRF_K = 60
_MIN_RANGE = 1e-9  # ranx's floor on a query's score range

Ranked = Sequence[tuple[str, float]]


def _rrf(runs: Sequence[Ranked], k: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for ranked in runs:
        for i, (tool, _) in enumerate(ranked):
            out[tool] = out.get(tool, 0.0) + 1.0 / (k + i + 1)
    return out


def _combmnz(runs: Sequence[Ranked]) -> dict[str, float]:
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for ranked in runs:
        if not ranked:
            continue
        scores = [s for _, s in ranked]
        low, high = min(scores), max(scores)
        span = max(high - low, _MIN_RANGE)
        for tool, s in ranked:
            total[tool] = total.get(tool, 0.0) + (s - low) / span
            count[tool] = count.get(tool, 0) + 1
    return {t: total[t] * count[t] for t in total}


def fuse(runs: Sequence[Mapping[str, Ranked]], method: str = "rrf", *, k: int = RRF_K,
         depth: int | None = None) -> dict[str, tuple[tuple[str, float], ...]]:
    """Fuse ``runs`` (each ``{qid: ((tool, score), …)}``, best first) into one, best first.

    ``k`` is RRF's constant (ignored by ``combmnz``); ``depth`` cuts each fused query's
    ranking. Queries come out in the order the runs first name them.
    """
    if method not in METHODS:
        raise UsageError(f"--method must be one of {', '.join(METHODS)}; got {method!r}")
    if len(runs) < 2:
        raise UsageError(f"fuse needs at least two runs; got {len(runs)}")
    checked(Interval(int, 0, None, strict=True), k, "k", UsageError)
    if depth is not None:
        checked(Interval(int, 1, None, strict=True), depth, "depth", UsageError)
    qids = list(dict.fromkeys(q for run in runs for q in run))
    out: dict[str, tuple[tuple[str, float], ...]] = {}
    for q in qids:
        parts = [run.get(q, ()) for run in runs]
        fused = _rrf(parts, k) if method == "rrf" else _combmnz(parts)
        ranked = sorted(fused.items(), key=lambda ts: (-ts[1], ts[0]))
        out[q] = tuple(ranked[:depth] if depth is not None else ranked)
    return out
