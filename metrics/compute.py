"""Computing measures over a run: per-query rows first, aggregation as a separate step.

A run maps each query id to its ranked tool names, already ordered by score desc then
name (discovery's tie-break), so the metrics never re-sort. DESIGN §6 is the contract:

- ranking measures (hit, complete, recall, MRR, P, nDCG) and ``false_abstention``
  average over *matched* queries (at least one primary tool, not labelled no-match);
- ``no_match_success`` averages over no-match queries;
- ``forbidden@K``, ``avg_k`` and the cost measures cover all queries;
- a judged query missing from the run is an empty offer; run entries without a
  judgment are ignored (the ir_measures convention).

The work is vectorised: one pass per query records only where its *judged* tools sit
(a handful of dict look-ups on a C-built position map), and every measure at every K
is then a few numpy reductions over those positions. Only ``forbidden@K`` with side
effects needs every offered position, and it gets them as one flat int8 array.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np

from tooldisc.errors import UsageError
from tooldisc.metrics.judgment import INTENT_ALLOWS, INTENTS, Judgment
from tooldisc.metrics.measures import (
    ALL,
    MATCHED,
    MRR,
    NDCG,
    NO_MATCH,
    AvgK,
    CandidateRecall,
    Complete,
    FalseAbstention,
    Forbidden,
    Hit,
    LatencyP50,
    LatencyP95,
    Measure,
    NoMatchSuccess,
    Precision,
    Recall,
    SchemaTokens,
    parse_measures,
)

Run = Mapping[str, Sequence[str]]
_BIG = np.iinfo(np.int64).max // 4  # "not within the offer": larger than any rank or K
_SIDE_EFFECT_CODE = {"none": 0, "write": 1, "delete": 2, "export": 3, "execute": 4}
_UNKNOWN = 5
# _ALLOW[intent, side effect code] from the literal matrix in judgment.INTENT_ALLOWS;
# the last column (unknown side effect) is never allowed.
_ALLOW = np.array(
    [[se in INTENT_ALLOWS[intent] for se in (*_SIDE_EFFECT_CODE, "?")] for intent in INTENTS],
    dtype=bool,
)
_INTENT_CODE = {intent: i for i, intent in enumerate(INTENTS)}


class Row(NamedTuple):
    """One per-query value (ir_measures' ``Metric``)."""

    qid: str
    measure: Measure
    value: float


class _Positions:
    """Where each query's judged tools sit in its offer; built once per run."""

    def __init__(self, judgments: Sequence[Judgment], run: Run, offered: Mapping[str, int] | None):
        n = len(judgments)
        self.n = n
        self.length = np.zeros(n, dtype=np.int64)
        self.n_primary = np.zeros(n, dtype=np.int64)
        self.n_acceptable = np.zeros(n, dtype=np.int64)
        self.list_forbidden = np.full(n, _BIG, dtype=np.int64)
        self.rankings: list[Sequence[str]] = []
        jq: list[int] = []
        jr: list[int] = []
        jg: list[int] = []
        for i, j in enumerate(judgments):
            ranking = run.get(j.qid, ())
            if isinstance(ranking, str):
                raise UsageError(f"run[{j.qid!r}] must be a sequence of tool names; got a string")
            length = len(ranking)
            if offered is not None and j.qid in offered:
                cap = offered[j.qid]
                if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 0:
                    raise UsageError(f"offered[{j.qid!r}] must be an int >= 0; got {cap!r}")
                length = min(length, int(cap))
            if length < len(ranking):
                ranking = ranking[:length]
            self.rankings.append(ranking)
            self.length[i] = length
            pos = dict(zip(ranking, range(length), strict=False))
            if len(pos) != length:
                dup = next(t for t in ranking if ranking.count(t) > 1)
                raise UsageError(f"run[{j.qid!r}] names tool {dup!r} more than once")
            self.n_primary[i] = len(j.primary)
            for t in j.primary:
                r = pos.get(t)
                if r is not None:
                    jq.append(i)
                    jr.append(r)
                    jg.append(2)
            good = j.primary
            if j.acceptable:
                acceptable = j.acceptable - j.primary
                self.n_acceptable[i] = len(acceptable)
                good = good | acceptable
                for t in acceptable:
                    r = pos.get(t)
                    if r is not None:
                        jq.append(i)
                        jr.append(r)
                        jg.append(1)
            if j.forbidden:
                ranks = [pos[t] for t in j.forbidden - good if t in pos]
                if ranks:
                    self.list_forbidden[i] = min(ranks)
        self.jq = np.asarray(jq, dtype=np.int64)
        self.jr = np.asarray(jr, dtype=np.int64)
        self.jg = np.asarray(jg, dtype=np.int64)
        self.primary = self.jg == 2
        self.min_primary = np.full(n, _BIG, dtype=np.int64)
        np.minimum.at(self.min_primary, self.jq[self.primary], self.jr[self.primary])
        self.matched = np.fromiter((j.matched for j in judgments), dtype=bool, count=n)
        self.no_match = np.fromiter((j.no_match for j in judgments), dtype=bool, count=n)
        self._judgments = judgments

    def cut(self, cutoff: int | None) -> np.ndarray:
        """Per-query number of offered positions a measure at this cutoff looks at."""
        return self.length if cutoff is None else np.minimum(self.length, cutoff)

    def within(self, cutoff: int | None) -> np.ndarray:
        """Mask over judged entries: inside the cut."""
        return self.jr < self.cut(cutoff)[self.jq]

    def first_forbidden(self, side_effects: Mapping[str, str | None] | None, depth: int | None) -> np.ndarray:
        """Per query, the rank of the first forbidden offered tool (``_BIG`` if none).

        Forbidden means named in ``forbidden`` or, with ``side_effects``, a side effect
        the labelled intent does not allow; never a primary or acceptable tool.
        """
        first = self.list_forbidden.copy()
        if side_effects is None:
            return first
        depths = self.length if depth is None else np.minimum(self.length, depth)
        rankings = [r if d == len(r) else r[:d] for r, d in zip(self.rankings, depths.tolist(), strict=True)]
        total = int(depths.sum())
        if total == 0:
            return first
        flat = list(chain.from_iterable(rankings))
        code_of = {name: _SIDE_EFFECT_CODE.get(side_effects.get(name), _UNKNOWN) for name in set(flat)}  # type: ignore[arg-type]
        codes = np.fromiter(map(code_of.__getitem__, flat), dtype=np.int8, count=total)
        offsets = np.zeros(self.n, dtype=np.int64)
        np.cumsum(depths[:-1], out=offsets[1:])
        qidx = np.repeat(np.arange(self.n), depths)
        intents = np.fromiter((_INTENT_CODE[j.intent] for j in self._judgments), dtype=np.int64, count=self.n)
        bad = ~_ALLOW[intents[qidx], codes]
        keep = self.jr < depths[self.jq]  # judged (primary/acceptable) tools are never forbidden
        bad[offsets[self.jq[keep]] + self.jr[keep]] = False
        idx = np.flatnonzero(bad)
        if idx.size:
            q = qidx[idx]
            queries, firsts = np.unique(q, return_index=True)
            ranks = idx[firsts] - offsets[queries]
            first[queries] = np.minimum(first[queries], ranks)
        return first


def ranked(scores: Mapping[str, float]) -> tuple[str, ...]:
    """Tool names ordered by score desc, then name: the tie-break every run must use."""
    return tuple(sorted(scores, key=lambda name: (-scores[name], name)))


def _as_judgments(judgments: Iterable[Judgment] | Mapping[str, Judgment]) -> list[Judgment]:
    items = list(judgments.values()) if isinstance(judgments, Mapping) else list(judgments)
    seen: set[str] = set()
    for j in items:
        if not isinstance(j, Judgment):
            raise UsageError(f"judgments must be Judgment records; got {type(j).__name__}")
        if j.qid in seen:
            raise UsageError(f"judgment {j.qid!r} appears more than once")
        seen.add(j.qid)
    return items


def _ideal_dcg(n_primary: np.ndarray, n_acceptable: np.ndarray, cutoff: int | None) -> np.ndarray:
    """trec_eval's ideal DCG: every primary (gain 2) then every acceptable (gain 1), cut at K."""
    total = n_primary + n_acceptable
    top = int(total.max(initial=0))
    disc = np.zeros(top + 1)
    if top:
        np.cumsum(1.0 / np.log2(np.arange(2, top + 2)), out=disc[1:])
    a = n_primary if cutoff is None else np.minimum(n_primary, cutoff)
    b = total if cutoff is None else np.minimum(total, cutoff)
    return disc[a] + disc[b]  # 2·D[a] + (D[b] − D[a])


def _ranking_values(m: Measure, p: _Positions) -> np.ndarray:
    within = p.within(m.cutoff)
    if isinstance(m, Hit | Complete | Recall):
        hits = np.bincount(p.jq[within & p.primary], minlength=p.n)
        if isinstance(m, Hit):
            return (hits > 0).astype(float)
        if isinstance(m, Complete):
            return ((hits == p.n_primary) & (p.n_primary > 0)).astype(float)
        return hits / np.maximum(p.n_primary, 1)
    if isinstance(m, MRR):
        r = p.min_primary
        return np.where(r < p.cut(m.cutoff), 1.0 / (r + 1.0), 0.0)
    if isinstance(m, Precision):
        good = np.bincount(p.jq[within], minlength=p.n).astype(float)
        denom = p.length if m.cutoff is None else np.full(p.n, m.cutoff)
        return np.divide(good, denom, out=np.zeros(p.n), where=denom > 0)
    if isinstance(m, NDCG):
        w = p.jg[within] / np.log2(p.jr[within] + 2.0)
        dcg = np.bincount(p.jq[within], weights=w, minlength=p.n)
        ideal = _ideal_dcg(p.n_primary, p.n_acceptable, m.cutoff)
        return np.divide(dcg, ideal, out=np.zeros(p.n), where=ideal > 0)
    raise AssertionError(f"not a ranking measure: {m}")  # pragma: no cover


def _need(value: object, m: Measure, argument: str, what: str) -> None:
    if value is None:
        raise UsageError(f"{m} needs the {argument!r} argument ({what})")


def compute(
    measures: Iterable[Measure | str] | str,
    judgments: Iterable[Judgment] | Mapping[str, Judgment],
    run: Run,
    *,
    offered: Mapping[str, int] | None = None,
    side_effects: Mapping[str, str | None] | None = None,
    candidates: Mapping[str, Sequence[str]] | None = None,
    schema_tokens: Mapping[str, float] | None = None,
    latency_ms: Mapping[str, float] | None = None,
) -> list[Row]:
    """Per-query values of ``measures``: one :class:`Row` per query in each measure's domain.

    ``offered`` gives a query's own offer length (adaptive K): its ranking is cut
    there before any ``@K``. ``side_effects`` (tool name → side effect) lets
    ``forbidden@K`` apply the §4 intent matrix; a tool it lacks, or maps to ``None``,
    is UNKNOWN and forbidden under every intent. Without it only ``forbidden_tools``
    lists count. ``candidates`` are the retrieved candidates per query, in retrieval
    order, for ``candidate_recall@N``. ``schema_tokens`` and ``latency_ms`` are
    per-query costs; queries absent from them get no row.
    Rows come measure by measure, queries in judgment order.
    """
    ms = parse_measures(measures if isinstance(measures, str) else list(measures))
    js = _as_judgments(judgments)
    if not isinstance(run, Mapping):
        raise UsageError(f"run must be a mapping of query id to ranked tool names; got {type(run).__name__}")
    p = _Positions(js, run, offered)
    qids = [j.qid for j in js]
    domains = {MATCHED: p.matched, NO_MATCH: p.no_match, ALL: np.ones(p.n, dtype=bool)}
    forbidden_depth = None
    forb = [m for m in ms if isinstance(m, Forbidden)]
    if forb and all(m.cutoff is not None for m in forb):
        forbidden_depth = max(m.cutoff for m in forb)  # type: ignore[type-var]
    first_forbidden = p.first_forbidden(side_effects, forbidden_depth) if forb else None

    rows: list[Row] = []
    for m in ms:
        mask = domains[m.DOMAIN]
        if isinstance(m, Hit | Complete | Recall | MRR | Precision | NDCG):
            values = _ranking_values(m, p)
        elif isinstance(m, Forbidden):
            values = (first_forbidden < p.cut(m.cutoff)).astype(float)  # type: ignore[operator]
        elif isinstance(m, NoMatchSuccess | FalseAbstention):
            values = (p.length == 0).astype(float)
        elif isinstance(m, AvgK):
            values = p.length.astype(float)
        elif isinstance(m, CandidateRecall):
            _need(candidates, m, "candidates", "query id → retrieved candidate names")
            values = np.zeros(p.n)
            for i in np.flatnonzero(mask).tolist():
                j = js[i]
                top = set(candidates.get(j.qid, ())[: m.cutoff])  # type: ignore[union-attr]
                values[i] = len(j.primary & top) / len(j.primary)
        elif isinstance(m, SchemaTokens | LatencyP50 | LatencyP95):
            source = schema_tokens if isinstance(m, SchemaTokens) else latency_ms
            arg = "schema_tokens" if isinstance(m, SchemaTokens) else "latency_ms"
            _need(source, m, arg, "query id → number")
            rows.extend(Row(q, m, float(source[q])) for q in qids if q in source)  # type: ignore[index,operator]
            continue
        else:  # pragma: no cover - every measure class is handled above
            raise UsageError(f"no computation for measure {m}")
        idx = np.flatnonzero(mask)
        rows.extend(map(Row, [qids[i] for i in idx.tolist()], [m] * idx.size, values[idx].tolist()))
    return rows


def aggregate(rows: Iterable[Row], measures: Iterable[Measure | str] | None = None) -> dict[Measure, float]:
    """Mean of each measure's rows (p50/p95 for latency); NaN for a measure with no rows.

    With ``measures`` the result holds exactly those, in that order; otherwise every
    measure seen in ``rows``, in order of appearance.
    """
    values: dict[Measure, list[float]] = {}
    if measures is not None:
        for m in parse_measures(list(measures) if not isinstance(measures, str) else measures):
            values[m] = []
    for row in rows:
        if measures is None:
            values.setdefault(row.measure, []).append(row.value)
        elif row.measure in values:
            values[row.measure].append(row.value)
    out: dict[Measure, float] = {}
    for m, vals in values.items():
        if not vals:
            out[m] = float("nan")
        elif m.AGGREGATE == "mean":
            out[m] = float(np.mean(vals))
        else:
            out[m] = float(np.percentile(vals, 50 if m.AGGREGATE == "p50" else 95))
    return out


def evaluate(
    measures: Iterable[Measure | str] | str,
    judgments: Iterable[Judgment] | Mapping[str, Judgment],
    run: Run,
    **extras: Mapping,
) -> dict[Measure, float]:
    """``aggregate(compute(...))``: one number per measure."""
    ms = parse_measures(measures if isinstance(measures, str) else list(measures))
    return aggregate(compute(ms, judgments, run, **extras), ms)
