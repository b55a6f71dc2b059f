"""A comparison's result (:class:`Comparison`) and its document: what ``tooldisc compare --format json`` prints.

Split from :mod:`tooldisc.evaluation.compare` (which computes the tests and builds the
record) because the document is a view: arms, the one table, the per-arm tests, each
arm's wins and losses per headline measure, the slices' regressions, and for two arms
every key the two-arm document always had. The record lives here with its view, so the
view never imports the module that computes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooldisc.evaluation.bootstrap import DEFAULT_RESAMPLES, LEVEL, METHOD
from tooldisc.evaluation.run import eval_measures
from tooldisc.evaluation.significance import holm, sign_test_needs, sign_test_p
from tooldisc.evaluation.summary import number

if TYPE_CHECKING:
    import polars as pl

    from tooldisc.evaluation.api import EvalRun

DEFAULT_CHANGED = 20
DEFAULT_MOVES = 10
# The README's headline measures: each gets its list of wins and losses.
HEADLINE: tuple[str, ...] = ("hit", "MRR", "nDCG", "no_match_success", "false_abstention", "forbidden")
# Safety measures: any query made worse while none is made better fails --fail-if-worse.
SAFETY: tuple[str, ...] = ("forbidden", "false_abstention")
TOO_SMALL = "too small to tell"

MAX_ARMS = 26
# Per-arm column suffixes of ``paired``: ``_a`` is the baseline (as in a two-arm comparison).
SUFFIXES = tuple(chr(ord("a") + i) for i in range(MAX_ARMS))
# Table markers: the arm differs significantly from the baseline, or cannot tell.
MARK_BETTER, MARK_WORSE, MARK_SMALL, MARK_ONE_WAY = "▲", "▼", "?", "!"


def base_name(name: str) -> str:
    """A measure's name without its cutoff (``nDCG@15`` → ``nDCG``)."""
    return name.split("@", 1)[0]


