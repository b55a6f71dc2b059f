"""Running discovery over a gold set, and scoring the run with the metrics package.

Evaluation goes through the one chokepoint, :meth:`Discoverer.discover`, with the
query text, its history and the context — never its labels — so the numbers measure
exactly what production would offer. Labels meet the offers only afterwards, in
:func:`evaluate_run`, which hands both to :mod:`tooldisc.metrics` (the only place
measures are computed).

Measure names carry the K the offers were cut at. For ``k="auto"`` an offer may hold
up to the config's ``adaptive.max_k`` tools, so names carry that cap (``hit@20``
covers the whole adaptive offer) and ``avg_k`` reports the K actually used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooldisc.evaluation.slices import NONE_LABEL, SLICE_FIELDS

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.discovery.model import Context
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.gold.model import GoldQuery, GoldSet
    from tooldisc.metrics.measures import Measure

__all__ = ["NONE_LABEL", "SLICE_FIELDS"]  # re-exported from .slices, where slice fields are decided

# The kinds of miss a report lists, worst first.
MISS_KINDS: tuple[str, ...] = ("forbidden", "false_abstention", "miss", "no_match_offered")


@dataclass(frozen=True)
class RunFile:
    """Where an arm's offers came from when they came from a file: its path, content hash and notes."""

    source: str
    hash: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryRun:
    """What discovery offered one gold query: names best first, their scores, the K used."""

    qid: str
    names: tuple[str, ...]
    scores: tuple[float, ...]
    k: int
    latency_ms: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class RunResult:
    """Offers for every gold query from one engine (or one run file), in gold order.

    ``cutoff`` is the largest offer any query could get (K, or ``max_k`` for auto);
    it names the measures. ``run_file`` says where the offers came from when a TREC
    run file made them (:mod:`tooldisc.evaluation.run_file`); ``config`` is then only
    the one K was taken from.
    """

    gold: GoldSet
    catalog: Catalog
    config: RankerConfig
    context: Context
    k: int | str
    cutoff: int
    queries: tuple[QueryRun, ...]
    # Set when the offers were read from a TREC run file rather than made by discovery.
    run_file: RunFile | None = None
    # SHA-256 of the learned file discovery used ("" without one).
    learned_digest: str = ""

    def run(self, depth: int | None = None) -> dict[str, tuple[str, ...]]:
        """``{qid: ranked names}``, each cut at ``depth`` when given."""
        return {q.qid: q.names if depth is None else q.names[:depth] for q in self.queries}

    def scores(self, depth: int | None = None) -> dict[str, tuple[float, ...]]:
        """``{qid: scores}`` aligned with :meth:`run` (a TREC run writes them)."""
        return {q.qid: q.scores if depth is None else q.scores[:depth] for q in self.queries}

    def latency(self) -> dict[str, float]:
        return {q.qid: q.latency_ms for q in self.queries}


def run_discovery(engine: Discoverer, gold: GoldSet, context: Context, k: int | str,
                  *, progress: Callable[[int], None] | None = None) -> RunResult:
    """Discover for every gold query through the pipeline chokepoint.

    Only ``query.query`` and ``query.history`` reach discovery; the labels stay here.
    ``progress`` is called with the number of queries done (for a progress bar).
    """
    cfg = engine.config
    results: list[QueryRun] = []
    for i, q in enumerate(gold.queries, 1):
        t0 = time.perf_counter()
        offer = engine.discover(q.query, context, k, q.history)
        elapsed = (time.perf_counter() - t0) * 1000.0
        results.append(QueryRun(q.id, offer.names, tuple(c.score for c in offer.candidates), offer.k, elapsed))
        if progress is not None:
            progress(i)
    return RunResult(gold, engine.catalog, cfg, context, k, cutoff_for(cfg, k), tuple(results),
                     learned_digest=engine.index.learned_digest)


def cutoff_for(config: RankerConfig, k: int | str) -> int:
    """The K measures are named with: ``k``, or for ``"auto"`` the largest adaptive offer."""
    return config.adaptive.max_k if k == "auto" else int(k)


def eval_measures(cutoff: int) -> tuple[Measure, ...]:
    """The measures every eval report shows, named with ``cutoff`` (DESIGN §6)."""
    from tooldisc.metrics.measures import (
        MRR,
        NDCG,
        AvgK,
        Complete,
        FalseAbstention,
        Forbidden,
        Hit,
        NoMatchSuccess,
        Precision,
        Recall,
    )

    return (Hit(cutoff), Complete(cutoff), Recall(cutoff), MRR(), Precision(cutoff), NDCG(cutoff),
            Forbidden(cutoff), NoMatchSuccess(), FalseAbstention(), AvgK())


def side_effects(catalog: Catalog) -> dict[str, str | None]:
    """Tool name → side effect, for the §4 intent matrix in ``forbidden@K``."""
    return {t.name: t.side_effect for t in catalog.tools}


