from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tooldisc.agent.plan import CHECKS, iter_references, parse_plan, validate_plan
from tooldisc.agent.scenarios import load_scenarios, scenario_dir
from tooldisc.errors import DataError

CASES = load_scenarios()
SCENARIO_CATALOG = str(scenario_dir() / "catalog.yaml")


def test_all_golden_scenarios_are_present():
    assert {c.scenario for c in CASES} == {"list_select_detail", "ambiguous_selection", "speculative_path",
                                           "write_tool_proposed", "premature_insufficient"}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.scenario}:{c.name}" for c in CASES])
def test_golden_scenario(case):
    assert case.run().codes == case.expect


def test_every_finding_in_check_order():
    cat = CASES[0].catalog
    plan = {"decision": "tools", "actions": [
        {"id": "a1", "tool": "orders.detail", "arguments": {"order_id": {"$from": "a2", "path": "items.0.nope"}},
         "depends_on": ["a2"]},
        {"id": "a2", "tool": "orders.list", "arguments": {"customer_id": "$from:a9.x", "bad": {"$from": 3}}},
        {"id": "a2", "tool": "orders.cancel", "arguments": {"order_id": "$from:a4.items.0.id"}},
        {"id": "a4", "tool": "ghost", "arguments": {}},
    ]}
    report = validate_plan(plan, cat)
    assert report.codes == (
        "unknown_tool", "write_tool_forbidden", "reference_path_invalid", "reference_value_missing",
        "reference_dependency_missing", "reference_source_invalid", "speculative_reference_path",
        "dependency_not_earlier", "duplicate_action_id",
    )
    assert [CHECKS.index(c) for c in report.codes] == sorted(CHECKS.index(c) for c in report.codes)
    assert report.findings[0].action == "a4"


def test_references_both_forms():
    refs = list(iter_references({"a": {"$from": "x", "path": "items.0.id"}, "b": ["$from:y.total", "$fromage"]}))
    assert [(r.source, r.path) for r in refs] == [("x", ("items", "0", "id")), ("y", ("total",))]
    assert next(iter_references("$from:x..y")).problem is not None


def test_bad_plan_shape_is_bad_input():
    with pytest.raises(DataError):
        parse_plan({"decision": "tools", "actions": []})
    with pytest.raises(DataError):
        parse_plan({"decision": "tools", "actions": [{"id": f"a{i}", "tool": "t"} for i in range(9)]})


def test_cli_exit_codes_and_json(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(CASES[3].plan if CASES[3].expect == () else {
        "decision": "tools", "actions": [{"id": "a1", "tool": "customers.search", "arguments": {"query": "x"}}]}))
    r = run_cli("plan", "validate", str(good), "--catalog", SCENARIO_CATALOG, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["valid"] is True
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"decision": "insufficient", "actions": []}))
    r = run_cli("plan", "validate", str(bad), "--catalog", SCENARIO_CATALOG, "--routed", "customers.search",
                "--format", "json")
    assert r.returncode == 1
    assert [f["code"] for f in json.loads(r.stdout)["findings"]] == ["premature_insufficient"]
    r = run_cli("plan", "validate", str(bad), "--catalog", SCENARIO_CATALOG, "--routed", "customers.search")
    assert r.returncode == 1 and "premature_insufficient" in r.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    r = run_cli("plan", "validate", str(broken), "--catalog", SCENARIO_CATALOG)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
