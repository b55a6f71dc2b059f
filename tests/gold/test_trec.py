"""TREC qrels and runs: round trips, and agreement with pytrec_eval through the files."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tests.oracles import oracle
from tooldisc.errors import DataError
from tooldisc.gold import GoldQuery, GoldSet
from tooldisc.gold.trec import (
    BINARY_NOTE,
    TREC_NOTE,
    decode_name,
    encode_name,
    load_trec_gold,
    qrels_dict,
    qrels_text,
    read_grades,
    read_qrels,
    read_run,
    read_topics,
    run_dict,
    run_text,
    topics_text,
    trec_scores,
    write_qrels,
    write_run,
)
from tooldisc.metrics import Judgment, evaluate, parse_measure

GOLD = GoldSet((
    GoldQuery("q1", "x", ("b", "a"), acceptable_tools=("c", "a"), intent="write"),
    GoldQuery("q2", "y", (), no_match=True, intent="none"),
    GoldQuery("q3", "z", ("ns.tool::v2",)),
))


def test_qrels_text_and_round_trip(tmp_path: Path) -> None:
    assert qrels_text(GOLD) == "q1 0 a 2\nq1 0 b 2\nq1 0 c 1\nq3 0 ns.tool::v2 2\n"
    assert qrels_dict(GOLD) == {"q1": {"a": 2, "b": 2, "c": 1}, "q2": {}, "q3": {"ns.tool::v2": 2}}
    p = tmp_path / "qrels.txt"
    write_qrels(GOLD, p)
    back = read_qrels(p)
    assert back == {
        "q1": Judgment("q1", frozenset({"a", "b"}), frozenset({"c"})),
        "q3": Judgment("q3", frozenset({"ns.tool::v2"})),
    }


def test_read_qrels_grades_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("q 0 a 3\nq 0 b 0\nr 0 c 0\n", encoding="utf-8")
    assert read_qrels(p) == {"q": Judgment("q", frozenset({"a"})), "r": Judgment("r", no_match=True)}
    p.write_text("q 0 a\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1: a qrels line needs 4 fields"):
        read_qrels(p)
    p.write_text("q 0 a x\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1: grade must be an integer; got 'x'"):
        read_qrels(p)


def test_run_scores_strictly_decrease_and_round_trip(tmp_path: Path) -> None:
    run = {"q1": ("c", "a", "b"), "q3": ()}
    assert run_text(run, tag="t") == "q1 Q0 c 1 3.000000 t\nq1 Q0 a 2 2.000000 t\nq1 Q0 b 3 1.000000 t\n"
    scores = run_dict(run)["q1"]
    assert list(scores.values()) == sorted(scores.values(), reverse=True)
    assert len(set(scores.values())) == 3
    p = tmp_path / "run.txt"
    write_run(run, p)
    assert read_run(p) == {"q1": ("c", "a", "b")}


def test_read_run_orders_ties_by_name_and_rejects_bad_lines(tmp_path: Path) -> None:
    p = tmp_path / "run.txt"
    p.write_text("q Q0 b 1 1.0 t\nq Q0 a 2 1.0 t\nq Q0 c 3 2.5 t\n", encoding="utf-8")
    assert read_run(p) == {"q": ("c", "a", "b")}
    p.write_text("q Q0 b 1 high t\n", encoding="utf-8")
    with pytest.raises(DataError, match="score must be a number"):
        read_run(p)
    p.write_text("q Q0 b 1 1 t\nq Q0 b 2 0 t\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2: tool 'b' appears twice"):
        read_run(p)


def test_names_with_whitespace_are_percent_encoded_and_read_back(tmp_path: Path) -> None:
    """Whitespace, control characters and % are encoded; every other character is written as is."""
    assert encode_name("requestFirst Aid Assistance") == "requestFirst%20Aid%20Assistance"
    assert encode_name("50%\t\x00") == "50%25%09%00"
    assert encode_name("ns.tool::v2/فاکتور\u200c") == "ns.tool::v2/فاکتور\u200c"  # ZWNJ is not whitespace
    assert encode_name("a\u00a0b\u2028c") == "a%C2%A0b%E2%80%A8c"  # no-break space, line separator
    text = run_text({"q 1": ("has space", "x%y")})
    assert text.split("\n")[0].split() == ["q%201", "Q0", "has%20space", "1", "2.000000", "tooldisc"]
    (tmp_path / "run").write_text(text, encoding="utf-8")
    assert read_run(tmp_path / "run") == {"q 1": ("has space", "x%y")}
    gold = GoldSet((GoldQuery("a b", "x y", ("t 1",), acceptable_tools=("t%2",)),))
    write_qrels(gold, tmp_path / "qrels")
    assert (tmp_path / "qrels").read_text("utf-8") == "a%20b 0 t%201 2\na%20b 0 t%252 1\n"
    assert read_grades(tmp_path / "qrels") == {"a b": {"t 1": 2, "t%2": 1}}
    (tmp_path / "topics").write_text(topics_text(gold), encoding="utf-8")
    assert read_topics(tmp_path / "topics") == {"a b": "x y"}
    with pytest.raises(DataError, match="empty"):
        run_text({"q": ("",)})
    with pytest.raises(DataError, match="run tag"):
        run_text({"q": ("t",)}, "two words")


def test_decoding_keeps_a_stray_percent_and_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    assert decode_name("100%") == "100%" and decode_name("a%zz") == "a%zz"
    p = tmp_path / "run"
    p.write_text("q Q0 bad%FF 1 1.0 t\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 1: .*not UTF-8"):
        read_run(p)


@given(st.text(min_size=1, max_size=30))
@settings(max_examples=examples(300), deadline=None)
def test_encoding_round_trips_and_leaves_one_field(name: str) -> None:
    encoded = encode_name(name)
    assert decode_name(encoded) == name
    assert encoded.split() == [encoded] and not any(unicodedata.category(c) == "Cc" for c in encoded)


def test_files_agree_with_pytrec_eval(tmp_path: Path) -> None:
    pytrec_eval = oracle("pytrec_eval")
    run = {"q1": ("c", "x", "b", "a"), "q3": ("y", "ns.tool::v2")}
    write_qrels(GOLD, tmp_path / "qrels")
    write_run(run, tmp_path / "run")
    judgments = read_qrels(tmp_path / "qrels")
    back = read_run(tmp_path / "run")
    ours = evaluate("nDCG@3,P@2", judgments, back)
    qrels = {q: dict(v) for q, v in qrels_dict(GOLD).items() if v}
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3", "P.2"}).evaluate(run_dict(run))
    for name, key in (("nDCG@3", "ndcg_cut_3"), ("P@2", "P_2")):
        theirs = sum(v[key] for v in res.values()) / len(res)
        assert abs(ours[parse_measure(name)] - theirs) < 1e-12


def test_real_scores_are_written_and_ties_nudged_down() -> None:
    run = {"q": ("a", "b", "c", "d", "e")}
    given = {"q": (2.5, 2.5, 2.5, 1.0000004, 1.0000001)}  # a tie, and two that round to the same 6 decimals
    assert trec_scores(given["q"]) == [2_500_000, 2_499_999, 2_499_998, 1_000_000, 999_999]
    lines = run_text(run, "tag", scores=given).splitlines()
    assert [line.split()[4] for line in lines] == ["2.500000", "2.499999", "2.499998", "1.000000", "0.999999"]
    assert list(run_dict(run, given)["q"].values()) == [2.5, 2.499999, 2.499998, 1.0, 0.999999]
    assert trec_scores([-1.0, -1.0]) == [-1_000_000, -1_000_001]
    with pytest.raises(DataError, match="finite"):
        trec_scores([float("nan")])
    with pytest.raises(DataError, match="2 scores"):
        run_text({"q": ("a",)}, scores={"q": (1.0, 0.5)})


def test_topics_and_qrels_read_back_as_the_gold_set(tmp_path: Path) -> None:
    gold = GoldSet((
        GoldQuery("q1", "show\tinvoices\nof this month", ("b", "a"), acceptable_tools=("c",)),
        GoldQuery("q2", "tell me a joke", (), no_match=True, intent="none"),
        GoldQuery("q3", "z", ("ns.tool::v2",)),
    ))
    assert topics_text(gold) == "q1\tshow invoices of this month\nq2\ttell me a joke\nq3\tz\n"
    write_qrels(gold, tmp_path / "qrels")
    (tmp_path / "topics").write_text(topics_text(gold), encoding="utf-8")
    back = load_trec_gold(tmp_path / "qrels", tmp_path / "topics")
    assert [q.id for q in back] == ["q1", "q2", "q3"]
    assert [q.query for q in back] == ["show invoices of this month", "tell me a joke", "z"]
    assert back.judgments() == gold.judgments()
    assert [q.no_match for q in back] == [False, True, False] and back.notes == (TREC_NOTE,)


def test_binary_qrels_count_grade_1_as_primary(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n", encoding="utf-8")
    (tmp_path / "topics").write_text("q1\tfind a\nq2\tnothing\n", encoding="utf-8")
    back = load_trec_gold(tmp_path / "qrels", tmp_path / "topics")
    assert back.queries[0].primary_expected_tools == ("a",) and back.queries[0].acceptable_tools == ()
    assert back.queries[1].no_match and BINARY_NOTE in back.notes


@pytest.mark.parametrize("qrels, topics, match", [
    ("q9 0 a 2\n", "q1\tx\n", "qrels judge query 'q9', which the topics file"),
    ("q1 0 a 1\nq2 0 b 2\n", "q1\tx\nq2\ty\n", "acceptable \\(grade 1\\) tools but no primary"),
    ("", "q1 x\n", "line 1: a topics line needs a query id, a tab"),
    ("", "q1\tx\nq1\ty\n", "line 2: query id 'q1' appears twice"),
    ("", "q1\t  \n", "line 1: query 'q1' has an empty text"),
    ("", "\n\n", "no topics"),
])
def test_trec_gold_refuses_what_it_cannot_score(tmp_path: Path, qrels: str, topics: str, match: str) -> None:
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")
    (tmp_path / "topics").write_text(topics, encoding="utf-8")
    with pytest.raises(DataError, match=match):
        load_trec_gold(tmp_path / "qrels", tmp_path / "topics")
    if "topics line" in match:
        with pytest.raises(DataError):
            read_topics(tmp_path / "topics")
