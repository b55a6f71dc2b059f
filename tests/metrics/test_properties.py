"""Properties over arbitrary judgments and runs: rates stay in [0, 1], costs are >= 0."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.metrics import INTENTS, Judgment, aggregate, compute, parse_measures

TOOLS = list("abcdefgh")
SIDE_EFFECTS = {"a": "none", "b": "write", "c": "delete", "d": "export", "e": "execute", "f": None, "g": "none"}
MEASURES = parse_measures(
    "hit@1,hit@3,complete@2,recall@3,MRR,MRR@2,P@1,P@4,P,nDCG@1,nDCG@3,nDCG,forbidden@2,forbidden,"
    "no_match_success,false_abstention,candidate_recall@3,avg_k,schema_tokens,latency_p50,latency_p95"
)

tool_sets = st.frozensets(st.sampled_from(TOOLS), max_size=4)


@st.composite
def cases(draw):
    n = draw(st.integers(min_value=1, max_value=8))
    judgments, run, offered, cands = [], {}, {}, {}
    for i in range(n):
        qid = f"q{i}"
        judgments.append(Judgment(qid, draw(tool_sets), draw(tool_sets), draw(tool_sets),
                                  draw(st.sampled_from(INTENTS)), draw(st.booleans())))
        if draw(st.booleans()):
            run[qid] = tuple(draw(st.permutations(TOOLS))[: draw(st.integers(0, len(TOOLS)))])
        if draw(st.booleans()):
            offered[qid] = draw(st.integers(0, 10))
        cands[qid] = tuple(draw(st.permutations(TOOLS)))
    return judgments, run, offered, cands


@settings(max_examples=150, deadline=None)
@given(cases())
def test_rates_in_unit_interval_costs_non_negative(case) -> None:
    judgments, run, offered, cands = case
    costs = {j.qid: 1.0 + i for i, j in enumerate(judgments)}
    rows = compute(MEASURES, judgments, run, offered=offered, side_effects=SIDE_EFFECTS, candidates=cands,
                   schema_tokens=costs, latency_ms=costs)
    for row in rows:
        assert math.isfinite(row.value)
        if row.measure.RATE:
            assert 0.0 <= row.value <= 1.0, row
        else:
            assert row.value >= 0.0, row
    for m, value in aggregate(rows, MEASURES).items():
        assert math.isnan(value) or (0.0 <= value <= 1.0 if m.RATE else value >= 0.0)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_measures_grow_with_k(case) -> None:
    judgments, run, offered, _ = case
    rows = compute("hit@1,hit@3,recall@1,recall@3,forbidden@1,forbidden@3", judgments, run, offered=offered,
                   side_effects=SIDE_EFFECTS)
    got = {(r.qid, str(r.measure)): r.value for r in rows}
    for qid, name in list(got):
        if name.endswith("@1"):
            assert got[(qid, name)] <= got[(qid, name[:-1] + "3")]