@dataclass(frozen=True, eq=False)
class Comparison:
    """Every arm of ``runs`` against the first (the baseline), query by query.

    ``names`` label the arms. ``measures`` has one row per non-baseline arm and measure
    (means, delta with its 95 % paired-bootstrap interval ``delta_low``–``delta_high``,
    win/tie/loss, the sign test that decides and the randomization and t-tests beside
    it, raw and Holm-adjusted, verdict, ``one_way``); ``table`` one row
    per measure with every arm's value, its marker against the baseline and its
    win/tie/loss; ``paired`` one row per query with each arm's offer and measure values
    side by side (suffix ``_a`` for the baseline, ``_b``, ``_c``… for the others, in arm
    order: ``offered_a``, ``nDCG_b``…); ``moves`` one row per query that moved on a
    headline measure, per arm (worst losses and biggest wins first).
    """

    runs: tuple[EvalRun, ...]
    names: tuple[str, ...]
    measures: pl.DataFrame
    table: pl.DataFrame
    paired: pl.DataFrame
    moves: pl.DataFrame
    permutations: int
    seed: int
    alpha: float
    tests: int  # m: the tests Holm corrects over (measures with queries × arms against the baseline)
    resamples: int = DEFAULT_RESAMPLES  # bootstrap draws behind each delta's 95 % interval

    @property
    def intervals(self) -> pl.DataFrame:
        """Each arm's change of each measure against the baseline with its 95 % interval:
        ``arm``, ``measure``, ``delta``, ``delta_low``, ``delta_high`` (a paired bootstrap)."""
        return self.measures.select("arm", "measure", "delta", "delta_low", "delta_high")

    @property
    def a(self) -> EvalRun:
        """The baseline run."""
        return self.runs[0]

    @property
    def b(self) -> EvalRun:
        """The second run (the candidate of a two-arm comparison)."""
        return self.runs[1]

    def _arm(self, arm: str | None) -> tuple[int, str]:
        from tooldisc.errors import UsageError

        if arm is None:
            return 1, self.names[1]
        if arm not in self.names[1:]:
            raise UsageError(f"no arm {arm!r} to compare with the baseline; arms: {', '.join(self.names[1:])}")
        i = self.names.index(arm, 1)
        return i, arm

    def changed_for(self, arm: str | None = None) -> pl.DataFrame:
        """Queries whose offer differs between the baseline and ``arm`` (default: the second),
        the largest nDCG moves first, then by id."""
        import polars as pl

        i, _ = self._arm(arm)
        s = SUFFIXES[i]
        moved = (pl.col(f"nDCG_{s}").fill_null(0.0) - pl.col("nDCG_a").fill_null(0.0)).abs()
        return (self.paired.filter(pl.col("offered_a") != pl.col(f"offered_{s}"))
                .with_columns(moved.alias("_moved")).sort(["_moved", "id"], descending=[True, False])
                .drop("_moved"))

    @property
    def changed(self) -> pl.DataFrame:
        """Queries whose offer differs between the first two arms, the largest nDCG moves first."""
        return self.changed_for(None)

    def _rows(self, column: str, value: Any) -> list[dict[str, Any]]:
        return [r for r in self.measures.iter_rows(named=True) if r[column] == value]

    @property
    def worse(self) -> tuple[str, ...]:
        """Measures on which an arm is significantly worse than the baseline (sign test, Holm)."""
        return tuple(dict.fromkeys(r["measure"] for r in self._rows("verdict", "A better")))

    @property
    def better(self) -> tuple[str, ...]:
        """Measures on which an arm is significantly better than the baseline."""
        return tuple(dict.fromkeys(r["measure"] for r in self._rows("verdict", "B better")))

    @property
    def too_small(self) -> tuple[str, ...]:
        """Measures some arm cannot be judged on at all (no query in the domain, or too few moved)."""
        return tuple(dict.fromkeys(r["measure"] for r in self._rows("verdict", TOO_SMALL)))

    @property
    def regressions(self) -> pl.DataFrame:
        """What ``--fail-if-worse`` fails on: ``arm``, ``measure``, ``reason`` (significant or one-way)."""
        import polars as pl

        rows = []
        for r in self.measures.iter_rows(named=True):
            if r["verdict"] == "A better":
                rows.append({"arm": r["arm"], "measure": r["measure"], "reason": "significantly worse"})
            elif r["one_way"]:
                rows.append({"arm": r["arm"], "measure": r["measure"],
                             "reason": f"one-way: {r['losses']} quer{'y' if r['losses'] == 1 else 'ies'} made worse, "
                                       "none better"})
        return pl.DataFrame(rows, schema={"arm": pl.String, "measure": pl.String, "reason": pl.String})

    def losses(self, measure: str, arm: str | None = None) -> pl.DataFrame:
        """Queries ``arm`` (default: the second) made worse on ``measure`` (``nDCG`` or ``nDCG@15``), worst first."""
        return self._moved(measure, arm, "loss")

    def wins(self, measure: str, arm: str | None = None) -> pl.DataFrame:
        """Queries ``arm`` (default: the second) made better on ``measure``, biggest first."""
        return self._moved(measure, arm, "win")

    def _moved(self, measure: str, arm: str | None, kind: str) -> pl.DataFrame:
        import polars as pl

        from tooldisc.errors import UsageError

        _, name = self._arm(arm)
        bare = base_name(measure)
        if bare not in HEADLINE:
            raise UsageError(f"wins and losses are listed for the headline measures ({', '.join(HEADLINE)}); "
                             f"got {measure!r}")
        return self.moves.filter((pl.col("arm") == name) & (pl.col("measure").str.split("@").list.first() == bare)
                                 & (pl.col("kind") == kind))

    def slice_regressions(self, by: Sequence[str] | None) -> tuple[pl.DataFrame, tuple[str, ...]]:
        """Each slice's regressions against the baseline, and the slice warnings.

        Per slice field, every (value, arm, measure) is a sign test over that slice's
        queries, Holm-corrected across the field's tests; a row is a slice where an arm
        is significantly worse, or (safety measures) made a query worse and none better.
        """
        return slice_regressions(self, by)

    def document(self, *, max_changed: int = DEFAULT_CHANGED, max_moves: int = DEFAULT_MOVES,
                 by: Sequence[str] | None = None) -> dict[str, Any]:
        """The JSON-able document ``tooldisc compare --format json`` prints.

        Two arms keep every key of the two-arm document (``a``, ``b``, ``measures``,
        ``too_small``, ``worse``, ``changed_count``, ``changed``); every comparison also
        has ``arms``, ``baseline``, ``table``, ``regressions``, ``moves`` and, with
        ``by``, ``slices``.
        """
        return comparison_document(self, max_changed=max_changed, max_moves=max_moves, by=by)


def marker(verdict: str, one_way: bool) -> str:
    """The table's mark for an arm's value: ▲ / ▼ significantly better / worse, ? too small, ! one-way."""
    mark = {"B better": MARK_BETTER, "A better": MARK_WORSE, TOO_SMALL: MARK_SMALL}.get(verdict, "")
    return mark + (MARK_ONE_WAY if one_way and verdict != "A better" else "")



