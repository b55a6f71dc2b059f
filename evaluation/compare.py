"""Runs on the same queries side by side: per-measure values, whether they differ, what moved.

Every arm shares the gold set and K (and normally the catalog and context), so each
measure is compared query by query (paired) between the first arm, the baseline, and
every other arm. For each measure and arm: the means, win/tie/loss counts, and three
paired tests, each Holm-corrected across every measure and arm compared (one family of
m tests):

- the **exact sign test** over the queries that moved decides the verdict (B better,
  A better, no significant difference). A measure is "too small to tell" only when it
  cannot reach significance at all: no query in its domain, or so few moved that even
  all of them moving one way gives p >= alpha/m;
- the seeded paired **randomization test** (Monte Carlo, ``permutations`` sign flips,
  at least 10,000 by default; exact enumeration up to 16 moved queries) and the paired
  **t-test** are reported beside it as second opinions.

Safety measures (``forbidden@K``, ``false_abstention``) also report a **one-way**
regression: an arm that made any query worse and none better, whatever the count;
``compare --fail-if-worse`` fails on it.

Each arm's biggest wins and worst losses per headline measure are listed (with
counts), read from the arms' per-query tables, so they show the same offers and values
a notebook sees in ``run.per_query``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooldisc.evaluation.api import EvalRun, score_eval
from tooldisc.evaluation.bootstrap import DEFAULT_RESAMPLES
from tooldisc.evaluation.compare_document import (
    DEFAULT_CHANGED,
    DEFAULT_MOVES,
    HEADLINE,
    MAX_ARMS,
    SAFETY,
    SUFFIXES,
    TOO_SMALL,
    Comparison,
    base_name,
    marker,
)
from tooldisc.evaluation.run import RunResult, eval_measures
from tooldisc.evaluation.significance import (
    holm,
    paired_test,
    sign_test_floor,
)
from tooldisc.limits import check_count
from tooldisc.metrics.measures import MEASURES
from tooldisc.params import Interval, checked

if TYPE_CHECKING:
    import polars as pl

    from tooldisc.metrics.measures import Measure

# Measures where a smaller value is the better one (risks and costs).
LOWER_IS_BETTER = frozenset(cls.NAME for cls in MEASURES if cls.BETTER == "lower")
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_ALPHA = 0.05
NO_DIFFERENCE = "no significant difference"


def _verdict(n: int, wins: int, losses: int, p_holm: float, level: float, alpha: float) -> str:
    """The sign test's verdict; ``level`` is alpha/m, the smallest p Holm could ever accept."""
    if n == 0:
        return TOO_SMALL
    if not math.isnan(p_holm) and p_holm < alpha and wins != losses:
        return "B better" if wins > losses else "A better"
    moved = wins + losses
    if moved and sign_test_floor(moved) >= level:
        return TOO_SMALL
    return NO_DIFFERENCE


def _as_eval(run: EvalRun | RunResult) -> EvalRun:
    return run if isinstance(run, EvalRun) else score_eval(run)


def _default_names(runs: Sequence[EvalRun]) -> tuple[str, ...]:
    return tuple(chr(ord("A") + i) for i in range(len(runs)))


def check_names(names: Sequence[str], count: int) -> tuple[str, ...]:
    """Arm labels: one per run, distinct, non-empty strings."""
    from tooldisc.errors import UsageError

    out = tuple(names)
    if len(out) != count:
        raise UsageError(f"The 'names' parameter must name each of the {count} runs. Got {len(out)} names instead.")
    for n in out:
        if not isinstance(n, str) or not n.strip():
            raise UsageError(f"an arm name must be a non-empty string; got {n!r}")
    dup = next((n for n in out if out.count(n) > 1), None)
    if dup is not None:
        raise UsageError(f"arm name {dup!r} is given twice; arms must be told apart (NAME=…)")
    return out


