"""Gold validation: self-consistency, and against a catalog's tool names and version."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tooldisc.gold import GoldQuery, GoldSet, load_gold, validate_gold


def gq(id: str, primary=("a",), **kw) -> GoldQuery:
    return GoldQuery(id=id, query=kw.pop("query", f"query {id}"), primary_expected_tools=tuple(primary), **kw)


def test_clean_set_has_no_issues() -> None:
    gold = GoldSet((gq("1"), gq("2", (), no_match=True, intent="none")), catalog_version="v1")
    assert validate_gold(gold, ["a", "b"], catalog_version="v1") == []


def test_every_rule() -> None:
    gold = GoldSet((
        gq("1", ("a",), forbidden_tools=("a",)),
        gq("1", ("b",)),
        gq("3", query="   "),
        gq("4", (), no_match=True, acceptable_tools=("b",)),
        gq("5", ()),
        gq("6", ("a",), acceptable_tools=("a", "zz")),
    ), catalog_version="v1")
    issues = validate_gold(gold, ["a", "b"], catalog_version="v2")
    rendered = [i.render("g.json") for i in issues]
    assert rendered == [
        "g.json: queries[0]: query '1' names a as both expected and forbidden",
        "g.json: queries[1]: duplicate id '1' (first at queries[0])",
        "g.json: queries[2]: query '3' has an empty query text",
        "g.json: queries[3]: query '4' is no_match but names expected tools b",
        "g.json: queries[4]: query '5' has no primary_expected_tools; name one or set no_match: true",
        "g.json: queries[5].acceptable_tools: query '6' names tool 'zz', which the catalog lacks",
        "g.json: catalog_version: gold set was written for catalog 'v1'; the catalog is 'v2'",
        "g.json: queries[5]: query '6' lists a as both primary and acceptable; primary wins",
    ]
    assert [i.level for i in issues] == ["error"] * 6 + ["warning"] * 2


def test_accepts_a_catalog_like_object() -> None:
    catalog = SimpleNamespace(tools=(SimpleNamespace(name="a"),), version="v9")
    gold = GoldSet((gq("1", ("a", "b")),), catalog_version="v1")
    issues = validate_gold(gold, catalog)
    assert [(i.level, i.where) for i in issues] == [
        ("error", "queries[0].primary_expected_tools"), ("warning", "catalog_version")]


def test_without_catalog_unknown_tools_are_not_checked() -> None:
    assert validate_gold(GoldSet((gq("1", ("nowhere",)),))) == []


@pytest.mark.shared
def test_hesabix_gold_against_its_catalog(shared: Path) -> None:
    bench = shared / "benchmarks" / "hesabix"
    catalog = json.loads((bench / "catalog.json").read_text(encoding="utf-8"))
    names = [t["name"] for t in catalog["tools"]]
    issues = validate_gold(load_gold(bench / "gold.dev.json"), names, catalog_version=catalog.get("catalog_version"))
    assert [i for i in issues if i.level == "error"] == []
