"""Measures as value objects: parsing, printing, hashing, and the errors for bad names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooldisc.errors import UsageError
from tooldisc.metrics import (
    MEASURES,
    MRR,
    NDCG,
    AvgK,
    CandidateRecall,
    Complete,
    FalseAbstention,
    Forbidden,
    Hit,
    LatencyP50,
    LatencyP95,
    NoMatchSuccess,
    Precision,
    Recall,
    SchemaTokens,
    parse_measure,
    parse_measures,
)


@pytest.mark.parametrize(
    ("name", "measure"),
    [
        ("hit@10", Hit(cutoff=10)),
        ("complete@5", Complete(cutoff=5)),
        ("recall@3", Recall(cutoff=3)),
        ("MRR", MRR()),
        ("MRR@15", MRR(cutoff=15)),
        ("P@10", Precision(cutoff=10)),
        ("nDCG@10", NDCG(cutoff=10)),
        ("nDCG", NDCG()),
        ("forbidden@15", Forbidden(cutoff=15)),
        ("no_match_success", NoMatchSuccess()),
        ("false_abstention", FalseAbstention()),
        ("avg_k", AvgK()),
        ("schema_tokens", SchemaTokens()),
        ("latency_p50", LatencyP50()),
        ("latency_p95", LatencyP95()),
        ("candidate_recall@100", CandidateRecall(cutoff=100)),
    ],
)
def test_parse_and_print_round_trip(name: str, measure) -> None:
    assert parse_measure(name) == measure
    assert str(measure) == name
    assert parse_measure(str(measure)) == measure


def test_names_match_case_insensitively_and_print_canonically() -> None:
    assert parse_measure("ndcg@10") == NDCG(cutoff=10)
    assert str(parse_measure("NDCG@10")) == "nDCG@10"
    assert parse_measure(" mrr ") == MRR()


def test_measures_are_hashable_value_objects() -> None:
    table = {parse_measure("nDCG@10"): 1.0, Hit(cutoff=5): 2.0}
    assert table[NDCG(cutoff=10)] == 1.0
    assert table[parse_measure("hit@5")] == 2.0
    assert Hit(cutoff=5) != Recall(cutoff=5)  # same cutoff, different measure
    assert NDCG(cutoff=10) != NDCG(cutoff=5)
    with pytest.raises(AttributeError):
        NDCG(cutoff=10).cutoff = 3  # type: ignore[misc]


def test_parse_measures_splits_and_deduplicates() -> None:
    assert parse_measures("hit@5, MRR,hit@5") == (Hit(cutoff=5), MRR())
    assert parse_measures(["P@10", Precision(cutoff=10), NDCG(cutoff=3)]) == (Precision(cutoff=10), NDCG(cutoff=3))


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("ndgc@10", "unknown measure 'ndgc@10'; allowed: hit[@K], complete[@K], recall[@K], MRR[@K], P[@K]"),
        ("hit@0", "must be an int in the range [1, inf). Got 0 instead"),
        ("hit@-1", "unknown measure"),
        ("hit@1.5", "unknown measure"),
        ("avg_k@3", "avg_k takes no cutoff; got @3"),
        ("candidate_recall", "candidate_recall needs a cutoff"),
        ("__import__('os')", "unknown measure"),
        ("", "unknown measure"),
    ],
)
def test_bad_names_raise_usage_error_naming_what_is_allowed(name: str, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_measure(name)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_constructor_checks_cutoff() -> None:
    with pytest.raises(UsageError, match="Got True instead"):
        Hit(cutoff=True)
    with pytest.raises(UsageError, match="takes no cutoff"):
        NoMatchSuccess(cutoff=3)
    with pytest.raises(UsageError, match="a measure must be a name"):
        parse_measure(10)  # type: ignore[arg-type]


def _build(cls, cutoff):
    if cls.CUTOFF == "none":
        return cls()
    if cls.CUTOFF == "required":
        return cls(cutoff=cutoff)
    return cls(cutoff=cutoff if cutoff % 2 else None)


@given(st.sampled_from(MEASURES), st.integers(min_value=1, max_value=10**6))
def test_parse_of_str_is_identity(cls, cutoff: int) -> None:
    m = _build(cls, cutoff)
    assert parse_measure(str(m)) == m
    assert hash(parse_measure(str(m))) == hash(m)