def comparison_document(cmp: Comparison, *, max_changed: int = DEFAULT_CHANGED, max_moves: int = DEFAULT_MOVES,
                        by: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON-able document ``tooldisc compare --format json`` prints for ``cmp``.

    Two arms keep every key of the two-arm document (``a``, ``b``, ``measures``,
    ``too_small``, ``worse``, ``changed_count``, ``changed``); every comparison also
    has ``arms``, ``baseline``, ``table``, ``regressions``, ``moves``, ``bootstrap``
    (how each ``delta``'s interval ``delta_low``–``delta_high`` was drawn) and, with
    ``by``, ``slices``.
    """
    a = cmp.a
    rows = [_measure_row(r) for r in cmp.measures.iter_rows(named=True)]
    doc: dict[str, Any] = {
        "schema_version": 2,
        "queries": len(a.gold),
        "matched": sum(1 for q in a.gold.queries if q.matched),
        "k": a.k,
        "cutoff": a.cutoff,
        "context": a.context.to_dict(),
        "arms": [_arm_doc(name, run) for name, run in zip(cmp.names, cmp.runs, strict=True)],
        "baseline": cmp.names[0],
        "permutations": cmp.permutations,
        "seed": cmp.seed,
        "alpha": cmp.alpha,
        "tests": cmp.tests,
        "sign_test_needs": sign_test_needs(cmp.alpha / cmp.tests) if cmp.tests else None,
        "bootstrap": {"method": METHOD, "level": LEVEL, "resamples": cmp.resamples, "seed": cmp.seed},
        "table": _table_doc(cmp),
        "measures": rows,
        "regressions": cmp.regressions.to_dicts(),
        "moves": _moves_doc(cmp, max_moves),
    }
    notes = [*a.catalog.notes, *a.gold.notes]
    for name, run in zip(cmp.names, cmp.runs, strict=True):
        if run.result.run_file is not None:
            notes += [n.removeprefix("note: ") for n in run.result.run_file.notes]
        elif run.catalog.hash != a.catalog.hash:
            notes.append(f"{name} ran on another catalog ({run.catalog.source}) than the baseline "
                         f"({a.catalog.source})")
        if run.context != a.context:
            notes.append(f"{name} ran with another context than the baseline; the context shown is the "
                         "baseline's")
    if by is not None:
        regressions, warnings = cmp.slice_regressions(by)
        doc["slices"] = {"by": list(by), "regressions": [
            {**r, **{k: number(r[k]) for k in ("a", "b", "p_sign", "p_sign_holm")}}
            for r in regressions.to_dicts()]}
        notes += [w.removeprefix("warning: ") for w in warnings]
    if len(cmp.runs) == 2:
        changed = cmp.changed
        doc.update({
            "a": _source(a), "b": _source(cmp.b),
            "too_small": [r["measure"] for r in rows if r["verdict"] == TOO_SMALL],
            "worse": list(cmp.worse),
            "changed_count": changed.height,
            "changed": [{
                "id": c["id"], "query": c["query"], "expected": c["expected"], "a": c["offered_a"][:5],
                "b": c["offered_b"][:5], "hit_a": c["hit_a"], "hit_b": c["hit_b"],
                "ndcg_a": number(c["nDCG_a"]) if c["nDCG_a"] is not None else None,
                "ndcg_b": number(c["nDCG_b"]) if c["nDCG_b"] is not None else None,
            } for c in changed.head(max_changed).iter_rows(named=True)],
        })
    doc["notes"] = list(dict.fromkeys(notes))
    return doc




def slice_regressions(cmp: Comparison, by: Sequence[str] | None) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """Each slice's regressions against the baseline, and the slice warnings.

    Per slice field, every (value, arm, measure) is a sign test over that slice's
    queries, Holm-corrected across the field's tests; a row is a slice where an arm
    is significantly worse, or (safety measures) made a query worse and none better.
    """
    import polars as pl

    from tooldisc.evaluation.slices import slice_groups

    sliced = slice_groups(cmp.a.gold, by)
    measures = eval_measures(cmp.a.cutoff)
    rows: list[dict[str, Any]] = []
    for field, groups in sliced.groups.items():
        tests = []
        for value, qids in groups.items():
            for i in range(1, len(cmp.runs)):
                for m in measures:
                    va, vb = cmp.a.scores.values[m], cmp.runs[i].scores.values[m]
                    keys = [q for q in va if q in qids]
                    diffs = [vb[q] - va[q] for q in keys]
                    sign = -1.0 if m.lower_is_better else 1.0
                    wins = sum(1 for d in diffs if sign * d > 1e-9)
                    losses = sum(1 for d in diffs if sign * d < -1e-9)
                    p = sign_test_p(wins, losses) if keys else math.nan
                    base = sum(va[q] for q in keys) / len(keys) if keys else math.nan
                    other = sum(vb[q] for q in keys) / len(keys) if keys else math.nan
                    tests.append((value, len(qids), cmp.names[i], m, len(keys), base, other, wins, losses, p))
        adjusted = holm([t[-1] for t in tests])
        for (value, size, arm, m, n, base, other, wins, losses, p), q in zip(tests, adjusted, strict=True):
            worse = not math.isnan(q) and q < cmp.alpha and losses > wins
            one_way = base_name(str(m)) in SAFETY and losses > 0 and wins == 0
            if worse or one_way:
                rows.append({"field": field, "value": value, "queries": size, "arm": arm, "measure": str(m),
                             "n": n, "a": base, "b": other, "wins": wins, "ties": n - wins - losses,
                             "losses": losses, "p_sign": p, "p_sign_holm": q,
                             "reason": "significantly worse" if worse else "one-way"})
    schema = {"field": pl.String, "value": pl.String, "queries": pl.Int64, "arm": pl.String,
              "measure": pl.String, "n": pl.Int64, "a": pl.Float64, "b": pl.Float64, "wins": pl.Int64,
              "ties": pl.Int64, "losses": pl.Int64, "p_sign": pl.Float64, "p_sign_holm": pl.Float64,
              "reason": pl.String}
    return pl.DataFrame(rows, schema=schema), sliced.warnings



def _source(run: EvalRun) -> dict[str, Any]:
    rf = run.result.run_file
    if rf is not None:
        return {"source": rf.source, "hash": rf.hash}
    return {"source": run.config.source, "hash": run.config.hash}


def _arm_doc(name: str, run: EvalRun) -> dict[str, Any]:
    kind = "run" if run.result.run_file is not None else "config"
    return {"name": name, "kind": kind, **_source(run),
            "learned": run.result.learned_digest[:16] or None if kind == "config" else None}


def _measure_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: r[k] for k in ("arm", "measure", "n", "better", "wins", "ties", "losses", "exact", "verdict",
                             "one_way")}
    out.update({k: number(r[k]) for k in ("a", "b", "p_sign", "p_sign_holm", "p_randomization",
                                          "p_randomization_holm", "p_ttest", "p_ttest_holm")})
    out["delta"] = number(r["delta"]) if r["n"] else None
    out["delta_low"] = number(r["delta_low"]) if r["n"] else None
    out["delta_high"] = number(r["delta_high"]) if r["n"] else None
    return out


def _table_doc(cmp: Comparison) -> list[dict[str, Any]]:
    """One entry per measure: every arm's value, and each other arm's marker and win/tie/loss."""
    by_measure: dict[str, list[dict[str, Any]]] = {}
    for r in cmp.measures.iter_rows(named=True):
        by_measure.setdefault(r["measure"], []).append(r)
    out = []
    for measure, rows in by_measure.items():
        out.append({
            "measure": measure, "better": rows[0]["better"],
            "values": [number(rows[0]["a"]), *[number(r["b"]) for r in rows]],
            "markers": ["", *[marker(r["verdict"], r["one_way"]) for r in rows]],
            "wins": [None, *[r["wins"] for r in rows]],
            "ties": [None, *[r["ties"] for r in rows]],
            "losses": [None, *[r["losses"] for r in rows]],
            "delta": [None, *[number(r["delta"]) if r["n"] else None for r in rows]],
            "delta_low": [None, *[number(r["delta_low"]) if r["n"] else None for r in rows]],
            "delta_high": [None, *[number(r["delta_high"]) if r["n"] else None for r in rows]],
        })
    return out


def _moves_doc(cmp: Comparison, limit: int) -> list[dict[str, Any]]:
    """Per arm and headline measure: how many queries it won and lost, and the first ``limit`` of each."""
    import polars as pl

    out = []
    counts = {(r["arm"], r["measure"]): r for r in cmp.measures.iter_rows(named=True)}
    for name in cmp.names[1:]:
        for measure in (m for m in cmp.measures["measure"].unique(maintain_order=True) if base_name(m) in HEADLINE):
            r = counts[(name, measure)]
            entry: dict[str, Any] = {"arm": name, "measure": measure, "wins": r["wins"], "losses": r["losses"]}
            for kind, key in (("loss", "worst_losses"), ("win", "biggest_wins")):
                part = cmp.moves.filter((pl.col("arm") == name) & (pl.col("measure") == measure)
                                        & (pl.col("kind") == kind)).head(limit)
                entry[key] = [{
                    "id": m["id"], "query": m["query"], "expected": m["expected"], "a": m["offered_a"][:5],
                    "b": m["offered_b"][:5], "value_a": number(m["value_a"]), "value_b": number(m["value_b"]),
                    "forbidden_offered_b": m["forbidden_offered_b"],
                } for m in part.iter_rows(named=True)]
            out.append(entry)
    return out