def forbidden_offered(query: GoldQuery, names: Sequence[str], effects: Mapping[str, str | None]) -> list[str]:
    """The offered tools ``forbidden@K`` counts against ``query``, in offer order (DESIGN §6).

    Named in ``forbidden_tools``, or a side effect the labelled intent does not allow;
    a primary or acceptable tool never is.
    """
    j = query.judgment()
    good = j.primary | j.acceptable
    return [t for t in names if t not in good and (t in j.forbidden or not j.allows(effects.get(t)))]


@dataclass(frozen=True)
class Scores:
    """Per-query values of a set of measures over one run, plus their aggregates.

    ``values[m]`` maps query id → value for the queries in ``m``'s domain, in gold
    order; slices aggregate the same rows, so a slice can never disagree with the
    whole.
    """

    measures: tuple[Measure, ...]
    values: Mapping[Measure, Mapping[str, float]]
    totals: Mapping[Measure, float]

    def subset(self, qids: set[str]) -> dict[Measure, float]:
        """Aggregates over the queries in ``qids`` (a slice), measure by measure.

        Means are taken directly over the per-query values; other aggregates
        (latency percentiles) go through :func:`tooldisc.metrics.aggregate`.
        """
        import numpy as np

        from tooldisc.metrics.compute import Row, aggregate

        out: dict[Measure, float] = {}
        for m in self.measures:
            vals = [v for q, v in self.values[m].items() if q in qids]
            if m.AGGREGATE == "mean":
                out[m] = float(np.mean(vals)) if vals else float("nan")
            else:
                out[m] = aggregate([Row(q, m, v) for q, v in self.values[m].items() if q in qids], [m])[m]
        return out


def score_run(result: RunResult, measures: Sequence[Measure | str], *, depth: int | None = None,
              timings: bool = False, schema_tokens: Mapping[str, float] | None = None) -> Scores:
    """Score ``result`` with the metrics package, offers cut at ``depth`` when given.

    Cutting with ``offered`` (rather than re-running discovery) is what lets a sweep
    read every K from one deep ranking and still equal an eval at that K.
    """
    from tooldisc.metrics.compute import aggregate, compute
    from tooldisc.metrics.measures import LatencyP50, LatencyP95, parse_measures

    ms = list(parse_measures(list(measures)))
    if timings:
        ms += [m for m in (LatencyP50(), LatencyP95()) if m not in ms]
    offered = None if depth is None else {q.qid: min(len(q.names), depth) for q in result.queries}
    extras: dict[str, Any] = {"side_effects": side_effects(result.catalog)}
    if offered is not None:
        extras["offered"] = offered
    if timings:
        extras["latency_ms"] = result.latency()
    if schema_tokens is not None:
        extras["schema_tokens"] = schema_tokens
    rows = compute(ms, result.gold.judgments(), result.run(), **extras)
    values: dict[Measure, dict[str, float]] = {m: {} for m in ms}
    for row in rows:
        values[row.measure][row.qid] = row.value
    return Scores(tuple(ms), values, aggregate(rows, ms))


def slices(gold: GoldSet, by: Sequence[str] | None) -> dict[str, dict[str, set[str]]]:
    """``{field: {value: qids}}`` for each slice field that labels at least one query (see :mod:`.slices`)."""
    from tooldisc.evaluation.slices import slice_groups

    return slice_groups(gold, by).groups


def misses(result: RunResult, scores: Scores, cutoff: int) -> list[dict[str, Any]]:
    """Every query the offer failed, worst kind first, then by id.

    Kinds: ``forbidden`` (a tool the query must not see was offered), ``false_abstention``
    (a matched query got nothing), ``miss`` (no primary tool in the top K) and
    ``no_match_offered`` (a no-match query got tools).
    """
    from tooldisc.metrics.measures import Forbidden, Hit

    hit = scores.values.get(Hit(cutoff), {})
    forbidden = scores.values.get(Forbidden(cutoff), {})
    effects = side_effects(result.catalog)
    out: list[dict[str, Any]] = []
    for q, r in zip(result.gold.queries, result.queries, strict=True):
        names = r.names[:cutoff]
        kinds = []
        if forbidden.get(q.id):
            kinds.append("forbidden")
        if q.matched and not names:
            kinds.append("false_abstention")
        elif q.matched and not hit.get(q.id):
            kinds.append("miss")
        if q.no_match and names:
            kinds.append("no_match_offered")
        if not kinds:
            continue
        offending = forbidden_offered(q, names, effects)
        for kind in kinds:
            item: dict[str, Any] = {
                "id": q.id, "kind": kind, "query": q.query,
                "expected": list(q.primary_expected_tools), "got": list(names[:5]),
                "offered": len(names),
            }
            if kind == "forbidden":
                item["forbidden_offered"] = offending
            out.append(item)
    rank = {k: i for i, k in enumerate(MISS_KINDS)}
    out.sort(key=lambda m: (rank[m["kind"]], m["id"]))
    return out
