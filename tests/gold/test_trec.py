"""TREC qrels and runs: round trips, and agreement with pytrec_eval through the files."""

from __future__ import annotations

from pathlib import Path

import pytest
from tooldisc.gold import GoldQuery, GoldSet
from tooldisc.gold.trec import (
    qrels_dict,
    qrels_text,
    read_qrels,
    read_run,
    run_dict,
    run_text,
    write_qrels,
    write_run,
)
from tooldisc.metrics import Judgment, evaluate, parse_measure

from tooldisc.errors import DataError

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
    assert run_text(run, tag="t") == "q1 Q0 c 1 3 t\nq1 Q0 a 2 2 t\nq1 Q0 b 3 1 t\n"
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


def test_names_with_whitespace_cannot_be_written() -> None:
    with pytest.raises(DataError, match="cannot be written to a TREC file"):
        run_text({"q": ("has space",)})
    with pytest.raises(DataError, match="query id"):
        qrels_text(GoldSet((GoldQuery("a b", "x", ("t",)),)))


def test_files_agree_with_pytrec_eval(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
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
