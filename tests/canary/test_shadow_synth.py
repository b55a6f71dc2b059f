"""Every synthetic shadow scenario yields its verdict and failing gate through the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import invoke_cli
from tooldisc.canary.synthetic.shadow import SHADOW_SCENARIOS, synthesize_shadow

EXP = "capability-planner-v1"
EXPECTED = {  # written out, not read from SHADOW_SCENARIOS: (verdict, exit code, failing gate)
    "healthy": ("PROMOTE", 0, None),
    "stray_rows": ("PROMOTE", 0, None),
    "corrupt_rows": ("HOLD", 10, "quarantine"),
    "unauthorized_proposal": ("HOLD", 10, "proposals"),
    "shadow_execution": ("HOLD", 10, "shadow_execution"),
    "invalid_plan": ("HOLD", 10, "plans"),
    "golden_failure": ("HOLD", 10, "golden"),
    "premature_insufficient": ("HOLD", 10, "insufficient"),
    "unreviewed_divergence": ("HOLD", 10, "divergence_review"),
}
QUARANTINED = {  # 400 rows: stray 0.5% (2 rows), corrupt 3% (12 rows, four kinds in turn)
    "stray_rows": {"kind: must be one of golden, turn": 1, "latency_ms: must be a finite number >= 0": 1},
    "corrupt_rows": {"kind: must be one of golden, turn": 3, "latency_ms: must be a finite number >= 0": 3,
                     "schema_version: must be 1": 3, "scenario: required when kind is golden": 3},
}


def test_every_scenario_is_listed() -> None:
    assert set(EXPECTED) == set(SHADOW_SCENARIOS)
    for name, (verdict, _, gate) in EXPECTED.items():
        assert (SHADOW_SCENARIOS[name].verdict, SHADOW_SCENARIOS[name].failing_gate) == (verdict, gate)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_scenario_verdict_through_the_command(tmp_path: Path, scenario: str) -> None:
    out = tmp_path / f"{scenario}.jsonl"
    synthesize_shadow(out, 400, scenario, seed=7)
    res = invoke_cli("canary", "verdict", "--profile", "shadow", "--events", str(out),
                  "--experiment", EXP, "--json")
    verdict, code, gate = EXPECTED[scenario]
    assert res.returncode == code, res.stderr
    d = json.loads(res.stdout)
    assert d["verdict"] == verdict
    assert {g["name"] for g in d["gates"] if g["status"] != "pass"} == ({gate} if gate else set())
    reasons = QUARANTINED.get(scenario, {})
    assert d["quarantine"] == {"count": sum(reasons.values()), "reasons": reasons}
    assert d["quarantined"] == sum(reasons.values())
    assert d["summary"]["next_mode"] == ("capability" if verdict == "PROMOTE" else "shadow")


@pytest.mark.parametrize(("rows", "seed"), [(100, 0), (101, 3), (2_500, 11)])
def test_verdicts_hold_for_other_sizes_and_seeds(tmp_path: Path, rows: int, seed: int) -> None:
    from tooldisc.canary.shadow import SHADOW_SCHEMA
    from tooldisc.canary.verdict import run_verdict

    for scenario, (verdict, _, gate) in EXPECTED.items():
        out = tmp_path / f"{scenario}.parquet"
        synthesize_shadow(out, rows, scenario, seed=seed)
        v, _ = run_verdict(SHADOW_SCHEMA, EXP, events=str(out))
        assert v.verdict == verdict, (scenario, rows, seed)
        assert {g.name for g in v.gates if g.status != "pass"} == ({gate} if gate else set())
