"""The devops gold set (gold/data/devops/) loads through the library and is coherent.

A second, English-only dataset in a different domain from the default one, so ranking
weights are tuned across two gold sets. These tests check the data, not the ranker.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.gold.gold_checks import INTENT_ALLOWS, INTENT_PRIMARY, content_words
from tooldisc.discovery.catalog.io import load_catalog
from tooldisc.discovery.text import split_name
from tooldisc.gold.loader import load_gold

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "gold" / "data" / "devops"
CATALOG = DATA / "catalog.yaml"
GOLD = DATA / "gold.json"

INTENTS = {"read", "write", "delete", "export", "execute", "none"}
SIDE_EFFECTS = {"none", "write", "delete", "export", "execute"}
HARD_CASES = {
    "typos", "short", "conversational", "synonyms", "similar_tools",
    "multi-intent", "ambiguous", "long", "no_match",
}

@pytest.fixture(scope="module")
def catalog():
    return load_catalog(CATALOG)


@pytest.fixture(scope="module")
def gold():
    return load_gold(GOLD)


@pytest.fixture(scope="module")
def tools(catalog):
    return catalog.by_name


def _tool_words(tool) -> set[str]:
    words = content_words(split_name(tool.name))
    for alias in tool.aliases:
        words |= content_words(split_name(alias))
    return words


def test_versions(catalog, gold):
    assert catalog.version == "tooldisc-devops-1"
    assert gold.dataset_version == "tooldisc-devops-gold-1"
    assert gold.catalog_version == "tooldisc-devops-1"


def test_catalog_is_clean(catalog):
    assert len(catalog) >= 100
    assert [t.name for t in catalog.tools if t.quarantine] == []
    assert [str(w) for w in catalog.warnings] == []
    effects = Counter(t.side_effect for t in catalog.tools)
    assert set(effects) == SIDE_EFFECTS
    assert effects["none"] == max(effects.values())


def test_about_half_the_tools_have_no_discovery_hints(catalog):
    bare = [t for t in catalog.tools if not (t.aliases or t.keywords or t.examples)]
    assert 0.35 <= len(bare) / len(catalog) <= 0.65


def test_unique_ids_and_vocabularies(gold):
    ids = [q.id for q in gold]
    assert len(ids) >= 250
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    for q in gold:
        assert q.query.strip(), q.id
        assert q.intent in INTENTS, q.id
        assert (q.hard_case or "") in HARD_CASES | {""}, q.id
        assert q.difficulty in {"easy", "medium", "hard"}, q.id
        assert q.source == "tooldisc-devops", q.id
        for role, content in q.history:
            assert role == "user" and content.strip(), q.id


def test_every_intent_and_hard_case_present(gold):
    assert {q.intent for q in gold} == INTENTS
    assert {q.hard_case for q in gold if q.hard_case} == HARD_CASES


def test_every_referenced_tool_exists(gold, tools):
    named = {n for q in gold for n in q.primary_expected_tools + q.acceptable_tools + q.forbidden_tools}
    assert sorted(named - set(tools)) == []


def test_no_match_queries(gold):
    no_match = [q for q in gold if q.no_match]
    assert len(no_match) >= 25
    for q in no_match:
        assert q.primary_expected_tools == () and q.acceptable_tools == (), q.id
        assert q.intent == "none", q.id
    for q in gold:
        if not q.no_match:
            assert q.primary_expected_tools, q.id
            assert q.intent != "none", q.id


def test_labels_respect_the_side_effect_matrix(gold, tools):
    for q in gold:
        for name in q.primary_expected_tools + q.acceptable_tools:
            assert tools[name].side_effect in INTENT_ALLOWS[q.intent], (q.id, name)
        if q.matched:
            effects = {tools[name].side_effect for name in q.primary_expected_tools}
            assert INTENT_PRIMARY[q.intent] & effects, q.id
        good = set(q.primary_expected_tools) | set(q.acceptable_tools)
        assert not good & set(q.forbidden_tools), q.id
        assert not set(q.primary_expected_tools) & set(q.acceptable_tools), q.id


def test_multi_intent_and_history(gold):
    multi = [q for q in gold if q.hard_case == "multi-intent"]
    assert multi and all(q.require_all_primary and len(q.primary_expected_tools) >= 2 for q in multi)
    conversational = [q for q in gold if q.hard_case == "conversational"]
    assert conversational and all(q.history for q in conversational)


def test_half_of_matched_queries_share_no_word_with_their_tools(gold, tools):
    matched = [q for q in gold if q.matched]
    disjoint = 0
    for q in matched:
        tool_words: set[str] = set()
        for name in q.primary_expected_tools:
            tool_words |= _tool_words(tools[name])
        if not content_words(q.query) & tool_words:
            disjoint += 1
    assert disjoint / len(matched) >= 0.5, f"{disjoint}/{len(matched)}"
