"""The ``shadow`` gate profile: judge a shadow-mode planner from shadow-report rows.

Seed 000 keeps a capability planner in shadow mode (the classic planner executes; the
new one only proposes, and a masked comparison is recorded) until every promotion
condition holds. One shadow-report row describes one of two things:

* ``kind = "golden"`` — one run of a golden routing scenario (e.g.
  ``list_select_detail``): ``scenario`` names it, ``golden_passed`` says whether the
  shadow planner routed and planned as expected.
* ``kind = "turn"`` — one live turn observed in shadow mode:
  ``eligible`` (the turn was eligible for capability planning), ``plan_valid`` (the
  shadow plan passed schema and dependency validation, after at most one correction;
  null when no plan was produced), ``corrections``, ``mutative_proposals`` and
  ``unauthorized_proposals`` (counts of proposed actions that were mutative or
  outside the caller's authority), ``insufficient`` (the planner answered
  "insufficient"), ``premature_insufficient`` (a labelled live-data case where
  "insufficient" came while a routed tool was untried; null when unlabelled),
  ``shadow_external_calls`` (external API/MCP calls the shadow planner issued — must
  be 0), ``diverged`` (shadow and classic plans differ) and ``divergence_reviewed``
  (a human reviewed that divergence; null when not diverged), plus ``latency_ms``
  and ``tokens`` for reporting.

Every row also has ``schema_version`` (1), ``ts`` (ISO 8601 with Z or offset) and
``experiment`` (the shadow rollout's name). Rows carry no ids, prompts or values.
The JSON Schema with these descriptions ships as ``data/shadow.schema.json``.

Gates (all must pass to PROMOTE from shadow to capability mode; otherwise HOLD —
there is no ROLLBACK, since shadow mode never acts): ``golden``, ``proposals``,
``plans``, ``insufficient``, ``shadow_execution``, ``divergence_review``,
``quarantine``. An eligible turn with no plan counts as an invalid plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction

from tooldisc.canary.conditions import Any_, Eq, Gt, IsNull, IsTrue, Not, all_of, any_of
from tooldisc.canary.config import GateConfig
from tooldisc.canary.engine import AggregateQuery, Engine, Measure, QuantileSpec
from tooldisc.canary.events import Column, RowRule, RowSchema
from tooldisc.canary.gates import (
    FAIL,
    HOLD,
    NOT_JUDGED,
    PASS,
    GateResult,
    GateSpec,
    Verdict,
    decide,
    fix_reported,
    rnd,
)
from tooldisc.canary.next_step import next_step

SHADOW_SCHEMA = RowSchema(
    name="shadow",
    versions=(1,),
    schema_file="shadow.schema.json",
    table="shadow_rows",
    columns=(
        Column("schema_version", "version"),
        Column("ts", "ts"),
        Column("experiment", "string"),
        Column("kind", "enum", values=("golden", "turn")),
        Column("scenario", "string", nullable=True),
        Column("golden_passed", "bool", nullable=True),
        Column("eligible", "bool"),
        Column("plan_valid", "bool", nullable=True),
        Column("corrections", "int"),
        Column("mutative_proposals", "int"),
        Column("unauthorized_proposals", "int"),
        Column("insufficient", "bool"),
        Column("premature_insufficient", "bool", nullable=True),
        Column("shadow_external_calls", "int"),
        Column("diverged", "bool"),
        Column("divergence_reviewed", "bool", nullable=True),
        Column("latency_ms", "number"),
        Column("tokens", "int"),
    ),
    row_rules=(
        RowRule("scenario", all_of(Eq("kind", "golden"), IsNull("scenario")),
                "scenario: required when kind is golden"),
        RowRule("golden_passed", all_of(Eq("kind", "golden"), IsNull("golden_passed")),
                "golden_passed: required when kind is golden"),
    ),
)

_TURN = Eq("kind", "turn")
_GOLDEN = Eq("kind", "golden")


def _not_true(column: str) -> Any_:
    """NULL or false (SQL's ``IS NOT TRUE``)."""
    return any_of(IsNull(column), Eq(column, False))


SHADOW_MEASURES: tuple[Measure, ...] = (
    Measure("rows", "count"),
    Measure("turns", "count_if", where=_TURN),
    Measure("golden_runs", "count_if", where=_GOLDEN),
    Measure("golden_failed", "count_if", where=all_of(_GOLDEN, _not_true("golden_passed"))),
    Measure("scenarios", "distinct", "scenario", where=_GOLDEN),
    Measure("failed_scenarios", "distinct", "scenario",
            where=all_of(_GOLDEN, _not_true("golden_passed"))),
    Measure("mutative", "sum", "mutative_proposals"),
    Measure("unauthorized", "sum", "unauthorized_proposals"),
    Measure("eligible", "count_if", where=all_of(_TURN, IsTrue("eligible"))),
    Measure("invalid_plans", "count_if",
            where=all_of(_TURN, IsTrue("eligible"), _not_true("plan_valid"))),
    Measure("labelled", "count_if", where=all_of(_TURN, Not(IsNull("premature_insufficient")))),
    Measure("premature", "count_if", where=all_of(_TURN, IsTrue("premature_insufficient"))),
    Measure("external_calls", "sum", "shadow_external_calls"),
    Measure("divergences", "count_if", where=all_of(_TURN, IsTrue("diverged"))),
    Measure("unreviewed", "count_if",
            where=all_of(_TURN, IsTrue("diverged"), _not_true("divergence_reviewed"))),
    Measure("corrections", "sum", "corrections", where=_TURN),
    Measure("tokens", "sum", "tokens", where=_TURN),
)
SHADOW_QUARANTINE_MEASURES: tuple[Measure, ...] = (
    Measure("quarantined_signals", "count_if", where=any_of(
        Gt("unauthorized_proposals", 0), Gt("mutative_proposals", 0),
        Gt("shadow_external_calls", 0))),
)


@dataclass(frozen=True)
class ShadowEvidence:
    """Everything the shadow gates judge (counts only)."""

    rows: int
    quarantined: int
    turns: int
    golden_runs: int
    golden_failed: int
    scenarios: tuple[str, ...]
    failed_scenarios: tuple[str, ...]
    mutative: int
    unauthorized: int
    eligible: int
    invalid_plans: int
    labelled: int
    premature: int
    external_calls: int
    divergences: int
    unreviewed: int
    corrections: int
    latency_p95: float | None
    tokens: int
    quarantined_signals: int
    quarantine_reasons: dict[str, int] = field(default_factory=dict)


def shadow_query(experiment: str, since: datetime | None, until: datetime | None) -> AggregateQuery:
    return AggregateQuery(
        schema=SHADOW_SCHEMA, experiment=experiment, since=since, until=until, group_by=(),
        segments=(), measures=SHADOW_MEASURES, quarantine_measures=SHADOW_QUARANTINE_MEASURES,
        quantile=QuantileSpec("latency_ms", (9500,), where=_TURN))


def shadow_evidence(engine: Engine, experiment: str, since: datetime | None = None,
                    until: datetime | None = None) -> ShadowEvidence:
    """The shadow profile's counts from ``engine`` (no row leaves it)."""
    from tooldisc.canary.engine import total

    result = engine.aggregate(shadow_query(experiment, since, until))
    v = total(SHADOW_MEASURES, [vals for _, vals in result.cells])
    q = result.quantiles.get((), (None,))
    return ShadowEvidence(
        rows=int(v["rows"]), quarantined=sum(result.quarantine_reasons.values()),
        turns=int(v["turns"]), golden_runs=int(v["golden_runs"]),
        golden_failed=int(v["golden_failed"]), scenarios=tuple(v["scenarios"]),
        failed_scenarios=tuple(v["failed_scenarios"]), mutative=int(v["mutative"]),
        unauthorized=int(v["unauthorized"]), eligible=int(v["eligible"]),
        invalid_plans=int(v["invalid_plans"]), labelled=int(v["labelled"]),
        premature=int(v["premature"]), external_calls=int(v["external_calls"]),
        divergences=int(v["divergences"]), unreviewed=int(v["unreviewed"]),
        corrections=int(v["corrections"]),
        latency_p95=rnd(q[0], 3) if q and q[0] is not None else None, tokens=int(v["tokens"]),
        quarantined_signals=int(result.quarantine_values.get("quarantined_signals", 0)),
        quarantine_reasons=dict(result.quarantine_reasons))


ShadowGate = Callable[[ShadowEvidence, GateConfig], GateResult]


def gate_golden(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    sc = cfg.shadow
    missing = [x for x in sc.required_golden_scenarios if x not in s.scenarios]
    nums = {"runs": s.golden_runs, "failed": s.golden_failed, "scenarios": list(s.scenarios),
            "failed_scenarios": list(s.failed_scenarios),
            "required": list(sc.required_golden_scenarios)}
    if s.golden_runs == 0:
        return GateResult("golden", NOT_JUDGED, HOLD, "no golden scenario results", nums)
    if s.golden_failed:
        return GateResult("golden", FAIL, HOLD, f"{s.golden_failed} golden run(s) failed: "
                          f"{', '.join(s.failed_scenarios)}", nums)
    if missing:
        return GateResult("golden", FAIL, HOLD, f"required scenarios not run: {', '.join(missing)}",
                          nums)
    return GateResult("golden", PASS, None, f"all {s.golden_runs} golden runs passed", nums)


def gate_proposals(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    nums = {"mutative": s.mutative, "unauthorized": s.unauthorized,
            "quarantined_rows_with_signal": s.quarantined_signals}
    if s.mutative + s.unauthorized:
        return GateResult("proposals", FAIL, HOLD, f"{s.mutative} mutative and {s.unauthorized} "
                          "unauthorized proposal(s)", nums)
    if s.turns == 0:
        return GateResult("proposals", NOT_JUDGED, HOLD, "no shadow turns", nums)
    return GateResult("proposals", PASS, None,
                      f"no mutative or unauthorized proposal in {s.turns} turns", nums)


def gate_plans(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    need = cfg.shadow.min_eligible_turns
    nums = {"eligible_turns": s.eligible, "invalid_plans": s.invalid_plans,
            "min_eligible_turns": need, "corrections": s.corrections}
    if s.invalid_plans:
        return GateResult("plans", FAIL, HOLD,
                          f"{s.invalid_plans} eligible turn(s) without a valid plan", nums)
    if s.eligible < need:
        return GateResult("plans", FAIL if s.eligible else NOT_JUDGED, HOLD,
                          f"{s.eligible} eligible turns; need >= {need}", nums)
    return GateResult("plans", PASS, None, f"{s.eligible} eligible turns, no invalid plan", nums)


def gate_insufficient(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    need = cfg.shadow.min_labelled_insufficient_cases
    nums = {"labelled": s.labelled, "premature": s.premature, "min_labelled": need}
    if s.premature:
        return GateResult("insufficient", FAIL, HOLD,
                          f"{s.premature} premature 'insufficient' answer(s)", nums)
    if s.labelled < need:
        return GateResult("insufficient", NOT_JUDGED, HOLD,
                          f"{s.labelled} labelled cases; need >= {need}", nums)
    return GateResult("insufficient", PASS, None,
                      f"no premature 'insufficient' in {s.labelled} labelled cases", nums)


def gate_shadow_execution(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    nums = {"shadow_external_calls": s.external_calls}
    if s.external_calls or s.quarantined_signals:
        return GateResult("shadow_execution", FAIL, HOLD,
                          f"the shadow planner issued {s.external_calls} external call(s)", nums)
    if s.rows == 0:
        return GateResult("shadow_execution", NOT_JUDGED, HOLD, "no shadow rows", nums)
    return GateResult("shadow_execution", PASS, None,
                      "external call counts show the shadow planner never executed", nums)


def gate_divergence_review(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    nums = {"divergences": s.divergences, "unreviewed": s.unreviewed}
    if s.unreviewed:
        return GateResult("divergence_review", FAIL, HOLD,
                          f"{s.unreviewed} of {s.divergences} divergence(s) not reviewed", nums)
    if s.turns == 0:
        return GateResult("divergence_review", NOT_JUDGED, HOLD, "no shadow turns", nums)
    return GateResult("divergence_review", PASS, None,
                      f"all {s.divergences} divergence(s) reviewed", nums)


def gate_shadow_quarantine(s: ShadowEvidence, cfg: GateConfig) -> GateResult:
    total = s.rows + s.quarantined
    nums: dict[str, object] = {"quarantined": s.quarantined, "rows": total,
                               "max_share": cfg.max_quarantine_share,
                               "reasons": dict(sorted(s.quarantine_reasons.items()))}
    if total == 0:
        return GateResult("quarantine", NOT_JUDGED, HOLD, "no rows in the window", nums)
    share = Fraction(s.quarantined, total)
    nums["share"] = rnd(float(share))
    ok = share <= Fraction(str(cfg.max_quarantine_share))
    return GateResult("quarantine", PASS if ok else FAIL, None if ok else HOLD,
                      f"{float(share):.2%} of rows quarantined", nums)


SHADOW_GATE_SPECS: tuple[GateSpec, ...] = (
    GateSpec("golden", gate_golden, fix=fix_reported("golden")),
    GateSpec("proposals", gate_proposals, fix=fix_reported("proposals")),
    # only more turns or labelled cases are missing (unless it names invalid plans or a premature verdict)
    GateSpec("plans", gate_plans, waits=True, fix=fix_reported("plans")),
    GateSpec("insufficient", gate_insufficient, waits=True, fix=fix_reported("insufficient")),
    GateSpec("shadow_execution", gate_shadow_execution, fix=fix_reported("shadow_execution")),
    GateSpec("divergence_review", gate_divergence_review, fix=fix_reported("divergence_review")),
    GateSpec("quarantine", gate_shadow_quarantine,
             fix="Fix what writes the quarantined rows (see the reasons below), then judge again."),
)
SHADOW_GATES: tuple[str, ...] = tuple(g.name for g in SHADOW_GATE_SPECS)


def judge_shadow(s: ShadowEvidence, experiment: str, cfg: GateConfig | None = None) -> Verdict:
    """Seed 000's promotion gate: every condition holds → PROMOTE, else HOLD."""
    cfg = cfg or GateConfig()
    results = tuple(g.check(s, cfg) for g in SHADOW_GATE_SPECS)
    verdict = decide(results)
    summary = {"turns": s.turns, "golden_runs": s.golden_runs, "corrections": s.corrections,
               "latency_p95_ms": s.latency_p95, "tokens": s.tokens,
               "next_mode": "capability" if verdict == "PROMOTE" else "shadow"}
    return Verdict(profile="shadow", experiment=experiment, verdict=verdict, next_percent=None,
                   current_percent=None, gates=results, evidence=None, summary=summary,
                   next_step=next_step("shadow", verdict, None, None, results, cfg=cfg, specs=SHADOW_GATE_SPECS))
