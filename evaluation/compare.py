"""Two ranker configs on the same queries: per-measure deltas and whether they are real.

Both runs share the catalog, gold set, context and K, so every measure is compared
query by query (paired). For each measure: the mean of A and B, win/tie/loss counts,
a seeded paired randomization test and a paired t-test, with Holm's correction across
all measures compared (one family). A measure whose sample cannot support a verdict
— fewer than 30 queries in its domain, or fewer than 20 queries that moved — says
"too small to tell" instead of a p-value-shaped guess.
"""

from __future__ import annotations

from typing import Any

from tooldisc.evaluation.run import RunResult, eval_measures, score_run
from tooldisc.evaluation.significance import holm, paired_test
from tooldisc.evaluation.summary import number

# Measures where a smaller value is the better one (risks and costs).
LOWER_IS_BETTER = frozenset({"forbidden", "false_abstention", "avg_k", "schema_tokens", "latency_p50", "latency_p95"})
MIN_QUERIES = 30
MIN_DISCORDANT = 20
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_ALPHA = 0.05
DEFAULT_CHANGED = 20


def _verdict(n: int, discordant: int, delta: float, p_adjusted: float, lower: bool, alpha: float) -> str:
    if n < MIN_QUERIES or discordant < MIN_DISCORDANT:
        return "too small to tell"
    if p_adjusted < alpha and delta != 0:
        return "B better" if (delta < 0) == lower else "A better"
    return "no significant difference"


def compare_document(a: RunResult, b: RunResult, *, permutations: int = DEFAULT_PERMUTATIONS,
                     seed: int = 0, alpha: float = DEFAULT_ALPHA,
                     max_changed: int = DEFAULT_CHANGED) -> dict[str, Any]:
    """Compare run ``b`` against run ``a`` (A is the baseline); a JSON-able document."""
    from tooldisc.errors import UsageError

    if [q.qid for q in a.queries] != [q.qid for q in b.queries] or a.cutoff != b.cutoff:
        raise UsageError("compare needs two runs over the same gold queries at the same K")
    measures = eval_measures(a.cutoff)
    sa = score_run(a, measures)
    sb = score_run(b, measures)
    tests = []
    for i, m in enumerate(measures):
        qids = list(sa.values[m])
        lower = m.NAME in LOWER_IS_BETTER
        t = paired_test([sa.values[m][q] for q in qids], [sb.values[m][q] for q in qids],
                        lower_is_better=lower, permutations=permutations, seed=seed + i)
        tests.append((m, t, lower))
    p_rand = holm([t.p_randomization for _, t, _ in tests])
    p_t = holm([t.p_ttest for _, t, _ in tests])
    rows = []
    for (m, t, lower), pr, pt in zip(tests, p_rand, p_t, strict=True):
        rows.append({
            "measure": str(m), "n": t.n, "a": number(t.mean_a), "b": number(t.mean_b),
            "delta": number(t.delta) if t.n else None, "better": "lower" if lower else "higher",
            "wins": t.wins, "ties": t.ties, "losses": t.losses,
            "p_randomization": number(t.p_randomization), "p_randomization_holm": number(pr),
            "p_ttest": number(t.p_ttest), "p_ttest_holm": number(pt), "exact": t.exact,
            "verdict": _verdict(t.n, t.discordant, t.delta if t.n else 0.0, pr, lower, alpha),
        })
    changed = _changed(a, b, sa, sb)
    n = len(a.gold)
    small = [r["measure"] for r in rows if r["verdict"] == "too small to tell"]
    return {
        "schema_version": 1,
        "queries": n,
        "matched": sum(1 for q in a.gold.queries if q.matched),
        "k": a.k,
        "cutoff": a.cutoff,
        "context": a.context.to_dict(),
        "a": {"source": a.config.source, "hash": a.config.hash},
        "b": {"source": b.config.source, "hash": b.config.hash},
        "permutations": permutations,
        "seed": seed,
        "alpha": alpha,
        "measures": rows,
        "too_small": small,
        "changed_count": len(changed),
        "changed": changed[:max_changed],
        "notes": list(dict.fromkeys([*a.catalog.notes, *a.gold.notes])),
    }


def _changed(a: RunResult, b: RunResult, sa: Any, sb: Any) -> list[dict[str, Any]]:
    """Queries whose offer differs, the largest nDCG moves first, then by id."""
    from tooldisc.metrics.measures import NDCG, Hit

    nd, hit = NDCG(a.cutoff), Hit(a.cutoff)
    out = []
    for q, ra, rb in zip(a.gold.queries, a.queries, b.queries, strict=True):
        if ra.names == rb.names:
            continue
        da, db = sa.values[nd].get(q.id), sb.values[nd].get(q.id)
        out.append({
            "id": q.id, "query": q.query, "expected": list(q.primary_expected_tools),
            "a": list(ra.names[:5]), "b": list(rb.names[:5]),
            "hit_a": sa.values[hit].get(q.id), "hit_b": sb.values[hit].get(q.id),
            "ndcg_a": number(da) if da is not None else None, "ndcg_b": number(db) if db is not None else None,
        })
    out.sort(key=lambda c: (-abs((c["ndcg_b"] or 0.0) - (c["ndcg_a"] or 0.0)), c["id"]))
    return out