def compare(*runs: EvalRun | RunResult, names: Sequence[str] | None = None,
            permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, alpha: float = DEFAULT_ALPHA,
            resamples: int = DEFAULT_RESAMPLES) -> Comparison:
    """Compare every run against the first (the baseline) with paired tests; all must share the gold set and K.

    ``runs`` are two or more :func:`tooldisc.evaluate` results (or offers from
    ``run_discovery``, or a TREC run file read by ``tooldisc.evaluate(..., run=…)``);
    other weights, another catalog or another context compare fine, another gold set
    or K is a :class:`~tooldisc.errors.UsageError`, since nothing would be paired.
    ``names`` label the arms (default ``A``, ``B``, ``C``…). Two arms give the same
    tables as before, plus ``table`` and ``moves``. Each arm's change of each measure
    (``delta``) comes with its 95 % interval (``delta_low``, ``delta_high``): a paired
    bootstrap over queries, ``resamples`` draws seeded by ``seed``.
    """
    import polars as pl

    from tooldisc.errors import UsageError
    from tooldisc.evaluation.per_query import MEASURE_COLUMNS

    if len(runs) < 2:
        raise UsageError(f"compare needs at least two runs (a baseline and one to compare); got {len(runs)}")
    if len(runs) > MAX_ARMS:
        raise UsageError(f"compare takes at most {MAX_ARMS} runs; got {len(runs)}")
    checked(Interval(float, 0, 1), alpha, "alpha", UsageError)
    checked(Interval(int, 1, None, strict=True), permutations, "permutations", UsageError)
    check_count("resamples", resamples, "The 'resamples' parameter")
    evals = tuple(_as_eval(r) for r in runs)
    base = evals[0]
    for other in evals[1:]:
        if other.gold.hash != base.gold.hash or other.cutoff != base.cutoff:
            raise UsageError("compare needs runs over the same gold queries at the same K")
    arm_names = check_names(names, len(evals)) if names is not None else _default_names(evals)
    measures = eval_measures(base.cutoff)
    tests: list[tuple[int, Measure, Any]] = []
    for j, run in enumerate(evals[1:], 1):
        for i, m in enumerate(measures):
            va, vb = base.scores.values[m], run.scores.values[m]
            qids = list(va)
            t = paired_test([va[q] for q in qids], [vb[q] for q in qids], lower_is_better=m.lower_is_better,
                            permutations=permutations, seed=seed + (j - 1) * len(measures) + i)
            tests.append((j, m, t))

    def family(get: Any) -> list[float]:
        return holm([get(t) if t.n else math.nan for _, _, t in tests])

    p_sign_raw = [t.p_sign if t.n else math.nan for _, _, t in tests]
    p_sign = holm(p_sign_raw)
    p_rand = family(lambda t: t.p_randomization)
    p_t = family(lambda t: t.p_ttest)
    m_tests = sum(1 for p in p_sign_raw if not math.isnan(p))
    level = alpha / m_tests if m_tests else 0.0
    lows, highs = _intervals(evals, measures, resamples, seed)
    rows = []
    for (j, m, t), ps_raw, ps, pr, pt, lo, hi in zip(tests, p_sign_raw, p_sign, p_rand, p_t, lows, highs,
                                                      strict=True):
        verdict = _verdict(t.n, t.wins, t.losses, ps, level, alpha)
        rows.append({
            "arm": arm_names[j], "measure": str(m), "n": t.n, "a": t.mean_a, "b": t.mean_b,
            "delta": t.delta if t.n else math.nan, "delta_low": float(lo), "delta_high": float(hi),
            "better": m.BETTER, "wins": t.wins, "ties": t.ties,
            "losses": t.losses, "p_sign": ps_raw, "p_sign_holm": ps,
            "p_randomization": t.p_randomization if t.n else math.nan, "p_randomization_holm": pr,
            "p_ttest": t.p_ttest if t.n else math.nan, "p_ttest_holm": pt, "exact": t.exact, "verdict": verdict,
            "one_way": base_name(str(m)) in SAFETY and t.losses > 0 and t.wins == 0,
        })
    long = pl.DataFrame(rows, schema={
        "arm": pl.String, "measure": pl.String, "n": pl.Int64, "a": pl.Float64, "b": pl.Float64,
        "delta": pl.Float64, "delta_low": pl.Float64, "delta_high": pl.Float64, "better": pl.String,
        "wins": pl.Int64, "ties": pl.Int64, "losses": pl.Int64,
        "p_sign": pl.Float64, "p_sign_holm": pl.Float64, "p_randomization": pl.Float64,
        "p_randomization_holm": pl.Float64, "p_ttest": pl.Float64, "p_ttest_holm": pl.Float64,
        "exact": pl.Boolean, "verdict": pl.String, "one_way": pl.Boolean}, strict=False)
    sides = ["offered", "forbidden_offered", *MEASURE_COLUMNS]
    paired = pl.concat([
        base.per_query.select("id", "query", "expected"),
        *[run.per_query.select(pl.col(c).alias(f"{c}_{SUFFIXES[j]}") for c in sides)
          for j, run in enumerate(evals)],
    ], how="horizontal")
    wide = _wide(long, arm_names)
    moves = _moves(paired, arm_names, measures)
    return Comparison(evals, arm_names, long, wide, paired, moves, permutations, seed, alpha, m_tests, resamples)


def _intervals(evals: Sequence[EvalRun], measures: Sequence[Measure], resamples: int,
               seed: int) -> tuple[list[float], list[float]]:
    """Every (arm, measure) change's 95 % bootstrap interval, in the order of the tests (arm, then measure).

    All columns are resampled together over the same drawn queries
    (:func:`~tooldisc.evaluation.bootstrap.paired_intervals`).
    """
    import numpy as np

    from tooldisc.evaluation.bootstrap import paired_intervals

    base = evals[0]
    qids = [q.id for q in base.gold.queries]
    diffs, domains = [], []
    for run in evals[1:]:
        for m in measures:
            va, vb = base.scores.values[m], run.scores.values[m]
            domains.append([q in va for q in qids])
            diffs.append([vb[q] - va[q] if q in va else 0.0 for q in qids])
    low, high = paired_intervals(np.array(diffs, dtype=np.float64).T.reshape(len(qids), len(diffs)),
                                 np.array(domains, dtype=bool).T.reshape(len(qids), len(domains)),
                                 resamples=resamples, seed=seed)
    return low.tolist(), high.tolist()


