"""K sweeps: every K read from one ranking as deep as the largest K.

Discovery runs once, at the largest K; each smaller K is that ranking cut shorter
(the metrics package's ``offered``), which is exactly the offer discovery gives at
that K — abstention does not depend on K and the order never does — so a sweep row
equals ``tooldisc eval --k K``, at a fraction of the cost.

Schema tokens per offer come from :mod:`.tokens` (the agent layer's token estimator).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooldisc.evaluation.run import RunResult, eval_measures, score_run
from tooldisc.evaluation.summary import metrics_dict
from tooldisc.evaluation.tokens import TOKEN_METHOD, offer_tokens


def parse_ks(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"3,5,10"`` → ``(3, 5, 10)``: positive, sorted, duplicates dropped."""
    from tooldisc.errors import UsageError
    from tooldisc.limits import COUNTS
    from tooldisc.params import message

    items = [p.strip() for p in text.split(",") if p.strip()] if isinstance(text, str) else list(text)
    if not items:
        raise UsageError("--k needs at least one positive integer, as in --k 3,5,10,15")
    out = set()
    each = f"comma-separated, each {COUNTS['k'].describe()}"  # the one k rule, for every item
    for item in items:
        try:
            k = int(item)
        except (TypeError, ValueError):
            raise UsageError(message("--k", each, item)) from None
        if COUNTS["k"].problem(k, "--k") is not None:
            raise UsageError(message("--k", each, item))
        out.add(k)
    return tuple(sorted(out))


def sweep_document(result: RunResult, ks: Sequence[int]) -> dict[str, Any]:
    """One row per K, all from ``result`` (which must have been run at ``max(ks)``)."""
    from tooldisc.errors import UsageError
    from tooldisc.metrics.measures import SchemaTokens

    if result.k == "auto" or max(ks) > result.cutoff:
        raise UsageError(f"a sweep needs a run at least as deep as its largest K ({max(ks)}); got {result.k}")
    rows = []
    cache: dict[str, int] = {}
    for k in ks:
        scores = score_run(result, [*eval_measures(k), SchemaTokens()], depth=k,
                           schema_tokens=offer_tokens(result, result.catalog, k, cache))
        metrics = metrics_dict(scores.totals)
        rows.append({"k": k, "metrics": metrics})
    cat = result.catalog
    return {
        "schema_version": 1,
        "queries": len(result.gold),
        "matched": sum(1 for q in result.gold.queries if q.matched),
        "ks": list(ks),
        "depth": result.cutoff,
        "context": result.context.to_dict(),
        "catalog": {"source": cat.source, "version": cat.version, "hash": cat.hash, "tools": len(cat)},
        "gold": {"source": result.gold.source, "dataset_version": result.gold.dataset_version},
        "config": {"source": result.config.source, "hash": result.config.hash},
        "schema_tokens_method": TOKEN_METHOD,
        "rows": rows,
        "notes": list(dict.fromkeys([*cat.notes, *result.gold.notes])),
    }

