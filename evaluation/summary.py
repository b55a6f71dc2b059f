"""The eval document: one JSON-able mapping that every eval output renders from.

``tooldisc eval --format json`` prints it, Markdown/HTML/table render it, ``gate
--from`` reads it back, and ``evaluation/data/eval.schema.json`` describes it. It
holds no timings unless asked for and no absolute clock, so two runs on the same
inputs give byte-identical output.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tooldisc.evaluation.run import (
    MISS_KINDS,
    RunResult,
    Scores,
    eval_measures,
    misses,
    score_run,
)

if TYPE_CHECKING:
    from tooldisc.metrics.measures import Measure

SCHEMA_VERSION = 1
DIGITS = 6
DEFAULT_MISSES = 10


def number(value: float) -> float | None:
    """A float for JSON: rounded so reports stay stable and short; NaN (no queries) → null."""
    if value is None or math.isnan(value):
        return None
    return round(float(value), DIGITS)


def metrics_dict(totals: Mapping[Measure, float]) -> dict[str, float | None]:
    return {str(m): number(v) for m, v in totals.items()}


def check_measurable(measures: Sequence[Measure | str]) -> None:
    """Refuse, before any work, a measure an eval run cannot produce."""
    from tooldisc.errors import UsageError
    from tooldisc.metrics.measures import CandidateRecall, parse_measures

    for m in parse_measures(list(measures)):
        if isinstance(m, CandidateRecall):
            raise UsageError(f"{m} is not an eval measure: eval ranks the whole authorized set "
                             "and records no separate retrieval candidates")


def eval_document(result: RunResult, *, by: Sequence[str] | None = None, timings: bool = False,
                  max_misses: int = DEFAULT_MISSES, extra: Sequence[Measure | str] = (),
                  scores: Scores | None = None) -> dict[str, Any]:
    """Score ``result`` and build the eval document (see ``eval.schema.json``).

    ``extra`` measures (e.g. a gate's ``hit@10``) are computed on the same run and
    added to ``metrics``; a cutoff above the run's must be refused by the caller.
    ``by`` names the slice fields (``None``: the usual label fields, those no query
    carries left out quietly; a field asked for that no query carries is a note).
    """
    from tooldisc.evaluation.slices import slice_groups
    from tooldisc.metrics.measures import LatencyP50, LatencyP95, SchemaTokens, parse_measures

    cutoff = result.cutoff
    measures = list(eval_measures(cutoff))
    measures += [m for m in parse_measures(list(extra)) if m not in measures]
    check_measurable(measures)
    tokens = None
    if any(isinstance(m, SchemaTokens) for m in measures):
        from tooldisc.evaluation.tokens import offer_tokens

        tokens = offer_tokens(result, result.catalog, cutoff)
    timings = timings or any(isinstance(m, LatencyP50 | LatencyP95) for m in measures)
    if scores is None:
        scores = score_run(result, measures, timings=timings, schema_tokens=tokens)
    gold = result.gold
    sliced = slice_groups(gold, by)
    groups = sliced.groups
    by_out: dict[str, Any] = {}
    base = eval_measures(cutoff)
    for name, values in groups.items():
        by_out[name] = {}
        for value, qids in values.items():
            sub = scores.subset(qids)
            by_out[name][value] = {
                "queries": len(qids),
                "matched": sum(1 for q in qids if gold.by_id[q].matched),
                "metrics": {str(m): number(sub[m]) for m in base},
            }
    found = _with_forbidden_offered(misses(result, scores, cutoff))
    counts = {kind: sum(1 for m in found if m["kind"] == kind) for kind in MISS_KINDS}
    cat = result.catalog
    cfg = result.config
    notes = list(dict.fromkeys([*cat.notes, *gold.notes, *_version_notes(result), *sliced.warnings]))
    return {
        "schema_version": SCHEMA_VERSION,
        "queries": len(gold),
        "matched": sum(1 for q in gold.queries if q.matched),
        "no_match": sum(1 for q in gold.queries if q.no_match),
        "k": result.k,
        "cutoff": cutoff,
        "context": result.context.to_dict(),
        "catalog": {"source": cat.source, "version": cat.version, "hash": cat.hash, "tools": len(cat)},
        "gold": {"source": gold.source, "dataset_version": gold.dataset_version,
                 "catalog_version": gold.catalog_version, "hash": gold.hash},
        "config": {"source": cfg.source, "hash": cfg.hash},
        "metrics": metrics_dict(scores.totals),
        "ir_measures": {str(m): m.ir_measures for m in scores.measures if m.ir_measures},
        "by": by_out,
        "miss_counts": counts,
        "misses": found[:max_misses],
        "notes": notes,
    }


def _with_forbidden_offered(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every miss row names the forbidden tools its query was offered (``[]`` when none).

    :func:`misses` puts them on the query's ``forbidden`` row only; a report truncated
    to its worst rows, or a reader looking at the ``miss`` row of the same query, must
    still see which forbidden tool (or tool its intent does not allow) was offered.
    """
    offered = {m["id"]: m["forbidden_offered"] for m in found if m["kind"] == "forbidden"}
    return [{**m, "forbidden_offered": list(offered.get(m["id"], []))} for m in found]


def _version_notes(result: RunResult) -> list[str]:
    """A gold set written for another catalog version is worth repeating in the report."""
    from tooldisc.gold.validate import validate_gold

    return [f"warning: {i.render(result.gold.source)}" for i in validate_gold(result.gold, result.catalog)
            if i.level == "warning" and i.where == "catalog_version"]
