"""K sweeps: every K read from one ranking as deep as the largest K.

Discovery runs once, at the largest K; each smaller K is that ranking cut shorter
(the metrics package's ``offered``), which is exactly the offer discovery gives at
that K — abstention does not depend on K and the order never does — so a sweep row
equals ``tooldisc eval --k K``, at a fraction of the cost.

Schema tokens per offer come from :func:`schema_tokens`, a labelled approximation
until the agent package's token estimator replaces it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooldisc.evaluation.run import RunResult, eval_measures, score_run
from tooldisc.evaluation.summary import metrics_dict

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.model import Tool

# Shown next to every schema-token figure until agent/tokens.py lands.
TOKEN_METHOD = "approximate: ceil(characters of the tool's compact JSON schema / 4)"


def schema_tokens(tool: Tool) -> int:
    """APPROXIMATE tokens a model pays for ``tool``'s schema: one token per 4 characters.

    Stand-in for the agent package's estimator (``agent/tokens.py``); it counts the
    JSON a provider would be sent (name, description, compact or full parameters).
    """
    params = tool.compact_parameters if tool.compact_parameters is not None else tool.parameters
    body = {"name": tool.name, "description": tool.description, "parameters": params or {}}
    return math.ceil(len(json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True)) / 4)


def parse_ks(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"3,5,10"`` → ``(3, 5, 10)``: positive, sorted, duplicates dropped."""
    from tooldisc.errors import UsageError

    items = [p.strip() for p in text.split(",") if p.strip()] if isinstance(text, str) else list(text)
    if not items:
        raise UsageError("--k needs at least one positive integer, as in --k 3,5,10,15")
    out = set()
    for item in items:
        try:
            k = int(item)
        except (TypeError, ValueError):
            raise UsageError(f"--k must be comma-separated positive integers; got {item!r}") from None
        if k < 1:
            raise UsageError(f"--k must be comma-separated positive integers; got {item!r}")
        out.add(k)
    return tuple(sorted(out))


def offer_tokens(result: RunResult, catalog: Catalog, depth: int) -> dict[str, float]:
    """Query id → approximate schema tokens of its offer cut at ``depth``."""
    cost = {t.name: schema_tokens(t) for t in catalog.tools}
    return {q.qid: float(sum(cost[n] for n in q.names[:depth])) for q in result.queries}


def sweep_document(result: RunResult, ks: Sequence[int]) -> dict[str, Any]:
    """One row per K, all from ``result`` (which must have been run at ``max(ks)``)."""
    from tooldisc.metrics.measures import SchemaTokens

    from tooldisc.errors import UsageError

    if result.k == "auto" or max(ks) > result.cutoff:
        raise UsageError(f"a sweep needs a run at least as deep as its largest K ({max(ks)}); got {result.k}")
    rows = []
    for k in ks:
        scores = score_run(result, [*eval_measures(k), SchemaTokens()], depth=k,
                           schema_tokens=offer_tokens(result, result.catalog, k))
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

