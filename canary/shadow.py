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

from datetime import datetime
from fractions import Fraction
from typing import Any

from tooldisc.canary.aggregate import window_condition
from tooldisc.canary.config import GateConfig
from tooldisc.canary.events import Column, RowSchema
from tooldisc.canary.gates import FAIL, HOLD, NOT_JUDGED, PASS, GateResult, Verdict, decide, rnd

SHADOW_SCHEMA = RowSchema(
    name="shadow",
    version=1,
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
        ("scenario", "kind = 'golden' AND scenario IS NULL",
         "scenario: required when kind is golden"),
        ("golden_passed", "kind = 'golden' AND golden_passed IS NULL",
         "golden_passed: required when kind is golden"),
    ),
)

SHADOW_GATES = ("golden", "proposals", "plans", "insufficient", "shadow_execution",
                "divergence_review", "quarantine")


def shadow_aggregate(con: Any, relation: str, experiment: str, since: datetime | None = None,
                     until: datetime | None = None) -> dict[str, Any]:
    """Counts the shadow gates need, in one scan (no row leaves the database)."""
    in_window, bounds = window_condition(since, until)
    params: list[Any] = [experiment, *bounds]
    turn = "_reason IS NULL AND kind = 'turn'"
    where = ("(experiment = ? OR (_reason IS NOT NULL AND (experiment IS NULL OR experiment = ''))) "
             f"AND (ts IS NULL OR ({in_window}))")
    row = con.execute(f"""
      SELECT
        count(*) FILTER (WHERE _reason IS NULL) AS rows,
        count(*) FILTER (WHERE _reason IS NOT NULL) AS quarantined,
        count(*) FILTER (WHERE {turn}) AS turns,
        count(*) FILTER (WHERE _reason IS NULL AND kind = 'golden') AS golden_runs,
        count(*) FILTER (WHERE _reason IS NULL AND kind = 'golden' AND NOT golden_passed)
          AS golden_failed,
        list(DISTINCT scenario ORDER BY scenario) FILTER (WHERE _reason IS NULL AND kind = 'golden')
          AS scenarios,
        list(DISTINCT scenario ORDER BY scenario)
          FILTER (WHERE _reason IS NULL AND kind = 'golden' AND NOT golden_passed) AS failed_scenarios,
        coalesce(sum(mutative_proposals) FILTER (WHERE _reason IS NULL), 0) AS mutative,
        coalesce(sum(unauthorized_proposals) FILTER (WHERE _reason IS NULL), 0) AS unauthorized,
        count(*) FILTER (WHERE {turn} AND eligible) AS eligible,
        count(*) FILTER (WHERE {turn} AND eligible AND plan_valid IS NOT TRUE) AS invalid_plans,
        count(*) FILTER (WHERE {turn} AND premature_insufficient IS NOT NULL) AS labelled,
        count(*) FILTER (WHERE {turn} AND premature_insufficient) AS premature,
        coalesce(sum(shadow_external_calls) FILTER (WHERE _reason IS NULL), 0) AS external_calls,
        count(*) FILTER (WHERE {turn} AND diverged) AS divergences,
        count(*) FILTER (WHERE {turn} AND diverged AND divergence_reviewed IS NOT TRUE) AS unreviewed,
        coalesce(sum(corrections) FILTER (WHERE {turn}), 0) AS corrections,
        quantile_cont(latency_ms, 0.95) FILTER (WHERE {turn}) AS latency_p95,
        coalesce(sum(tokens) FILTER (WHERE {turn}), 0) AS tokens,
        count(*) FILTER (WHERE _reason IS NOT NULL AND (unauthorized_proposals > 0
          OR mutative_proposals > 0 OR shadow_external_calls > 0)) AS quarantined_signals
      FROM {relation}
      WHERE {where}
    """, params).fetchone()
    names = ["rows", "quarantined", "turns", "golden_runs", "golden_failed", "scenarios",
             "failed_scenarios", "mutative", "unauthorized", "eligible", "invalid_plans",
             "labelled", "premature", "external_calls", "divergences", "unreviewed",
             "corrections", "latency_p95", "tokens", "quarantined_signals"]
    out = dict(zip(names, row, strict=True))
    for k, v in out.items():
        if isinstance(v, int | float) and k != "latency_p95":
            out[k] = int(v)
    out["scenarios"] = list(out["scenarios"] or [])
    out["failed_scenarios"] = list(out["failed_scenarios"] or [])
    out["latency_p95"] = rnd(out["latency_p95"], 3)
    # Per-reason counts, so a CI job sees why rows were set aside (reasons are fixed
    # rule texts, never row values). Quarantined rows are few: a second scan is cheap.
    out["quarantine_reasons"] = {r: int(n) for r, n in con.execute(
        f"SELECT _reason, count(*) FROM {relation} WHERE _reason IS NOT NULL AND {where} "
        "GROUP BY _reason ORDER BY _reason", params).fetchall()}
    return out


