"""What an eval run's offers cost in schema tokens: all K=48 at once vs progressive K=15.

The ranking measures say whether the right tool was offered; this says what offering
it costs, the other half of choosing K (seed 003 §11–12). The simulation and the
counting live in :mod:`tooldisc.agent.progressive`; this module fixes the comparison
``tooldisc eval --schemas`` reports and adds the relative savings, so the eval
document stays one JSON-able mapping that every format renders from.

The comparison is independent of the eval's own ``--k``: it always sets a full offer
of ``K_FULL`` against a progressive offer of ``K_INITIAL`` plus ``search_tools``, in
the eval's context, so figures from runs at different K stay comparable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.run import RunResult

K_FULL = 48
K_INITIAL = 15
SEARCH_LIMIT = 10
DIGITS = 6

METHOD = (
    "full: one call with the top {k_full} schemas; progressive: call 1 sends the top {k_initial} plus "
    "search_tools, and when a primary tool is missing from it the model is assumed to search with the "
    "user's query, adding only schemas not yet sent (about {search_limit}, at most {cap} per call). "
    "initial = tokens of call 1; incremental = all schemas sent once (a provider that keeps them); "
    "wire = the full tools list resent on every call (what a stateless provider bills)."
)


def _saving(value: float, baseline: float) -> float | None:
    """``1 - value / baseline``: the share of the baseline's tokens saved (negative = costs more)."""
    if not baseline:
        return None
    return round(1.0 - value / baseline, DIGITS)


def schemas_section(result: RunResult, *, engine: Discoverer | None = None, k_full: int = K_FULL,
                    k_initial: int = K_INITIAL, search_limit: int = SEARCH_LIMIT) -> dict[str, Any]:
    """The ``schemas`` object of the eval document for ``result``'s gold set, catalog and context.

    ``engine`` is the Discoverer the run used (its index is reused); without it one is
    built from the run's catalog and config. Per strategy: initial, incremental and
    wire tokens per request (mean/p50/p95/max) and their savings against the full
    offer, computed on the means. Deterministic: no timings, no clock.
    """
    from tooldisc.agent.progressive import gold_rounds, schema_token_report
    from tooldisc.agent.search_tools import MAX_SCHEMAS_PER_CALL

    if engine is None:
        from tooldisc.discovery.pipeline import Discoverer

        engine = Discoverer(result.catalog, result.config)
    rounds = gold_rounds(engine, result.gold.queries, result.context, k_full=k_full, k_initial=k_initial,
                         search_limit=search_limit)
    report = schema_token_report(rounds, result.catalog)
    baseline = f"full_k{k_full}"
    base = report["strategies"][baseline]
    strategies = {
        name: {
            **s,
            "initial_saving": _saving(s["initial"]["mean"], base["initial"]["mean"]),
            "wire_saving": _saving(s["wire"]["mean"], base["wire"]["mean"]),
        }
        for name, s in report["strategies"].items()
    }
    return {
        "token_model": report["token_model"],
        "method": METHOD.format(k_full=k_full, k_initial=k_initial, search_limit=search_limit,
                                cap=MAX_SCHEMAS_PER_CALL),
        "k_full": k_full,
        "k_initial": k_initial,
        "search_limit": search_limit,
        "max_schemas_per_call": MAX_SCHEMAS_PER_CALL,
        "baseline": baseline,
        "strategies": strategies,
    }
