"""Gold statistics and the deterministic stratified split."""

from __future__ import annotations

import pytest

from tooldisc.errors import UsageError
from tooldisc.gold import GoldQuery, GoldSet, gold_stats, language, split


def test_language() -> None:
    assert language("فاکتور فروش بزن") == "fa"
    assert language("show invoice 124 فاکتور") == "fa"
    assert language("show invoice ۱۲۴") == "en"  # Persian digits are not letters
    assert language("") == "en"


def test_counts() -> None:
    gold = GoldSet((
        GoldQuery("1", "فاکتور بزن", ("a",), intent="write", category="invoice", difficulty="easy"),
        GoldQuery("2", "list invoices", ("b",), intent="read", category="invoice", hard_case="english"),
        GoldQuery("3", "hello", (), intent="none", no_match=True, hard_case="no_match"),
    ))
    stats = gold_stats(gold)
    assert stats.to_dict() == {
        "total": 3, "matched": 2, "no_match": 1,
        "by_intent": {"none": 1, "read": 1, "write": 1},
        "by_category": {"(none)": 1, "invoice": 2},
        "by_difficulty": {"(none)": 2, "easy": 1},
        "by_hard_case": {"(none)": 1, "english": 1, "no_match": 1},
        "by_language": {"en": 2, "fa": 1},
    }


def make_gold() -> GoldSet:
    qs = []
    for i in range(40):
        qs.append(GoldQuery(f"r{i}", "q", ("a",), intent="read"))
    for i in range(10):
        qs.append(GoldQuery(f"w{i}", "q", ("a",), intent="write"))
    for i in range(10):
        qs.append(GoldQuery(f"n{i}", "q", (), intent="none", no_match=True))
    return GoldSet(tuple(qs), dataset_version="v1", catalog_version="c1")


def test_split_is_stratified_deterministic_and_disjoint() -> None:
    gold = make_gold()
    tune, test = split(gold, test_fraction=0.3, seed=0)
    assert len(test) == 12 + 3 + 3 and len(tune) == 60 - 18
    assert {q.id for q in tune}.isdisjoint(q.id for q in test)
    assert sum(q.intent == "write" for q in test) == 3 and sum(q.no_match for q in test) == 3
    assert split(gold, test_fraction=0.3, seed=0) == (tune, test)
    assert split(gold, test_fraction=0.3, seed=1)[1] != test
    assert test.dataset_version == "v1" and test.catalog_version == "c1"
    order = [q.id for q in gold]
    assert [q.id for q in test] == [i for i in order if i in {q.id for q in test}]  # file order kept


def test_split_is_stable_when_queries_are_added() -> None:
    gold = make_gold()
    _, test = split(gold, 0.5, seed=3)
    bigger = gold.with_queries((*gold.queries, GoldQuery("r_new", "q", ("a",), intent="read")))
    _, test2 = split(bigger, 0.5, seed=3)
    moved = {q.id for q in test} ^ {q.id for q in test2}
    assert len(moved - {"r_new"}) <= 1


def test_split_edges_and_errors() -> None:
    gold = make_gold()
    assert len(split(gold, 0.0)[1]) == 0 and len(split(gold, 1.0)[0]) == 0
    with pytest.raises(UsageError, match=r"'test_fraction' parameter must be a number in the range \[0, 1\]. Got 1.5"):
        split(gold, 1.5)
    with pytest.raises(UsageError, match="'seed' parameter must be an int"):
        split(gold, 0.3, seed="x")  # type: ignore[arg-type]
