"""``tooldisc eval --schemas``: schema tokens of full K=48 vs progressive K=15 offers."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from tests.conftest import invoke_cli


def _schema() -> dict:
    return json.loads(resources.files("tooldisc.evaluation").joinpath("data/eval.schema.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def shipped_runs() -> tuple[str, str]:
    """``eval --json`` with and without ``--schemas`` on the shipped data."""
    runs = [invoke_cli("eval", "--schemas", "--json"), invoke_cli("eval", "--json")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    return runs[0].stdout, runs[1].stdout


def test_schemas_section_on_shipped_data(shipped_runs: tuple[str, str]) -> None:
    doc = json.loads(shipped_runs[0])
    jsonschema.validate(doc, _schema())
    sec = doc["schemas"]
    assert (sec["k_full"], sec["k_initial"], sec["max_schemas_per_call"]) == (48, 15, 32)
    assert sec["baseline"] == "full_k48"
    full, prog = sec["strategies"]["full_k48"], sec["strategies"]["progressive_k15"]
    for s in (full, prog):
        assert s["requests"] == doc["queries"]
        assert 0 <= s["requests_with_search"] <= s["requests"]
        # per request initial <= incremental <= wire, so every order statistic keeps that order
        for stat in ("mean", "p50", "p95", "max"):
            assert s["initial"][stat] <= s["incremental"][stat] <= s["wire"][stat]
    # one call, no search: every measure of the full offer is its first call
    assert full["initial"] == full["incremental"] == full["wire"] and full["requests_with_search"] == 0
    assert full["meta_tool"] is False and prog["meta_tool"] is True
    assert full["wire_saving"] == 0.0
    assert prog["wire_saving"] == round(1 - prog["wire"]["mean"] / full["wire"]["mean"], 6)
    assert prog["initial_saving"] == round(1 - prog["initial"]["mean"] / full["initial"]["mean"], 6)
    # 15 schemas + search_tools cost less up front than 48 on the shipped catalog
    assert prog["initial"]["mean"] < full["initial"]["mean"]


def test_default_output_is_unchanged_without_schemas(shipped_runs: tuple[str, str]) -> None:
    with_schemas, plain = json.loads(shipped_runs[0]), json.loads(shipped_runs[1])
    assert "schemas" not in plain
    del with_schemas["schemas"]
    assert with_schemas == plain
    assert shipped_runs[1] == json.dumps(plain, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def test_schemas_in_markdown_and_table(tiny_files) -> None:
    cat, gold = tiny_files
    md = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--schemas", "--format", "md")
    assert md.returncode == 0, md.stderr
    assert "## Schema tokens per request (full K=48 vs progressive K=15)" in md.stdout
    assert "| per request | full_k48 | progressive_k15 |" in md.stdout
    assert "| wire tokens vs full_k48 | baseline |" in md.stdout
    table = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--schemas")
    assert table.returncode == 0, table.stderr
    assert "Schema tokens per request" in table.stdout and "progressive_k15" in table.stdout
    plain = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--format", "md")
    assert "Schema tokens" not in plain.stdout


def test_schemas_section_is_deterministic_and_reuses_or_builds_the_engine(tiny) -> None:
    from tooldisc.evaluation.run import run_discovery
    from tooldisc.evaluation.schemas import schemas_section

    _cat, gold, engine = tiny
    result = run_discovery(engine, gold, engine.default_context, 3)
    a = schemas_section(result, engine=engine)
    assert a == schemas_section(result) == schemas_section(result, engine=engine)
    assert a["strategies"]["full_k48"]["requests"] == len(gold)
    small = schemas_section(result, engine=engine, k_full=5, k_initial=2, search_limit=1)
    assert set(small["strategies"]) == {"full_k5", "progressive_k2"} and small["baseline"] == "full_k5"
