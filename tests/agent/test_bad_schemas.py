"""Hostile tool schemas (tests/data/bad/schemas/) through the real commands, under resource bounds.

Each case runs in a subprocess limited to 1 GB of address space and 30 s, so a
regression (a hang in a backtracking regex, a recursion blow-up, a remote fetch)
fails instead of stalling CI. A broken schema quarantines its tool:
``catalog validate`` exits 1 and names the place; nothing ends in a traceback.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

BAD = Path(__file__).resolve().parent.parent / "data" / "bad" / "schemas"
MEMORY_LIMIT = 1 << 30
TIMEOUT = 30

# file → the words the quarantine message must contain
QUARANTINED = {
    "pattern_unclosed_group.yaml": "missing ): ((",
    "pattern_lookahead.yaml": "linear-time engine (RE2)",
    "pattern_properties_backreference.yaml": "linear-time engine (RE2)",
    "output_schema_pattern.yaml": "tools[1].output_schema.properties.number.pattern",
    "ref_root_loop.json": "$ref cycle",
    "ref_mutual_loop.json": "$ref cycle",
    "ref_unresolvable.yaml": "'#/nope' does not resolve",
    "ref_remote.yaml": "never resolved",
    "ref_embedded_id.yaml": "$id is allowed only at the root",
    "schema_deep.json": "nests deeper than 64 levels",
    "type_not_object.yaml": "tools[1].parameters.type: an argument schema must have type 'object'",
    "ref_dag_bomb.json": "tools[1].parameters.$defs.l40: validating one argument value could take",
    "recursive_doubling.json": "over the budget of 200,000",
}


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_bounded(*args: str) -> subprocess.CompletedProcess[str]:
    # no_proxy/http_proxy: a fetch attempt would go to a dead port instead of the network.
    env = {**os.environ, "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    return subprocess.run([sys.executable, "-m", "tooldisc.cli", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, preexec_fn=_bounded, env=env)


def test_every_file_in_the_folder_is_covered():
    listed = {*QUARANTINED, "redos_catalog.yaml", "redos_plan.json", "unclosed_group_plan.json", "no_type.yaml",
              "budget_catalog.json", "budget_plan.json"}
    assert {p.name for p in BAD.iterdir()} == listed


@pytest.mark.parametrize("name", sorted(QUARANTINED))
def test_a_hostile_schema_quarantines_its_tool(name: str):
    r = run_bounded("catalog", "validate", str(BAD / name), "--format", "json")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    out = json.loads(r.stdout)
    assert out["counts"] == {"error": 0, "quarantine": 1, "warning": 0}
    issue = out["issues"][0]
    assert issue["level"] == "quarantine" and issue["path"].startswith("tools[1].")
    assert QUARANTINED[name] in f"{issue['path']}: {issue['message']}"
    assert out["tools"] == 2  # the rest of the catalog still loads


def test_a_backtracking_pattern_is_matched_in_linear_time():
    """^(a+)+$ against 48 a's and a '!' takes hours with a backtracking engine."""
    ok = run_bounded("catalog", "validate", str(BAD / "redos_catalog.yaml"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    r = run_bounded("plan", "validate", str(BAD / "redos_plan.json"), "--catalog", str(BAD / "redos_catalog.yaml"),
                    "--format", "json")
    assert r.returncode == 1, r.stderr
    (finding,) = json.loads(r.stdout)["findings"]
    assert finding["code"] == "arguments_schema_invalid" and "does not match" in finding["message"]


def test_plan_validate_reports_a_quarantined_schema_as_a_finding():
    r = run_bounded("plan", "validate", str(BAD / "unclosed_group_plan.json"),
                    "--catalog", str(BAD / "pattern_unclosed_group.yaml"), "--format", "json")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "quarantined" in r.stderr
    (finding,) = json.loads(r.stdout)["findings"]
    assert finding["code"] == "arguments_schema_invalid" and "cannot be used" in finding["message"]


def test_a_call_over_the_step_budget_is_a_finding_answered_at_once():
    """1,000 rows each checked by a 2^8 $defs fan-out: under the budget per value, over it for the call."""
    import time

    ok = run_bounded("catalog", "validate", str(BAD / "budget_catalog.json"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    t0 = time.perf_counter()
    r = run_bounded("plan", "validate", str(BAD / "budget_plan.json"), "--catalog", str(BAD / "budget_catalog.json"),
                    "--format", "json")
    assert time.perf_counter() - t0 < 15
    assert r.returncode == 1, r.stderr
    (finding,) = json.loads(r.stdout)["findings"]
    assert finding["code"] == "arguments_schema_invalid" and "step budget" in finding["message"]


def test_a_schema_without_a_type_is_read_as_an_object_schema(tmp_path):
    """The export carries "type": "object" (catalog validate's exit 0 is a MANIFEST row; the other
    providers are tests/discovery/test_exporters.py)."""
    out = tmp_path / "mcp.json"
    r = run_bounded("catalog", "convert", str(BAD / "no_type.yaml"), "--to", "mcp", "--out", str(out))
    assert r.returncode == 0, r.stderr
    schemas = [t["inputSchema"] for t in json.loads(out.read_text("utf-8"))["tools"]]
    assert [s["type"] for s in schemas] == ["object", "object"] and schemas[1]["required"] == ["id"]
