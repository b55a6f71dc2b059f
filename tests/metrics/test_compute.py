"""Hand-computed values for every measure, per DESIGN §6.

Each expected value is written as the arithmetic a reader can check by hand.
"""

from __future__ import annotations

import math

import pytest

from tooldisc.errors import UsageError
from tooldisc.metrics import Judgment, Row, aggregate, compute, evaluate, parse_measure, ranked

L2 = math.log2

# q1: two primary tools, one acceptable, one listed as forbidden, intent read.
Q1 = Judgment("q1", frozenset({"a", "b"}), frozenset({"c"}), frozenset({"x"}), "read")
# q2: acceptable-only offer.
Q2 = Judgment("q2", frozenset({"a"}), frozenset({"b", "c"}), intent="read")
# q3: matched but given an empty offer (false abstention).
Q3 = Judgment("q3", frozenset({"a"}))
# q4/q5: no-match, abstained / not abstained.
Q4 = Judgment("q4", no_match=True, intent="none")
Q5 = Judgment("q5", no_match=True, intent="none")
# q6: judged but absent from the run: scores as an empty offer.
Q6 = Judgment("q6", frozenset({"d"}), intent="write")
JUDGMENTS = [Q1, Q2, Q3, Q4, Q5, Q6]
RUN = {
    "q1": ("c", "a", "x", "d", "b"),
    "q2": ("b", "c"),
    "q3": (),
    "q4": (),
    "q5": ("a",),
    "unjudged": ("a", "b"),  # ignored
}
SIDE_EFFECTS = {"a": "none", "b": "none", "c": "none", "x": "none", "d": "write"}


def per_query(name: str, **extras) -> dict[str, float]:
    return {r.qid: r.value for r in compute([name], JUDGMENTS, RUN, **extras)}