def _wide(long: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    """One row per measure: every arm's value, then each other arm's marker and win/tie/loss."""
    import polars as pl

    by_measure: dict[str, dict[str, Any]] = {}
    for r in long.iter_rows(named=True):
        row = by_measure.setdefault(r["measure"], {"measure": r["measure"], "better": r["better"], names[0]: r["a"]})
        row[r["arm"]] = r["b"]
        row[f"{r['arm']} marker"] = marker(r["verdict"], r["one_way"])
        row[f"{r['arm']} win/tie/loss"] = f"{r['wins']}/{r['ties']}/{r['losses']}"
    schema: dict[str, Any] = {"measure": pl.String, "better": pl.String, **{n: pl.Float64 for n in names}}
    for n in names[1:]:
        schema[f"{n} marker"] = pl.String
        schema[f"{n} win/tie/loss"] = pl.String
    return pl.DataFrame(list(by_measure.values()), schema=schema, strict=False)


def _moves(paired: pl.DataFrame, names: Sequence[str], measures: Sequence[Measure]) -> pl.DataFrame:
    """Every query each arm moved on a headline measure: losses first, worst first, then wins, biggest first."""
    import polars as pl

    frames = []
    for j in range(1, len(names)):
        s = SUFFIXES[j]
        for m in measures:
            bare = base_name(str(m))
            if bare not in HEADLINE:
                continue
            sign = -1.0 if m.lower_is_better else 1.0
            gain = (pl.col(f"{bare}_{s}") - pl.col(f"{bare}_a")) * sign
            part = (paired.filter(pl.col(f"{bare}_a").is_not_null() & pl.col(f"{bare}_{s}").is_not_null())
                    .with_columns(gain.alias("_gain"))
                    .filter(pl.col("_gain").abs() > 1e-9)
                    .select(pl.lit(names[j]).alias("arm"), pl.lit(str(m)).alias("measure"),
                            pl.when(pl.col("_gain") < 0).then(pl.lit("loss")).otherwise(pl.lit("win")).alias("kind"),
                            "id", "query", "expected", pl.col("offered_a"), pl.col(f"offered_{s}").alias("offered_b"),
                            pl.col(f"forbidden_offered_{s}").alias("forbidden_offered_b"),
                            pl.col(f"{bare}_a").alias("value_a"), pl.col(f"{bare}_{s}").alias("value_b"),
                            pl.col("_gain").abs().alias("_size")))
            frames.append(part.sort(["kind", "_size", "id"], descending=[False, True, False]).drop("_size"))
    schema = {"arm": pl.String, "measure": pl.String, "kind": pl.String, "id": pl.String, "query": pl.String,
              "expected": pl.List(pl.String), "offered_a": pl.List(pl.String), "offered_b": pl.List(pl.String),
              "forbidden_offered_b": pl.List(pl.String), "value_a": pl.Float64, "value_b": pl.Float64}
    if not frames:
        return pl.DataFrame(schema=schema)
    return pl.concat(frames, how="vertical")


def compare_document(a: EvalRun | RunResult, b: EvalRun | RunResult, *more: EvalRun | RunResult,
                     names: Sequence[str] | None = None, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0,
                     alpha: float = DEFAULT_ALPHA, max_changed: int = DEFAULT_CHANGED,
                     max_moves: int = DEFAULT_MOVES, by: Sequence[str] | None = None,
                     resamples: int = DEFAULT_RESAMPLES) -> dict[str, Any]:
    """Compare every run against ``a`` (the baseline); a JSON-able document."""
    cmp = compare(a, b, *more, names=names, permutations=permutations, seed=seed, alpha=alpha, resamples=resamples)
    return cmp.document(max_changed=max_changed, max_moves=max_moves, by=by)


def shared_k(*configs: Any, k: int | str | None = None) -> int | str:
    """The K every config arm is compared at: ``k`` if given, else their common configured K.

    Measures are named by their cutoff, so configs whose K (or, for ``auto``, whose
    ``adaptive.max_k``) differ cannot be paired without an explicit ``--k``.
    """
    from tooldisc.errors import UsageError

    cfgs = list(configs)
    if k is None:
        ks = sorted({c.k for c in cfgs}, key=str)
        if len(ks) > 1:
            raise UsageError(f"the arms set different K ({', '.join(map(str, ks))}); pass --k to compare at one K")
        k = ks[0] if ks else None
    if k == "auto" and len({c.adaptive.max_k for c in cfgs}) > 1:
        raise UsageError("with --k auto, the arms must share adaptive.max_k so their measures share a cutoff")
    if k is None:
        raise UsageError("no config arm sets K; pass --k")
    return k
