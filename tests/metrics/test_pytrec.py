"""Equality with trec_eval (pytrec_eval) on seeded random runs, to 1e-12 (DESIGN §6).

The run is written with strictly decreasing scores so trec_eval's own tie-breaking
cannot reorder it; MRR is compared on the run cut at K, since tooldisc computes it
within the offer.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.oracles import oracle
from tooldisc.metrics import Judgment, compute

pytrec_eval = oracle("pytrec_eval")

TOOLS = [f"tool_{i:03d}" for i in range(60)]


def random_case(seed: int, n: int = 300) -> tuple[list[Judgment], dict[str, tuple[str, ...]]]:
    rng = np.random.default_rng(seed)
    judgments: list[Judgment] = []
    run: dict[str, tuple[str, ...]] = {}
    for q in range(n):
        qid = f"q{q:04d}"
        pool = rng.permutation(len(TOOLS))
        n_primary = int(rng.integers(1, 5))
        n_acceptable = int(rng.integers(0, 4))
        primary = frozenset(TOOLS[i] for i in pool[:n_primary])
        acceptable = frozenset(TOOLS[i] for i in pool[n_primary:n_primary + n_acceptable])
        judgments.append(Judgment(qid, primary, acceptable))
        depth = int(rng.integers(1, 40))
        run[qid] = tuple(TOOLS[i] for i in rng.permutation(len(TOOLS))[:depth])
    return judgments, run


def scored(run: dict[str, tuple[str, ...]], cut: int | None = None) -> dict[str, dict[str, float]]:
    return {q: {t: float(len(r) - i) for i, t in enumerate(r[:cut])} for q, r in run.items()}


def qrels(judgments: list[Judgment]) -> dict[str, dict[str, int]]:
    return {j.qid: {**dict.fromkeys(j.acceptable, 1), **dict.fromkeys(j.primary, 2)} for j in judgments}


def ours(name: str, judgments: list[Judgment], run: dict[str, tuple[str, ...]]) -> dict[str, float]:
    return {r.qid: r.value for r in compute([name], judgments, run)}


def assert_equal(a: dict[str, float], b: dict[str, float]) -> None:
    assert a.keys() == b.keys()
    diff = max(abs(a[q] - b[q]) for q in a)
    assert diff <= 1e-12, diff


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 5, 10, 20])
def test_recall_precision_ndcg(seed: int, k: int) -> None:
    judgments, run = random_case(seed)
    qr = qrels(judgments)
    lvl2 = pytrec_eval.RelevanceEvaluator(qr, {f"recall.{k}"}, relevance_level=2).evaluate(scored(run))
    lvl1 = pytrec_eval.RelevanceEvaluator(qr, {f"P.{k}", f"ndcg_cut.{k}"}, relevance_level=1).evaluate(scored(run))
    assert_equal(ours(f"recall@{k}", judgments, run), {q: v[f"recall_{k}"] for q, v in lvl2.items()})
    assert_equal(ours(f"P@{k}", judgments, run), {q: v[f"P_{k}"] for q, v in lvl1.items()})
    assert_equal(ours(f"nDCG@{k}", judgments, run), {q: v[f"ndcg_cut_{k}"] for q, v in lvl1.items()})


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("k", [1, 5, 15])
def test_mrr_on_run_cut_at_k(seed: int, k: int) -> None:
    judgments, run = random_case(seed)
    ev = pytrec_eval.RelevanceEvaluator(qrels(judgments), {"recip_rank"}, relevance_level=2)
    cut = {q: v for q, v in scored(run, k).items() if v}  # trec_eval cannot take an empty ranking
    theirs = {q: v["recip_rank"] for q, v in ev.evaluate(cut).items()}
    mine = ours(f"MRR@{k}", judgments, run)
    assert_equal({q: mine[q] for q in theirs}, theirs)
    # the offer itself, without a cutoff, equals the full ranking
    full = {q: v["recip_rank"] for q, v in ev.evaluate(scored(run)).items()}
    assert_equal(ours("MRR", judgments, run), full)
