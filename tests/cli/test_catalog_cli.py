"""``tooldisc catalog validate|stats|convert|diff`` through the real command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, invoke_cli, run_cli
from tooldisc.discovery.catalog.io import load_catalog

OK = str(ROOT / "tests" / "cli" / "data" / "ok_catalog.yaml")


def _write(path: Path, doc: Any) -> str:
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return str(path)


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("sub", ["validate", "stats", "convert", "diff"])
def test_help(sub: str) -> None:
    proc = invoke_cli("catalog", sub, "--help")
    assert proc.returncode == 0
    assert "--json" in proc.stdout and "--format" in proc.stdout


def test_validate_clean_catalog_exit_0() -> None:
    proc = invoke_cli("catalog", "validate", OK)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith(f"OK: {OK} (tooldisc): 0 error(s), 0 quarantined, 0 warning(s), 2 tools")


def test_validate_lists_every_issue_with_file_and_path(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", {"catalog_version": "1", "tools": [
        {"name": "a", "side_effect": "none", "parameters": {"type": "object"}},
        {"name": "a", "side_effect": "maybe"},
        {"name": "b", "roles": "admin", "parameters": {"type": "object"}},
    ]})
    proc = invoke_cli("catalog", "validate", path, "--json")
    assert proc.returncode == 1, proc.stderr
    body = json.loads(proc.stdout)
    assert body["valid"] is False and body["catalog_hash"] is None
    assert body["counts"] == {"error": 3, "quarantine": 0, "warning": 1}
    assert [(i["level"], i["path"]) for i in body["issues"]] == [
        ("error", "tools[1].side_effect"), ("error", "tools[2].roles"), ("error", "tools[1].name"),
        ("warning", "tools[1].parameters")]
    assert all(i["file"] == path for i in body["issues"])
    table = invoke_cli("catalog", "validate", path)
    assert table.returncode == 1
    assert f"error      {path}: tools[1].side_effect: side_effect must be one of" in table.stdout


def test_validate_quarantine_is_exit_1_but_builds(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.yaml", {"tools": [
        {"name": "ok", "side_effect": "none", "parameters": {"type": "object"}},
        {"name": "broken", "side_effect": "none", "parameters": {"type": "object", "required": "x"}},
        {"name": "open", "side_effect": "none"},
    ]})
    proc = invoke_cli("catalog", "validate", path, "--format", "json")
    assert proc.returncode == 1
    body = json.loads(proc.stdout)
    assert body["counts"] == {"error": 0, "quarantine": 1, "warning": 1}
    assert body["tools"] == 3 and len(body["catalog_hash"]) == 64


def test_validate_bad_format_option_is_usage_error() -> None:
    line = _one_line_error(run_cli("catalog", "validate", OK, "--format", "xml"))
    assert "--format must be one of table, json, md, html; got 'xml'" in line


def test_stats_json() -> None:
    proc = invoke_cli("catalog", "stats", OK, "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["tools"] == 2
    assert body["side_effect"] == {"none": 1, "write": 1}
    assert body["domain"] == {"financial": 2}
    assert body["namespace"] == {"(none)": 2}
    assert body["capability_prefix"] == {"financial": 2}
    assert (body["with_parameters"], body["without_parameters"], body["with_aliases"]) == (2, 0, 1)
    assert body["with_persian_text"] == 1
    assert (body["enabled"], body["deprecated"], body["quarantined"]) == (2, 0, 0)
    assert body["catalog_hash"] == load_catalog(OK).hash


def test_stats_table() -> None:
    proc = invoke_cli("catalog", "stats", OK)
    assert proc.returncode == 0
    assert "side_effect:" in proc.stdout and load_catalog(OK).hash in proc.stdout


@pytest.fixture()
def jsonl(tmp_path: Path) -> str:
    path = tmp_path / "tools.jsonl"
    rows = [{"name": "math.factorial", "description": "n!", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}}, "required": ["n"]}}, {"name": "weather", "description": "Weather", "parameters": None}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_convert_policy_free_source_requires_side_effect(jsonl: str, tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    line = _one_line_error(run_cli("catalog", "convert", jsonl, "--to", "tooldisc", "--out", str(out)))
    assert jsonl in line and "--side-effect" in line
    assert not out.exists()


def test_convert_jsonl_to_tooldisc_yaml(jsonl: str, tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    proc = invoke_cli("catalog", "convert", jsonl, "--to", "tooldisc", "--side-effect", "write", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert (body["from"], body["to"], body["tools"]) == ("jsonl", "tooldisc", 2)
    catalog = load_catalog(out)
    assert [t.name for t in catalog.tools] == ["math.factorial", "weather"]
    assert {t.side_effect for t in catalog.tools} == {"write"}
    assert catalog.hash == body["catalog_hash"]
    assert not list(tmp_path.glob(".c.yaml.*"))  # atomic write leaves no temp file


def test_convert_tooldisc_round_trip_keeps_hash(tmp_path: Path) -> None:
    out = tmp_path / "again.json"
    proc = invoke_cli("catalog", "convert", OK, "--to", "tooldisc", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert load_catalog(out).hash == load_catalog(OK).hash


def test_convert_to_openai_maps_names_reversibly(jsonl: str, tmp_path: Path) -> None:
    out = tmp_path / "openai.json"
    proc = invoke_cli("catalog", "convert", jsonl, "--to", "openai", "--side-effect", "none", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["renamed"] == {"math.factorial": "math_factorial"}
    tools = json.loads(out.read_text(encoding="utf-8"))
    assert [t["function"]["name"] for t in tools] == ["math_factorial", "weather"]
    assert tools[1]["function"]["parameters"] == {"type": "object"}
    assert "mapped to provider-safe names" in proc.stderr


def test_convert_mcp_to_anthropic_needs_no_side_effect(tmp_path: Path) -> None:
    src = tmp_path / "mcp.json"
    src.write_text(json.dumps({"tools": [{"name": "read", "inputSchema": {"type": "object"},
                                          "annotations": {"readOnlyHint": True}}]}), encoding="utf-8")
    out = tmp_path / "anthropic.yaml"
    proc = invoke_cli("catalog", "convert", str(src), "--to", "anthropic", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load(out.read_text(encoding="utf-8")) == [
        {"name": "read", "description": "", "input_schema": {"type": "object"}}]


@pytest.mark.parametrize(("args", "fragment"), [
    (["--to", "tooldisc", "--side-effect", "none", "--out", "x.yaml"], "--side-effect applies only to formats without policy"),
    (["--to", "tooldisc", "--out", "x.txt"], "--out must end in .json, .yaml or .yml"),
    (["--to", "gemini", "--out", "x.json"], "--to must be one of tooldisc, openai, anthropic, mcp"),
])
def test_convert_usage_errors(args: list[str], fragment: str, tmp_path: Path) -> None:
    args = [a if not a.startswith("x.") else str(tmp_path / a) for a in args]
    assert fragment in _one_line_error(run_cli("catalog", "convert", OK, *args))


def test_diff_identical_is_exit_0() -> None:
    proc = invoke_cli("catalog", "diff", OK, OK, "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["loosens_policy"] is False and body["changed"] == []


def test_diff_loosening_is_exit_1_in_every_format(tmp_path: Path) -> None:
    doc = yaml.safe_load(Path(OK).read_text(encoding="utf-8"))
    doc["tools"][1]["roles"] = []
    doc["tools"][1]["side_effect"] = "none"
    doc["tools"].append({"name": "new_tool", "side_effect": "none", "roles": ["owner"], "permissions": ["x.read"]})
    new = _write(tmp_path / "new.yaml", doc)
    js = invoke_cli("catalog", "diff", OK, new, "--format", "json")
    assert js.returncode == 1, js.stderr
    body = json.loads(js.stdout)
    assert body["added"] == ["new_tool"]
    assert body["changed"][0]["fields"] == ["side_effect", "roles"]
    assert [f["code"] for f in body["findings"]] == ["roles_emptied", "side_effect_downgraded"]
    md = invoke_cli("catalog", "diff", OK, new, "--format", "md")
    assert md.returncode == 1
    assert "### Policy loosened" in md.stdout and "| create_invoice | roles |" in md.stdout
    table = invoke_cli("catalog", "diff", OK, new)
    assert table.returncode == 1
    assert "POLICY LOOSENED (2 finding(s)):" in table.stdout
    assert "+ new_tool" in table.stdout
    assert md.stdout.split("\n")[2].startswith("**POLICY LOOSENED** — 1 added, 0 removed, 1 changed; 2 changes "
                                                "loosen policy: create_invoice (roles), create_invoice (side_effect)")
    page = invoke_cli("catalog", "diff", OK, new, "--format", "html")
    assert page.returncode == 1
    assert '<section class="banner bad" id="decision">\n<p class="word" dir="auto">POLICY LOOSENED</p>' in page.stdout
    assert '<td class="flag" dir="auto">roles</td>' in page.stdout  # the loosened field, marked
    from tooldisc.reports.html import external_references

    assert external_references(page.stdout) == [] and "<script" not in page.stdout


def test_diff_an_added_open_delete_tool_is_a_loosening(tmp_path: Path) -> None:
    """Issue 10 item 16: adding {name: drop_database, side_effect: delete} must fail the review gate."""
    doc = yaml.safe_load(Path(OK).read_text(encoding="utf-8"))
    doc["tools"].append({"name": "drop_database", "side_effect": "delete"})
    new = _write(tmp_path / "new.yaml", doc)
    table = invoke_cli("catalog", "diff", OK, new)
    assert table.returncode == 1, table.stdout + table.stderr
    assert "policy: no loosening" not in table.stdout
    assert "! drop_database: side_effect: an added tool that is not read-only (side effect delete)" in table.stdout
    assert "! drop_database: roles: an added tool with no roles: open to every role" in table.stdout


@pytest.mark.shared
def test_validate_shared_hesabix(shared: Path) -> None:
    path = str(shared / "benchmarks" / "hesabix" / "catalog.json")
    proc = invoke_cli("catalog", "validate", path, "--json")
    assert proc.returncode == 1
    body = json.loads(proc.stdout)
    assert body["tools"] == 180
    assert body["counts"]["error"] == 0 and body["counts"]["quarantine"] == 1
    assert next(i["path"] for i in body["issues"] if i["level"] == "quarantine").startswith("tools[137].parameters")


def test_convert_leaves_quarantined_tools_out_of_provider_exports(tmp_path: Path) -> None:
    src = _write(tmp_path / "q.yaml", {"tools": [
        {"name": "ok", "side_effect": "none", "parameters": {"type": "object"}},
        {"name": "broken", "side_effect": "none", "parameters": {"type": "object", "required": "x"}},
    ]})
    out = tmp_path / "mcp.json"
    proc = invoke_cli("catalog", "convert", src, "--to", "mcp", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads(out.read_text(encoding="utf-8"))["tools"]] == ["ok"]
    assert "'broken' is quarantined (left out of the export)" in proc.stderr


@pytest.mark.parametrize(("old", "new", "code"), [
    ("none", "delete", "side_effect_escalated"), ("write", "delete", "side_effect_escalated"),
    ("write", "execute", "side_effect_escalated"), (None, "none", "side_effect_now_known"),
])
def test_diff_a_side_effect_moving_up_or_out_of_unknown_is_exit_1(tmp_path: Path, old, new, code) -> None:
    """Issue 25 item 3, measured on main: none → delete, write → delete and write → execute (same roles,
    same permissions) exited 0. One process per pair: the exit code is the review gate."""
    tool = {"name": "purge", "roles": ["owner"], "permissions": ["invoices.purge"], "parameters": {"type": "object"}}
    a = _write(tmp_path / "a.yaml", {"catalog_version": "1", "tools": [{**tool, "side_effect": old}]})
    b = _write(tmp_path / "b.yaml", {"catalog_version": "1", "tools": [{**tool, "side_effect": new}]})
    proc = invoke_cli("catalog", "diff", a, b, "--json")
    assert proc.returncode == 1, proc.stderr
    assert [f["code"] for f in json.loads(proc.stdout)["findings"]] == [code]
    assert invoke_cli("catalog", "diff", b, a).returncode == (1 if old is not None else 0)
