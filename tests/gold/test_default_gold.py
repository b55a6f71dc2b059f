"""The shipped default gold set (gold/data/gold.json) against the default catalog."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.gold.gold_checks import INTENT_ALLOWS, INTENT_PRIMARY, content_words
from tooldisc.discovery.text import split_name

ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "gold" / "data" / "gold.json"
CATALOG = ROOT / "gold" / "data" / "catalog.yaml"

EXPECTED_COUNT = 473
INTENTS = {"read", "write", "delete", "export", "execute", "none"}
HARD_CASES = {
    "typos", "english", "short", "conversational", "synonyms", "similar_tools",
    "multi-intent", "ambiguous", "long", "no_match",
}

def _load_gold() -> dict:
    return json.loads(GOLD.read_text(encoding="utf-8"))


def _load_catalog() -> dict[str, dict]:
    data = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
    return {tool["name"]: tool for tool in data["tools"]}


@pytest.fixture(scope="module")
def gold() -> dict:
    return _load_gold()


@pytest.fixture(scope="module")
def queries(gold: dict) -> list[dict]:
    return gold["queries"]


@pytest.fixture(scope="module")
def catalog() -> dict[str, dict]:
    return _load_catalog()


def _named_tools(query: dict) -> set[str]:
    return (set(query["primary_expected_tools"]) | set(query["acceptable_tools"])
            | set(query["forbidden_tools"]))


def _tool_words(tool: dict) -> set[str]:
    words = content_words(split_name(tool["name"]))
    for alias in tool.get("aliases") or []:
        words |= content_words(split_name(alias))
    return words


def test_file_loads_with_versions(gold: dict) -> None:
    assert gold["dataset_version"] == "tooldisc-default-gold-1"
    assert gold["tool_catalog_version"] == "tooldisc-default-1"
    assert isinstance(gold["queries"], list)


def test_exact_count_and_unique_ids(queries: list[dict]) -> None:
    assert len(queries) == EXPECTED_COUNT
    ids = [q["id"] for q in queries]
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    assert not dupes, dupes


def test_fields_and_vocabularies(queries: list[dict]) -> None:
    for q in queries:
        assert q["query"].strip(), q["id"]
        assert q["intent"] in INTENTS, q["id"]
        assert q["hard_case"] in HARD_CASES | {""}, q["id"]
        assert q["difficulty"] in {"easy", "medium", "hard"}, q["id"]
        assert isinstance(q["history"], list), q["id"]
        for turn in q["history"]:
            assert turn["role"] == "user" and turn["content"].strip(), q["id"]
        assert q["source"] == "tooldisc-default", q["id"]


def test_every_intent_and_hard_case_appears(queries: list[dict]) -> None:
    assert {q["intent"] for q in queries} == INTENTS
    assert {q["hard_case"] for q in queries} >= HARD_CASES


def test_no_match_queries(queries: list[dict]) -> None:
    no_match = [q for q in queries if q["no_match"]]
    assert 25 <= len(no_match) <= 35
    for q in no_match:
        assert q["primary_expected_tools"] == [], q["id"]
        assert q["acceptable_tools"] == [], q["id"]
        assert q["intent"] == "none", q["id"]
    for q in queries:
        if not q["no_match"]:
            assert q["primary_expected_tools"], q["id"]
            assert q["intent"] != "none", q["id"]


def test_every_named_tool_exists_and_is_usable(queries: list[dict], catalog: dict[str, dict]) -> None:
    missing = sorted({name for q in queries for name in _named_tools(q) if name not in catalog})
    assert not missing, missing
    for q in queries:
        for name in q["primary_expected_tools"] + q["acceptable_tools"]:
            tool = catalog[name]
            assert tool.get("enabled", True) is not False, (q["id"], name)
            assert not tool.get("deprecated", False), (q["id"], name)
            assert tool.get("side_effect") in {"none", "write", "delete", "export", "execute"}, (q["id"], name)


def test_intent_allows_expected_tools(queries: list[dict], catalog: dict[str, dict]) -> None:
    for q in queries:
        allowed = INTENT_ALLOWS[q["intent"]]
        for name in q["primary_expected_tools"] + q["acceptable_tools"]:
            assert catalog[name]["side_effect"] in allowed, (q["id"], name, q["intent"])
        if q["primary_expected_tools"]:
            effects = {catalog[name]["side_effect"] for name in q["primary_expected_tools"]}
            assert effects & INTENT_PRIMARY[q["intent"]], (q["id"], q["intent"], effects)


def test_nothing_both_expected_and_forbidden(queries: list[dict]) -> None:
    for q in queries:
        good = set(q["primary_expected_tools"]) | set(q["acceptable_tools"])
        assert not good & set(q["forbidden_tools"]), q["id"]
        assert not set(q["primary_expected_tools"]) & set(q["acceptable_tools"]), q["id"]


def test_half_of_matched_queries_share_no_word_with_their_tools(
    queries: list[dict], catalog: dict[str, dict]
) -> None:
    matched = [q for q in queries if q["primary_expected_tools"]]
    disjoint = 0
    for q in matched:
        words = content_words(q["query"])
        tool_words: set[str] = set()
        for name in q["primary_expected_tools"]:
            tool_words |= _tool_words(catalog[name])
        if not words & tool_words:
            disjoint += 1
    assert disjoint / len(matched) >= 0.5, f"{disjoint}/{len(matched)}"