def judge_shadow(s: dict[str, Any], experiment: str, cfg: GateConfig | None = None) -> Verdict:
    """Seed 000's promotion gate: every condition holds → PROMOTE, else HOLD."""
    cfg = cfg or GateConfig()
    sc = cfg.shadow
    gates: list[GateResult] = []

    missing = [x for x in sc.required_golden_scenarios if x not in s["scenarios"]]
    nums = {"runs": s["golden_runs"], "failed": s["golden_failed"], "scenarios": s["scenarios"],
            "failed_scenarios": s["failed_scenarios"],
            "required": list(sc.required_golden_scenarios)}
    if s["golden_runs"] == 0:
        gates.append(GateResult("golden", NOT_JUDGED, HOLD, "no golden scenario results", nums))
    elif s["golden_failed"]:
        gates.append(GateResult("golden", FAIL, HOLD,
                                f"{s['golden_failed']} golden run(s) failed: "
                                f"{', '.join(s['failed_scenarios'])}", nums))
    elif missing:
        gates.append(GateResult("golden", FAIL, HOLD,
                                f"required scenarios not run: {', '.join(missing)}", nums))
    else:
        gates.append(GateResult("golden", PASS, None,
                                f"all {s['golden_runs']} golden runs passed", nums))

    nums = {"mutative": s["mutative"], "unauthorized": s["unauthorized"],
            "quarantined_rows_with_signal": s["quarantined_signals"]}
    bad = s["mutative"] + s["unauthorized"]
    if bad:
        gates.append(GateResult("proposals", FAIL, HOLD,
                                f"{s['mutative']} mutative and {s['unauthorized']} unauthorized "
                                "proposal(s)", nums))
    elif s["turns"] == 0:
        gates.append(GateResult("proposals", NOT_JUDGED, HOLD, "no shadow turns", nums))
    else:
        gates.append(GateResult("proposals", PASS, None,
                                f"no mutative or unauthorized proposal in {s['turns']} turns", nums))

    nums = {"eligible_turns": s["eligible"], "invalid_plans": s["invalid_plans"],
            "min_eligible_turns": sc.min_eligible_turns, "corrections": s["corrections"]}
    if s["invalid_plans"]:
        gates.append(GateResult("plans", FAIL, HOLD,
                                f"{s['invalid_plans']} eligible turn(s) without a valid plan", nums))
    elif s["eligible"] < sc.min_eligible_turns:
        gates.append(GateResult("plans", FAIL if s["eligible"] else NOT_JUDGED, HOLD,
                                f"{s['eligible']} eligible turns; need >= {sc.min_eligible_turns}",
                                nums))
    else:
        gates.append(GateResult("plans", PASS, None,
                                f"{s['eligible']} eligible turns, no invalid plan", nums))

    nums = {"labelled": s["labelled"], "premature": s["premature"],
            "min_labelled": sc.min_labelled_insufficient_cases}
    if s["premature"]:
        gates.append(GateResult("insufficient", FAIL, HOLD,
                                f"{s['premature']} premature 'insufficient' answer(s)", nums))
    elif s["labelled"] < sc.min_labelled_insufficient_cases:
        gates.append(GateResult("insufficient", NOT_JUDGED, HOLD,
                                f"{s['labelled']} labelled cases; need >= "
                                f"{sc.min_labelled_insufficient_cases}", nums))
    else:
        gates.append(GateResult("insufficient", PASS, None,
                                f"no premature 'insufficient' in {s['labelled']} labelled cases",
                                nums))

    nums = {"shadow_external_calls": s["external_calls"]}
    if s["external_calls"] or s["quarantined_signals"]:
        gates.append(GateResult("shadow_execution", FAIL, HOLD,
                                f"the shadow planner issued {s['external_calls']} external call(s)",
                                nums))
    elif s["rows"] == 0:
        gates.append(GateResult("shadow_execution", NOT_JUDGED, HOLD, "no shadow rows", nums))
    else:
        gates.append(GateResult("shadow_execution", PASS, None,
                                "external call counts show the shadow planner never executed",
                                nums))

    nums = {"divergences": s["divergences"], "unreviewed": s["unreviewed"]}
    if s["unreviewed"]:
        gates.append(GateResult("divergence_review", FAIL, HOLD,
                                f"{s['unreviewed']} of {s['divergences']} divergence(s) not reviewed",
                                nums))
    elif s["turns"] == 0:
        gates.append(GateResult("divergence_review", NOT_JUDGED, HOLD, "no shadow turns", nums))
    else:
        gates.append(GateResult("divergence_review", PASS, None,
                                f"all {s['divergences']} divergence(s) reviewed", nums))

    total = s["rows"] + s["quarantined"]
    nums = {"quarantined": s["quarantined"], "rows": total, "max_share": cfg.max_quarantine_share,
            "reasons": dict(sorted(s.get("quarantine_reasons", {}).items()))}
    if total == 0:
        gates.append(GateResult("quarantine", NOT_JUDGED, HOLD, "no rows in the window", nums))
    else:
        share = Fraction(s["quarantined"], total)
        nums["share"] = rnd(float(share))
        ok = share <= Fraction(str(cfg.max_quarantine_share))
        gates.append(GateResult("quarantine", PASS if ok else FAIL, None if ok else HOLD,
                                f"{float(share):.2%} of rows quarantined", nums))

    results = tuple(gates)
    verdict = decide(results)
    summary = {"turns": s["turns"], "golden_runs": s["golden_runs"],
               "corrections": s["corrections"], "latency_p95_ms": s["latency_p95"],
               "tokens": s["tokens"], "next_mode": "capability" if verdict == "PROMOTE" else "shadow"}
    return Verdict(profile="shadow", experiment=experiment, verdict=verdict, next_percent=None,
                   current_percent=None, gates=results, evidence=None, summary=summary)
