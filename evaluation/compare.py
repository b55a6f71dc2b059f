"""Two evaluations on the same queries: per-measure deltas, whether they are real, what moved.

Both runs share the gold set and K (and normally the catalog and context), so every
measure is compared query by query (paired). For each measure: the mean of A and B,
win/tie/loss counts, a seeded paired randomization test and a paired t-test, with
Holm's correction across all measures compared (one family). A measure whose sample
cannot support a verdict — fewer than 30 queries in its domain, or fewer than 20
queries that moved — says "too small to tell" instead of a p-value-shaped guess.

The changed-queries table is read from the two runs' per-query tables, so it shows the
same offers and values a notebook sees in ``run.per_query``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooldisc.evaluation.api import EvalRun, score_eval
from tooldisc.evaluation.run import RunResult, eval_measures
from tooldisc.evaluation.significance import holm, paired_test
from tooldisc.evaluation.summary import number
from tooldisc.metrics.measures import MEASURES

if TYPE_CHECKING:
    import polars as pl

# Measures where a smaller value is the better one (risks and costs).
LOWER_IS_BETTER = frozenset(cls.NAME for cls in MEASURES if cls.BETTER == "lower")
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


@dataclass(frozen=True, eq=False)
class Comparison:
    """Run ``b`` against run ``a`` (A is the baseline).

    ``measures`` has one row per eval measure (means, delta, win/tie/loss, p-values raw
    and Holm-adjusted, verdict); ``paired`` one row per query with each run's offer and
    measure values side by side (``offered_a``, ``offered_b``, ``nDCG_a``…).
    """

    a: EvalRun
    b: EvalRun
    measures: pl.DataFrame
    paired: pl.DataFrame
    permutations: int
    seed: int
    alpha: float

    @property
    def changed(self) -> pl.DataFrame:
        """Queries whose offer differs, the largest nDCG moves first, then by id."""
        import polars as pl

        moved = (pl.col("nDCG_b").fill_null(0.0) - pl.col("nDCG_a").fill_null(0.0)).abs()
        return (self.paired.filter(pl.col("offered_a") != pl.col("offered_b"))
                .with_columns(moved.alias("_moved")).sort(["_moved", "id"], descending=[True, False])
                .drop("_moved"))

    @property
    def worse(self) -> tuple[str, ...]:
        """Measures on which B is significantly worse than A (``compare --fail-if-worse``)."""
        return tuple(r["measure"] for r in self.measures.iter_rows(named=True) if r["verdict"] == "A better")

    @property
    def better(self) -> tuple[str, ...]:
        """Measures on which B is significantly better than A."""
        return tuple(r["measure"] for r in self.measures.iter_rows(named=True) if r["verdict"] == "B better")

    def document(self, *, max_changed: int = DEFAULT_CHANGED) -> dict[str, Any]:
        """The JSON-able document ``tooldisc compare --format json`` prints."""
        a, b = self.a, self.b
        rows = [{
            "measure": r["measure"], "n": r["n"], "a": number(r["a"]), "b": number(r["b"]),
            "delta": number(r["delta"]) if r["n"] else None, "better": r["better"],
            "wins": r["wins"], "ties": r["ties"], "losses": r["losses"],
            "p_randomization": number(r["p_randomization"]), "p_randomization_holm": number(r["p_randomization_holm"]),
            "p_ttest": number(r["p_ttest"]), "p_ttest_holm": number(r["p_ttest_holm"]), "exact": r["exact"],
            "verdict": r["verdict"],
        } for r in self.measures.iter_rows(named=True)]
        changed = self.changed
        listed = [{
            "id": c["id"], "query": c["query"], "expected": c["expected"], "a": c["offered_a"][:5],
            "b": c["offered_b"][:5], "hit_a": c["hit_a"], "hit_b": c["hit_b"],
            "ndcg_a": number(c["nDCG_a"]) if c["nDCG_a"] is not None else None,
            "ndcg_b": number(c["nDCG_b"]) if c["nDCG_b"] is not None else None,
        } for c in changed.head(max_changed).iter_rows(named=True)]
        notes = [*a.catalog.notes, *a.gold.notes]
        if a.catalog.hash != b.catalog.hash:
            notes.append(f"A and B ran on different catalogs ({a.catalog.source} and {b.catalog.source})")
        if a.context != b.context:
            notes.append("A and B ran with different contexts; the context shown is A's")
        return {
            "schema_version": 1,
            "queries": len(a.gold),
            "matched": sum(1 for q in a.gold.queries if q.matched),
            "k": a.k,
            "cutoff": a.cutoff,
            "context": a.context.to_dict(),
            "a": {"source": a.config.source, "hash": a.config.hash},
            "b": {"source": b.config.source, "hash": b.config.hash},
            "permutations": self.permutations,
            "seed": self.seed,
            "alpha": self.alpha,
            "measures": rows,
            "too_small": [r["measure"] for r in rows if r["verdict"] == "too small to tell"],
            "worse": list(self.worse),
            "changed_count": changed.height,
            "changed": listed,
            "notes": list(dict.fromkeys(notes)),
        }


def _as_eval(run: EvalRun | RunResult) -> EvalRun:
    return run if isinstance(run, EvalRun) else score_eval(run)


def compare(run_a: EvalRun | RunResult, run_b: EvalRun | RunResult, *, permutations: int = DEFAULT_PERMUTATIONS,
            seed: int = 0, alpha: float = DEFAULT_ALPHA) -> Comparison:
    """Compare run ``b`` against run ``a`` with paired tests; both must share the gold set and K.

    Runs from :func:`tooldisc.evaluate` (or offers from ``run_discovery``) with other
    weights, another catalog or another context compare fine; another gold set or K
    is a :class:`~tooldisc.errors.UsageError`, since nothing would be paired.
    """
    import polars as pl

    from tooldisc.errors import UsageError
    from tooldisc.evaluation.per_query import MEASURE_COLUMNS

    a, b = _as_eval(run_a), _as_eval(run_b)
    if a.gold.hash != b.gold.hash or a.cutoff != b.cutoff:
        raise UsageError("compare needs two runs over the same gold queries at the same K")
    if not 0.0 <= alpha <= 1.0:
        raise UsageError(f"The 'alpha' parameter must be a float in the range [0, 1]. Got {alpha!r} instead.")
    measures = eval_measures(a.cutoff)
    tests = []
    for i, m in enumerate(measures):
        va, vb = a.scores.values[m], b.scores.values[m]
        qids = list(va)
        t = paired_test([va[q] for q in qids], [vb[q] for q in qids], lower_is_better=m.lower_is_better,
                        permutations=permutations, seed=seed + i)
        tests.append((m, t))
    p_rand = holm([t.p_randomization for _, t in tests])
    p_t = holm([t.p_ttest for _, t in tests])
    table = pl.DataFrame([{
        "measure": str(m), "n": t.n, "a": t.mean_a, "b": t.mean_b, "delta": t.delta,
        "better": m.BETTER, "wins": t.wins, "ties": t.ties, "losses": t.losses,
        "p_randomization": t.p_randomization, "p_randomization_holm": pr, "p_ttest": t.p_ttest,
        "p_ttest_holm": pt, "exact": t.exact,
        "verdict": _verdict(t.n, t.discordant, t.delta if t.n else 0.0, pr, m.lower_is_better, alpha),
    } for (m, t), pr, pt in zip(tests, p_rand, p_t, strict=True)])
    sides = ["offered", *MEASURE_COLUMNS]
    paired = pl.concat([
        a.per_query.select("id", "query", "expected", *(pl.col(c).alias(f"{c}_a") for c in sides)),
        b.per_query.select(pl.col(c).alias(f"{c}_b") for c in sides),
    ], how="horizontal")
    return Comparison(a, b, table, paired, permutations, seed, alpha)


def compare_document(a: EvalRun | RunResult, b: EvalRun | RunResult, *, permutations: int = DEFAULT_PERMUTATIONS,
                     seed: int = 0, alpha: float = DEFAULT_ALPHA,
                     max_changed: int = DEFAULT_CHANGED) -> dict[str, Any]:
    """Compare run ``b`` against run ``a`` (A is the baseline); a JSON-able document."""
    return compare(a, b, permutations=permutations, seed=seed, alpha=alpha).document(max_changed=max_changed)


def shared_k(config_a: Any, config_b: Any, k: int | str | None) -> int | str:
    """The K both configs are compared at: ``k`` if given, else their common configured K.

    Measures are named by their cutoff, so two configs whose K (or, for ``auto``,
    whose ``adaptive.max_k``) differ cannot be paired without an explicit ``--k``.
    """
    from tooldisc.errors import UsageError

    if k is None:
        if config_a.k != config_b.k:
            raise UsageError(f"A and B set different K ({config_a.k} and {config_b.k}); pass --k to compare at one K")
        k = config_a.k
    if k == "auto" and config_a.adaptive.max_k != config_b.adaptive.max_k:
        raise UsageError("with --k auto, A and B must share adaptive.max_k so their measures share a cutoff")
    return k
