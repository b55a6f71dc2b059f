from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tooldisc.canary.events import load_json_schema
from tooldisc.canary.shadow import SHADOW_SCHEMA
from tooldisc.canary.verdict import run_verdict
from tooldisc.errors import DataError

EXP = "capability-planner-v1"


def golden(scenario: str, passed: bool = True) -> dict:
    return {"schema_version": 1, "ts": "2025-02-01T09:00:00Z", "experiment": EXP, "kind": "golden",
            "scenario": scenario, "golden_passed": passed, "eligible": True, "plan_valid": True,
            "corrections": 0, "mutative_proposals": 0, "unauthorized_proposals": 0,
            "insufficient": False, "premature_insufficient": None, "shadow_external_calls": 0,
            "diverged": False, "divergence_reviewed": None, "latency_ms": 40.0, "tokens": 900}


def turn(i: int, **kw) -> dict:
    row = {**golden("x"), "kind": "turn", "scenario": None, "golden_passed": None,
           "ts": f"2025-02-01T10:{i % 60:02d}:00Z", "premature_insufficient": (False if i < 5 else None),
           "diverged": i % 10 == 0, "divergence_reviewed": (True if i % 10 == 0 else None)}
    return {**row, **kw}


def rows(n_turns: int = 60, **override) -> list[dict]:
    out = [golden("list_select_detail"), golden("orders_detail")]
    out += [turn(i) for i in range(n_turns)]
    if override:
        out[-1] = {**out[-1], **override}
    return out


def run(tmp_path: Path, data: list[dict]) -> dict:
    f = tmp_path / "shadow.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in data))
    v, report = run_verdict(SHADOW_SCHEMA, EXP, events=str(f))
    assert report["verdict"] == v.verdict
    return report


def failing(report: dict) -> set[str]:
    return {g["name"] for g in report["gates"] if g["status"] != "pass"}


def test_all_conditions_hold_promotes(tmp_path: Path) -> None:
    report = run(tmp_path, rows())
    assert report["verdict"] == "PROMOTE"
    assert report["summary"]["next_mode"] == "capability"
    assert report["next_percent"] is None


@pytest.mark.parametrize(("data", "gate"), [
    (rows(**{"mutative_proposals": 1}), "proposals"),
    (rows(**{"unauthorized_proposals": 1}), "proposals"),
    (rows(**{"plan_valid": False}), "plans"),
    (rows(**{"plan_valid": None}), "plans"),
    (rows(n_turns=49), "plans"),
    (rows(**{"premature_insufficient": True}), "insufficient"),
    (rows(**{"shadow_external_calls": 1}), "shadow_execution"),
    (rows(**{"diverged": True, "divergence_reviewed": False}), "divergence_review"),
    ([golden("list_select_detail", passed=False), *rows()[1:]], "golden"),
    (rows()[2:], "golden"),
])
def test_each_condition_holds(tmp_path: Path, data: list[dict], gate: str) -> None:
    report = run(tmp_path, data)
    assert report["verdict"] == "HOLD"
    assert failing(report) == {gate}


def test_thin_shadow_report_holds_and_an_absent_experiment_is_bad_input(tmp_path: Path) -> None:
    report = run(tmp_path, [golden("a")])  # one golden run, no turns
    assert report["verdict"] == "HOLD"
    with pytest.raises(DataError, match="experiments present: other"):
        run(tmp_path, [{**golden("a"), "experiment": "other"}])


def test_rows_validate_against_shipped_schema() -> None:
    schema = load_json_schema(SHADOW_SCHEMA)
    for r in rows(3):
        jsonschema.validate(r, schema)
    assert set(schema["properties"]) == set(SHADOW_SCHEMA.names)
    assert all(p["description"] for p in schema["properties"].values())