def test_hit() -> None:
    assert per_query("hit@1") == {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q6": 0.0}
    assert per_query("hit@2") == {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q6": 0.0}
    assert evaluate(["hit@2"], JUDGMENTS, RUN) == {parse_measure("hit@2"): 1 / 4}


def test_complete_needs_every_primary() -> None:
    assert per_query("complete@4")["q1"] == 0.0  # b is 5th
    assert per_query("complete@5")["q1"] == 1.0
    assert per_query("complete@5")["q2"] == 0.0


def test_recall_is_share_of_primary() -> None:
    assert per_query("recall@2")["q1"] == 1 / 2
    assert per_query("recall@5")["q1"] == 2 / 2
    assert per_query("recall@5")["q2"] == 0.0  # acceptable tools do not count


def test_mrr_within_offer_and_cut() -> None:
    assert per_query("MRR") == {"q1": 1 / 2, "q2": 0.0, "q3": 0.0, "q6": 0.0}
    assert per_query("MRR@1")["q1"] == 0.0
    assert per_query("MRR@2")["q1"] == 1 / 2


def test_precision_divides_by_k_and_counts_acceptable() -> None:
    assert per_query("P@2")["q1"] == 2 / 2  # c acceptable, a primary
    assert per_query("P@5")["q1"] == 3 / 5  # c, a, b
    assert per_query("P@10")["q1"] == 3 / 10  # divides by K even when the offer is shorter
    assert per_query("P@2")["q2"] == 2 / 2  # acceptable-only offer
    assert per_query("P@10")["q3"] == 0.0
    assert per_query("P")["q1"] == 3 / 5  # no cutoff: divides by the offer length


def test_ndcg_graded() -> None:
    # q1 ranks c(1) a(2) x d b(2); ideal: 2, 2, 1.
    dcg2 = 1 / L2(2) + 2 / L2(3)
    idcg2 = 2 / L2(2) + 2 / L2(3)
    assert per_query("nDCG@2")["q1"] == pytest.approx(dcg2 / idcg2, abs=1e-15)
    dcg5 = 1 / L2(2) + 2 / L2(3) + 2 / L2(6)
    idcg5 = 2 / L2(2) + 2 / L2(3) + 1 / L2(4)
    assert per_query("nDCG@5")["q1"] == pytest.approx(dcg5 / idcg5, abs=1e-15)
    # q2, acceptable-only: b(1) c(1); ideal a(2) b(1) cut at 2.
    assert per_query("nDCG@2")["q2"] == pytest.approx((1 / L2(2) + 1 / L2(3)) / (2 / L2(2) + 1 / L2(3)), abs=1e-15)
    assert per_query("nDCG@2")["q3"] == 0.0


def test_ties_are_broken_by_name() -> None:
    j = [Judgment("t", frozenset({"beta"}))]
    scores = {"gamma": 0.5, "beta": 0.9, "alpha": 0.9}
    assert ranked(scores) == ("alpha", "beta", "gamma")
    run = {"t": ranked(scores)}
    assert evaluate("MRR,hit@1,hit@2", j, run) == {
        parse_measure("MRR"): 1 / 2, parse_measure("hit@1"): 0.0, parse_measure("hit@2"): 1.0,
    }


def test_empty_offer_scores_zero_everywhere_and_is_a_false_abstention() -> None:
    for name in ("hit@5", "complete@5", "recall@5", "MRR", "P@5", "nDCG@5"):
        values = per_query(name)
        assert values["q3"] == 0.0 and values["q6"] == 0.0, name
    assert per_query("false_abstention") == {"q1": 0.0, "q2": 0.0, "q3": 1.0, "q6": 1.0}


def test_no_match_queries_only_in_no_match_measures() -> None:
    assert per_query("no_match_success") == {"q4": 1.0, "q5": 0.0}
    for name in ("hit@5", "MRR", "nDCG@5", "P@5", "false_abstention"):
        assert "q4" not in per_query(name) and "q5" not in per_query(name)


def test_forbidden_by_list_covers_all_queries() -> None:
    # without side effects only forbidden_tools lists count
    assert per_query("forbidden@2") == dict.fromkeys(["q1", "q2", "q3", "q4", "q5", "q6"], 0.0)
    assert per_query("forbidden@3")["q1"] == 1.0  # x at rank 3
    # with side effects, d (write) at rank 4 is not allowed to a read query either
    assert per_query("forbidden@2", side_effects=SIDE_EFFECTS)["q1"] == 0.0
    assert per_query("forbidden@3", side_effects=SIDE_EFFECTS)["q1"] == 1.0
    j = [Judgment("r", frozenset({"a"}), forbidden=frozenset({"a", "z"}))]
    assert evaluate("forbidden@5", j, {"r": ("a",)}) == {parse_measure("forbidden@5"): 0.0}  # primary wins


def test_forbidden_by_intent() -> None:
    judgments = [
        Judgment("read", frozenset({"a"}), intent="read"),
        Judgment("write", frozenset({"a"}), intent="write"),
        Judgment("accept", frozenset({"a"}), frozenset({"d"}), intent="read"),
        Judgment("none", no_match=True, intent="none"),
    ]
    run = {"read": ("a", "d"), "write": ("a", "d"), "accept": ("a", "d"), "none": ("d",)}
    rows = compute(["forbidden@1", "forbidden@2", "forbidden"], judgments, run, side_effects=SIDE_EFFECTS)
    got = {(r.qid, str(r.measure)): r.value for r in rows}
    assert got[("read", "forbidden@1")] == 0.0
    assert got[("read", "forbidden@2")] == 1.0  # d writes; read may not see it
    assert got[("write", "forbidden@2")] == 0.0
    assert got[("accept", "forbidden@2")] == 0.0  # acceptable is never forbidden
    assert got[("none", "forbidden@1")] == 1.0  # intent none counts as read
    assert got[("read", "forbidden")] == 1.0


# DESIGN §4 written out: which tool side effect each labelled intent may be offered.
MATRIX = """
intent   none  write delete export execute unknown
read     yes   no    no     no     no      no
none     yes   no    no     no     no      no
write    yes   yes   no     no     no      no
delete   yes   no    yes    no     no      no
export   yes   no    no     yes    no      no
execute  yes   no    no     no     yes     no
"""
_LINES = [line.split() for line in MATRIX.strip().splitlines()]
CELLS = [(row[0], col, cell == "yes") for row in _LINES[1:] for col, cell in zip(_LINES[0][1:], row[1:], strict=True)]


@pytest.mark.parametrize(("intent", "side_effect", "allowed"), CELLS)
def test_intent_matrix_cell(intent: str, side_effect: str, allowed: bool) -> None:
    effects = {"t": None if side_effect == "unknown" else side_effect}
    j = [Judgment("q", frozenset({"p"}), intent=intent)]
    value = evaluate("forbidden@1", j, {"q": ("t",)}, side_effects=effects)[parse_measure("forbidden@1")]
    assert value == (0.0 if allowed else 1.0)


def test_tool_missing_from_side_effects_is_unknown_and_forbidden() -> None:
    j = [Judgment("q", frozenset({"p"}), intent="write")]
    assert evaluate("forbidden@1", j, {"q": ("t",)}, side_effects={})[parse_measure("forbidden@1")] == 1.0


def test_adaptive_k_cuts_at_the_offer() -> None:
    offered = {"q1": 2}
    assert per_query("hit@5", offered=offered)["q1"] == 1.0
    assert per_query("complete@5", offered=offered)["q1"] == 0.0  # b is beyond the offer
    assert per_query("P@5", offered=offered)["q1"] == 2 / 5
    assert per_query("forbidden@5", offered=offered)["q1"] == 0.0  # x is beyond the offer
    assert per_query("avg_k", offered=offered) == {"q1": 2.0, "q2": 2.0, "q3": 0.0, "q4": 0.0, "q5": 1.0, "q6": 0.0}
    assert per_query("false_abstention", offered={"q1": 0})["q1"] == 1.0


def test_candidate_recall() -> None:
    cands = {"q1": ("x", "a", "y", "b"), "q2": ("a",)}
    assert per_query("candidate_recall@2", candidates=cands) == {"q1": 1 / 2, "q2": 1.0, "q3": 0.0, "q6": 0.0}
    assert per_query("candidate_recall@4", candidates=cands)["q1"] == 2 / 2


def test_cost_measures() -> None:
    assert evaluate("avg_k", JUDGMENTS, RUN) == {parse_measure("avg_k"): (5 + 2 + 0 + 0 + 1 + 0) / 6}
    tokens = {"q1": 500.0, "q2": 200.0, "q3": 0.0}
    assert evaluate("schema_tokens", JUDGMENTS, RUN, schema_tokens=tokens)[parse_measure("schema_tokens")] == 700 / 3
    latency = {"q1": 1.0, "q2": 2.0, "q3": 3.0, "q4": 4.0, "q5": 100.0}
    got = evaluate("latency_p50,latency_p95", JUDGMENTS, RUN, latency_ms=latency)
    assert got[parse_measure("latency_p50")] == 3.0
    assert got[parse_measure("latency_p95")] == pytest.approx(4.0 + 0.8 * 96.0)  # linear interpolation


def test_rows_and_aggregate_are_separate_steps() -> None:
    rows = compute("hit@2,no_match_success", JUDGMENTS, RUN)
    assert rows[0] == Row("q1", parse_measure("hit@2"), 1.0)
    assert [r.qid for r in rows] == ["q1", "q2", "q3", "q6", "q4", "q5"]
    assert aggregate(rows) == {parse_measure("hit@2"): 0.25, parse_measure("no_match_success"): 0.5}
    empty = aggregate([], ["hit@2"])
    assert math.isnan(empty[parse_measure("hit@2")])


def test_usage_errors() -> None:
    with pytest.raises(UsageError, match="needs the 'candidates' argument"):
        compute("candidate_recall@5", JUDGMENTS, RUN)
    with pytest.raises(UsageError, match="needs the 'latency_ms' argument"):
        compute("latency_p95", JUDGMENTS, RUN)
    with pytest.raises(UsageError, match="names tool 'a' more than once"):
        compute("hit@5", [Q1], {"q1": ("a", "a")})
    with pytest.raises(UsageError, match="appears more than once"):
        compute("hit@5", [Q1, Q1], RUN)
    with pytest.raises(UsageError, match="intent must be one of read, write"):
        Judgment("q", intent="wrte")
    with pytest.raises(UsageError, match="offered"):
        compute("hit@5", [Q1], RUN, offered={"q1": -1})
