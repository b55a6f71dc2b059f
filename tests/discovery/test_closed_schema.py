"""Closed schemas (issue 25 item 1): an unknown key is an error naming the nearest known key, in
every document that carries policy or behaviour; ``x-`` keys are the one extension place.

Exit codes go through the real command in a subprocess; the loaders' messages through Python.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import invoke_cli, run_cli
from tooldisc.closed_schema import fold, is_extension, key_problems, nearest, unknown_field
from tooldisc.discovery.catalog import build_catalog, catalog_from_tools, validate_catalog_data
from tooldisc.discovery.config import config_from_mapping
from tooldisc.discovery.context import context_from_mapping
from tooldisc.discovery.model import Tool
from tooldisc.errors import ConfigError, DataError

PURGE = {"name": "purge_invoices", "description": "purge all invoices", "side_effect": "delete",
         "roles": ["owner"], "permissions": ["invoices.purge"], "parameters": {"type": "object"}}


def _write(path: Path, doc: Any) -> str:
    path.write_text(yaml.safe_dump(doc, allow_unicode=True) if path.suffix == ".yaml" else json.dumps(doc),
                    encoding="utf-8")
    return str(path)


def _one_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


# --------------------------------------------------------------------------- the case, end to end


def test_a_misspelled_policy_key_no_longer_opens_a_delete_tool(tmp_path: Path) -> None:
    """Measured on main: ``Roles:`` + ``permission:`` loaded with two warnings, validate exited 0 and a
    viewer was offered the delete tool. Now: exit 2 for the command, exit 1 for validate."""
    tool = {k: v for k, v in PURGE.items() if k not in ("roles", "permissions")}
    path = _write(tmp_path / "c.yaml", {"catalog_version": "1",
                                        "tools": [{**tool, "Roles": ["owner"], "permission": ["invoices.purge"]}]})
    line = _one_error(run_cli("discover", "purge invoices", "--catalog", path, "--role", "viewer", "--json"))
    assert "c.yaml: tools[0].Roles: unknown field; did you mean 'roles'? (and 1 more" in line
    checked = run_cli("catalog", "validate", path)
    assert checked.returncode == 1, checked.stdout
    assert "tools[0].Roles: unknown field; did you mean 'roles'?" in checked.stdout
    assert "tools[0].permission: unknown field; did you mean 'permissions'?" in checked.stdout
    js = json.loads(run_cli("catalog", "validate", path, "--json").stdout)
    assert js["valid"] is False and js["counts"]["error"] == 2 and js["counts"]["warning"] == 0


def test_extension_keys_load_and_are_never_read(tmp_path: Path) -> None:
    """``x-`` keys at the top level and in a tool: the catalog loads, exit 0, and hashes as without them."""
    plain = {"catalog_version": "1", "tools": [PURGE]}
    extended = {"catalog_version": "1", "x-owner": "team-a", "tools": [
        {**PURGE, "x-ticket": "SEC-1", "x-notes": {"reviewed": True, "by": ["ann"]}}]}
    a, b = _write(tmp_path / "a.yaml", plain), _write(tmp_path / "b.yaml", extended)
    assert invoke_cli("catalog", "validate", b).returncode == 0
    diff = invoke_cli("catalog", "diff", a, b, "--json")
    body = json.loads(diff.stdout)
    assert diff.returncode == 0 and body["changed"] == [] and body["old_hash"] == body["new_hash"]


@pytest.mark.parametrize(("tool_extra", "where", "message"), [
    ({"x-roles": ["viewer"]}, "tools[0].x-roles", "an extension key may not be named after the field 'roles'"),
    ({"x-permission": []}, "tools[0].x-permission", "named after the field 'permissions'"),
    ({"x-team": {"meta": {"Roles": ["owner"]}}}, "tools[0].x-team.meta.Roles", "a policy field inside extension data"),
    ({"x-team": [{"side_effect": "none"}]}, "tools[0].x-team[0].side_effect", "a policy field inside extension data"),
])
def test_policy_can_never_hide_in_extension_data(tool_extra: dict, where: str, message: str) -> None:
    problems = [(i.path, i.message) for i in validate_catalog_data({"tools": [{**PURGE, **tool_extra}]})
                if i.level == "error"]
    assert problems and problems[0][0] == where and message in problems[0][1]


def test_top_level_unknown_key_is_an_error() -> None:
    with pytest.raises(DataError, match=r"catalog_verison: unknown field; did you mean 'catalog_version'\?"):
        build_catalog({"catalog_verison": "1", "tools": [PURGE]})


@pytest.mark.parametrize("name", ["Search_Tools", "search_tools ", " search_tools", "SEARCH_TOOLS",
                                  "ｓｅａｒｃｈ_ｔｏｏｌｓ", "ѕearch_tools", "search_tοols"])
def test_names_folding_to_search_tools_are_refused_at_load(name: str, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="is reserved for tooldisc's meta-tool"):
        build_catalog({"tools": [{"name": name, "side_effect": "none"}]})
    with pytest.raises(DataError, match="reserved"):
        catalog_from_tools([Tool(name=name, side_effect="none")])


def test_the_reserved_name_through_the_command(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.json", {"tools": [{"name": "Search_Tools ", "side_effect": "none"}]})
    assert "is reserved for tooldisc's meta-tool" in _one_error(run_cli("discover", "x", "--catalog", path))


@pytest.mark.parametrize("name", ["search-tools", "search_tools_v2", "my_search_tools", "search.tools"])
def test_names_that_only_resemble_it_load(name: str) -> None:
    assert build_catalog({"tools": [{"name": name, "side_effect": "none"}]}).tools[0].name == name


# --------------------------------------------------------------------------- other documents


def test_context_file_is_closed_and_takes_extensions(tmp_path: Path) -> None:
    ok = _write(tmp_path / "ok.yaml", {"tenant": "t1", "roles": ["viewer"], "x-requested-by": "ann"})
    cat = str(Path(__file__).parents[1] / "cli" / "data" / "ok_catalog.yaml")
    assert run_cli("discover", "list invoices", "--catalog", cat, "--context-file", ok).returncode == 0
    bad = _write(tmp_path / "bad.yaml", {"tenant": "t1", "Roles": ["owner"]})
    assert "bad.yaml: Roles: unknown field; did you mean 'roles'?" in _one_error(
        run_cli("discover", "x", "--catalog", cat, "--context-file", bad))
    hidden = _write(tmp_path / "hidden.yaml", {"tenant": "t1", "x-extra": {"forced": ["delete_invoice"]}})
    assert "x-extra.forced: a policy field inside extension data" in _one_error(
        run_cli("discover", "x", "--catalog", cat, "--context-file", hidden))


@pytest.mark.parametrize("value", ["abc", "owner"])
def test_a_context_file_list_is_never_one_string(value: str) -> None:
    with pytest.raises(ConfigError, match="forced must be a list of non-empty strings"):
        context_from_mapping({"forced": value})


def test_ranker_config_keys_and_extensions() -> None:
    cfg = config_from_mapping({"x-tuned-by": "ann", "weights": {"bm25": 0.5, "x-note": "kept"},
                               "bm25": {"k1": 1.0, "x-why": "default"}})
    assert cfg.weights == {"bm25": 0.5} and cfg.bm25.k1 == 1.0
    assert cfg.hash == config_from_mapping({"weights": {"bm25": 0.5}, "bm25": {"k1": 1.0}}).hash
    with pytest.raises(ConfigError, match=r"weights.ngarm: unknown field; did you mean 'ngram'\?"):
        config_from_mapping({"weights": {"ngarm": 1}})
    with pytest.raises(ConfigError, match=r"Weights: unknown field; did you mean 'weights'\?"):
        config_from_mapping({"Weights": {"bm25": 1}})


@pytest.mark.parametrize(("raw", "where"), [
    ({"weights": {"bm25": 1e308}}, "weights.bm25"),
    ({"weights": {"ngram": -1}}, "weights.ngram"),
    ({"fields": {"name": 1e6}}, "fields.name"),
])
def test_config_numbers_are_bounded(raw: dict, where: str) -> None:
    with pytest.raises(ConfigError, match=rf"The '{where}' parameter must be a number in the range \[0, 1000\]"):
        config_from_mapping(raw)


def test_a_config_at_its_largest_gives_finite_json(tmp_path: Path) -> None:
    """Every weight and field weight at the top of its range, k1 and the history cap too: the offer's
    numbers stay finite (weights that overflowed to NaN could reach JSON before the ranges)."""
    from tooldisc.discovery.config import FEATURE_NAMES, FIELDS

    # (the embedding weight needs the semantic extra; its cosine is in [-1, 1] like the other features)
    doc = {"weights": dict.fromkeys((f for f in FEATURE_NAMES if f != "embedding"), 1000.0), "fields": dict.fromkeys(FIELDS, 1000.0),
           "bm25": {"k1": 100.0}, "history": {"cap": 100.0}}
    path = _write(tmp_path / "big.yaml", doc)
    proc = invoke_cli("discover", "show unpaid invoices", "--config", path, "--json", "--k", "auto")
    assert proc.returncode == 0, proc.stderr

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-finite number {constant} in the offer JSON")

    offer = json.loads(proc.stdout, parse_constant=refuse)
    assert offer["candidates"] and all(c["score"] > 0 for c in offer["candidates"])


def test_gates_file_is_closed_and_bounded(tmp_path: Path) -> None:
    from tooldisc.canary.config import parse_gates

    assert parse_gates({"x-owner": "sre", "margins": {"latency": {"absolute": 50, "x-unit": "ms"}}}, "g").margins[
        "latency"].value == 50
    with pytest.raises(ConfigError, match=r"margins.latncy: unknown field; did you mean 'latency'\?"):
        parse_gates({"margins": {"latncy": {"relative": 0.1}}}, "g")
    with pytest.raises(ConfigError, match=r"shadow.min_elligible_turns: unknown field; did you mean"):
        parse_gates({"shadow": {"min_elligible_turns": 3}}, "g")
    with pytest.raises(ConfigError, match="min_requests_per_arm: The 'min_requests_per_arm' parameter must be an int in the range"):
        parse_gates({"min_requests_per_arm": 10**30}, "g")
    with pytest.raises(ConfigError, match=r"margins\.latency: The 'margins\.latency' parameter must be a number in the range \(0, 60000\)"):
        parse_gates({"margins": {"latency": {"absolute": 1e308}}}, "g")


def test_plan_is_closed(tmp_path: Path) -> None:
    from tooldisc.agent.plan import parse_plan

    plan = {"decision": "tools", "x-model": "m1", "actions": [{"id": "a1", "tool": "t", "x-why": "because"}]}
    assert parse_plan(plan).actions[0].tool == "t"
    with pytest.raises(DataError, match=r"actions\[0\].depends: unknown field; did you mean 'depends_on'\?"):
        parse_plan({"decision": "tools", "actions": [{"id": "a1", "tool": "t", "depends": ["a0"]}]})
    with pytest.raises(DataError, match=r"Actions: unknown field; did you mean 'actions'\?"):
        parse_plan({"decision": "tools", "Actions": []})


def test_tools_jsonl_ignores_unknown_keys_but_not_policy_lookalikes(tmp_path: Path) -> None:
    good = tmp_path / "tools.jsonl"
    good.write_text(json.dumps({"name": "a", "description": "d", "source": "x", "api_name": "y"}) + "\n")
    assert run_cli("catalog", "stats", str(good)).returncode == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"name": "a", "Roles": ["owner"]}) + "\n")
    assert "'Roles' reads as the tooldisc policy field 'roles'" in _one_error(run_cli("catalog", "stats", str(bad)))


# --------------------------------------------------------------------------- the shared helper


def test_the_helper_wording() -> None:
    assert unknown_field("Roles", ("roles", "name")) == "unknown field; did you mean 'roles'?"
    assert unknown_field("rοles", ("roles", "name")) == "unknown field; did you mean 'roles'?"  # Greek omicron
    assert unknown_field("zzz", ("roles", "name")) == ("unknown field; known: name, roles "
                                                      "(extension data goes under x- keys)")
    assert unknown_field("zzz", ("a",), extensions=False) == "unknown field; known: a"
    assert nearest("PERMISSION", ("permissions", "roles")) == "permissions"
    assert fold(" Ｒoles ") == "roles" and is_extension("x-a") and not is_extension("X-a")
    assert list(key_problems({"a": 1, "x-b": 2, "c": 3}, ("a",))) == [("c", "unknown field; known: a "
                                                                            "(extension data goes under x- keys)")]
