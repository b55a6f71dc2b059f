"""Synthetic shadow-report rows with a known verdict (``canary synth --profile shadow``).

Tests and demos of the shadow profile need shadow-report rows (``data/shadow.schema.json``)
whose verdict is known in advance, without typing them by hand. Like the event
scenarios in :mod:`tooldisc.canary.synthetic.events`, each scenario changes one thing about a
healthy shadow rollout so exactly one shadow gate fails. The shadow profile has no
ROLLBACK (shadow mode never acts), so the safety scenarios (an unauthorized
proposal, a shadow execution) HOLD too.

The structure that decides a gate is fixed by position (every fifth turn is not
eligible, the first turn is labelled, the deviation sits mid-window), so every seed
gives the scenario's verdict; the seed only varies the incidental values (latency,
tokens, corrections, divergences). Output is byte-identical for the same arguments.
Rows carry no ids, prompts or values, only what the schema lists.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from typing import Any

from tooldisc.canary.synthetic.events import Scenario, check_out, write_tables
from tooldisc.errors import UsageError
from tooldisc.params import Options, checked

START_US = 1_738_368_000_000_000  # 2025-02-01T00:00:00Z
SPAN_US = 24 * 3600 * 1_000_000
MIN_ROWS = 100
GOLDEN = ("ambiguous_selection", "list_select_detail", "premature_insufficient",
          "speculative_path", "write_tool_proposed")  # seed 000's golden routing scenarios
BAD_KINDS = ("kind", "latency", "version", "golden_scenario")  # cycled over bad rows

SHADOW_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("healthy", "PROMOTE", None,
                 "golden runs pass, ≥ 50 valid eligible turns, every divergence reviewed"),
        Scenario("stray_rows", "PROMOTE", None,
                 "0.5% of rows break the schema: quarantined and counted, under the 1% limit"),
        Scenario("corrupt_rows", "HOLD", "quarantine",
                 "3% of rows break the schema (bad kind, negative latency, version 2, "
                 "golden run without a scenario)"),
        Scenario("unauthorized_proposal", "HOLD", "proposals",
                 "one turn proposes an action outside the caller's authority"),
        Scenario("shadow_execution", "HOLD", "shadow_execution",
                 "the shadow planner issues one external call"),
        Scenario("invalid_plan", "HOLD", "plans",
                 "2% of eligible turns end without a valid plan"),
        Scenario("golden_failure", "HOLD", "golden", "the speculative_path golden run fails"),
        Scenario("premature_insufficient", "HOLD", "insufficient",
                 "one labelled turn answers 'insufficient' with a routed tool untried"),
        Scenario("unreviewed_divergence", "HOLD", "divergence_review",
                 "one divergence from the classic plan is not reviewed"),
    )
}


@dataclass(frozen=True)
class ShadowSynthResult:
    path: str
    rows: int
    bad_rows: int
    scenario: str
    expected_verdict: str
    failing_gate: str | None


def _bad_count(scenario: str, rows: int) -> int:
    if scenario == "stray_rows":
        return max(1, rows // 200)
    if scenario == "corrupt_rows":
        return max(2, math.ceil(rows * 3 / 100))
    return 0


def _golden(name: str, passed: bool, rng: random.Random) -> dict[str, Any]:
    return {"kind": "golden", "scenario": name, "golden_passed": passed, "eligible": True,
            "plan_valid": True, "corrections": 0, "mutative_proposals": 0,
            "unauthorized_proposals": 0, "insufficient": False, "premature_insufficient": None,
            "shadow_external_calls": 0, "diverged": False, "divergence_reviewed": None,
            "latency_ms": round(rng.lognormvariate(math.log(700.0), 0.3), 1),
            "tokens": rng.randint(600, 2400)}


def _turn(i: int, rng: random.Random) -> dict[str, Any]:
    eligible = i % 5 != 4  # 80% eligible, fixed so the plans gate never depends on luck
    diverged = eligible and rng.random() < 0.08
    insufficient = rng.random() < 0.05
    labelled = i == 0 or rng.random() < 0.2
    return {"kind": "turn", "scenario": None, "golden_passed": None, "eligible": eligible,
            "plan_valid": True if eligible else None,
            "corrections": int(eligible and rng.random() < 0.1), "mutative_proposals": 0,
            "unauthorized_proposals": 0, "insufficient": insufficient,
            "premature_insufficient": False if labelled else None, "shadow_external_calls": 0,
            "diverged": diverged, "divergence_reviewed": True if diverged else None,
            "latency_ms": round(rng.lognormvariate(math.log(800.0), 0.4), 1),
            "tokens": rng.randint(600, 2400)}


def _apply(scenario: str, turns: list[dict[str, Any]]) -> None:
    """Make the one change that fails the scenario's gate, on eligible turns mid-window."""
    eligible = [t for t in turns if t["eligible"]]
    mid = eligible[len(eligible) // 2]
    if scenario == "unauthorized_proposal":
        mid["unauthorized_proposals"] = 1
    elif scenario == "shadow_execution":
        mid["shadow_external_calls"] = 1
    elif scenario == "invalid_plan":
        step = len(eligible) // max(1, len(eligible) // 50)
        for j, t in enumerate(eligible[step // 2::step]):
            t["plan_valid"] = False if j % 2 == 0 else None  # a bad plan, or none at all
    elif scenario == "premature_insufficient":
        mid.update(insufficient=True, premature_insufficient=True)
    elif scenario == "unreviewed_divergence":
        mid.update(diverged=True, divergence_reviewed=None)


def _break(row: dict[str, Any], kind: str) -> None:
    """One schema violation per bad row, none carrying a safety signal."""
    if kind == "kind":
        row["kind"] = "replay"
    elif kind == "latency":
        row["latency_ms"] = -1.0
    elif kind == "version":
        row["schema_version"] = 2
    else:
        row.update(kind="golden", scenario=None, golden_passed=None)


def shadow_rows(rows: int, scenario: str, seed: int = 0,
                experiment: str = "capability-planner-v1") -> tuple[list[dict[str, Any]], int]:
    """The rows of one scenario, in time order, and how many of them are deliberately bad."""
    checked(Options(tuple(SHADOW_SCENARIOS)), scenario, "--scenario", UsageError)  # the shadow profile's
    if rows < MIN_ROWS:
        raise UsageError(f"--rows must be an integer >= {MIN_ROWS} with --profile shadow; got {rows}")
    if not experiment:
        raise UsageError("--experiment must be non-empty")
    rng = random.Random(f"shadow:{seed}")
    n_bad = _bad_count(scenario, rows)
    golden = [_golden(g, not (scenario == "golden_failure" and g == "speculative_path"), rng)
              for g in GOLDEN]
    turns = [_turn(i, rng) for i in range(rows - len(GOLDEN))]
    _apply(scenario, turns)
    if n_bad:
        step = len(turns) // n_bad
        for j in range(n_bad):
            _break(turns[j * step + step // 2], BAD_KINDS[j % len(BAD_KINDS)])
    every = len(turns) // len(GOLDEN)
    ordered: list[dict[str, Any]] = []
    for i, t in enumerate(turns):
        if i % every == 0 and i // every < len(GOLDEN):
            ordered.append(golden[i // every])
        ordered.append(t)
    slot = SPAN_US // rows
    out = []
    for i, r in enumerate(ordered):
        ts = START_US + i * slot + rng.randrange(slot)
        out.append({"schema_version": r.pop("schema_version", 1), "ts": ts,
                    "experiment": experiment, **r})
    return out, n_bad


def synthesize_shadow(out: str | os.PathLike[str], rows: int, scenario: str, seed: int = 0,
                      experiment: str = "capability-planner-v1") -> ShadowSynthResult:
    """Write one scenario's shadow-report rows to ``out`` (.parquet, .jsonl or .csv)."""
    import pyarrow as pa

    check_out(out)
    data, n_bad = shadow_rows(rows, scenario, seed, experiment)
    cols = {k: [r[k] for r in data] for k in data[0]}
    types = {"schema_version": pa.int8(), "ts": pa.timestamp("us", tz="UTC"),
             "latency_ms": pa.float64(), "corrections": pa.int32(),
             "mutative_proposals": pa.int32(), "unauthorized_proposals": pa.int32(),
             "shadow_external_calls": pa.int32(), "tokens": pa.int32(),
             "experiment": pa.string(), "kind": pa.string(), "scenario": pa.string()}
    table = pa.table({k: pa.array(v, type=types.get(k, pa.bool_())) for k, v in cols.items()})
    path = write_tables(out, [table])
    s = SHADOW_SCENARIOS[scenario]
    return ShadowSynthResult(path=path, rows=rows, bad_rows=n_bad, scenario=scenario,
                             expected_verdict=s.verdict, failing_gate=s.failing_gate)
