"""What an offer costs in schema tokens: the agent package's estimate, per tool and per query.

Both the eval document (:mod:`.summary`, the ``schema_tokens`` measure) and the K sweep
(:mod:`.sweep`) report it; kept in its own module so neither imports the other for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.model import Tool
    from tooldisc.evaluation.run import RunResult

# Shown next to every schema-token figure, so a reader knows it is an estimate.
TOKEN_METHOD = ("estimated by tooldisc.agent's calibrated token model (o200k_base) over each offered "
                "tool's compact schema {name, description, parameters}")


def schema_tokens(tool: Tool) -> int:
    """Estimated tokens a model pays for ``tool``'s schema (compact when the catalog has one).

    The same estimate the agent layer reports for a rendered offer, so sweep costs
    and runtime costs agree.
    """
    from tooldisc.agent.schemas import build_schema

    return build_schema(tool, compact=True).tokens


def offer_tokens(result: RunResult, catalog: Catalog, depth: int,
                 cache: dict[str, int] | None = None) -> dict[str, float]:
    """Query id → estimated schema tokens of its offer cut at ``depth``.

    ``cache`` (tool name → tokens) lets several depths share one estimate per tool;
    only tools that were offered are ever estimated.
    """
    cost = {} if cache is None else cache
    by_name = catalog.by_name
    out = {}
    for q in result.queries:
        total = 0
        for name in q.names[:depth]:
            if name not in cost:
                cost[name] = schema_tokens(by_name[name])
            total += cost[name]
        out[q.qid] = float(total)
    return out
