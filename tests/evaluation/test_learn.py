"""``learn`` on a small synthetic traffic log: what it keeps, what it stores, and that it is repeatable."""

from __future__ import annotations

import json
import random

import pytest

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.learned import dumps_learned
from tooldisc.discovery.learned.read import parse_learned
from tooldisc.discovery.model import Tool
from tooldisc.errors import UsageError
from tooldisc.evaluation.learn import LearnOptions, learn, threshold_for
from tooldisc.evaluation.learn.data import Example
from tooldisc.evaluation.learn.phrases import phrases

# Each tool's users say it with words its description never uses: only traffic can teach them.
TOOLS = {
    "list_invoices": ("List sales invoices", ["bills", "receivables"]),
    "get_stock": ("Inventory level of a product", ["warehouse count", "units on hand"]),
    "create_customer": ("Register a new person record", ["onboard client", "new client"]),
    "get_weather_report": ("Forecast for a city", ["umbrella", "raining"]),
    "search_payments": ("Find payment transactions", ["money transfers", "wires"]),
    "list_employees": ("Staff directory", ["coworkers", "team members"]),
}
FILLER = ["please", "quickly", "for today", "for the north branch", "again", "now", "for acme", "this week"]
CHITCHAT = ["tell me a joke", "how are you doing", "write a poem about spring", "who won the game last night",
            "what is the meaning of life", "sing me a song", "good morning friend", "recommend a movie"]


def _traffic(seed: int = 1) -> list[Example]:
    rng = random.Random(seed)
    out = []
    for name, (_, slang) in TOOLS.items():
        for i in range(24):
            out.append(Example(f"{rng.choice(['show', 'i need', 'check', 'what about'])} {slang[i % 2]} "
                               f"{rng.choice(FILLER)} {rng.choice(FILLER)} {i}", (name,)))
    for i, text in enumerate(CHITCHAT * 3):
        out.append(Example(f"{text} {FILLER[i % len(FILLER)]}", ()))
    rng.shuffle(out)
    return out


def _catalog():
    return catalog_from_tools(Tool(name=n, description=d, side_effect="none") for n, (d, _) in TOOLS.items())


OPTIONS = LearnOptions(sample=200, folds=3, mutation=False)


@pytest.fixture(scope="module")
def fitted():
    catalog = _catalog()
    examples = _traffic()
    return catalog, examples, learn(catalog, examples, OPTIONS)


def test_expansions_are_kept_when_they_win_held_out(fitted) -> None:
    learned = fitted[2]
    rep = learned.report["expansions"]
    assert rep["kept"] and rep["with"] > rep["without"] + 0.3 and rep["p"] < 0.05
    phrases_of = dict(learned.expansions.tools["list_invoices"][1])
    assert "bills" in phrases_of and "receivables" in phrases_of


def test_every_stored_phrase_is_shared_by_k_distinct_requests_of_its_tool(fitted) -> None:
    """Distinct after scrubbing: the traffic's requests end in a number, which scrubbing cuts."""
    from tooldisc.evaluation.learn.phrases import scrubbed

    _, examples, learned = fitted
    k = learned.expansions.min_requests
    for tool, (_, stored) in learned.expansions.tools.items():
        texts = {scrubbed(e.query): e.query for e in examples if tool in e.relevant}.values()
        for phrase, count in stored:
            holders = sum(1 for t in texts if phrase in phrases(t))
            assert holders >= k and count == holders, (tool, phrase)
    body = dumps_learned(learned)
    assert not any(e.query in body for e in examples)  # no request is stored as written


def test_learning_is_repeatable_byte_for_byte(fitted) -> None:
    catalog, examples, learned = fitted
    again = learn(catalog, examples, OPTIONS)
    assert dumps_learned(again) == dumps_learned(learned)
    assert dumps_learned(parse_learned(dumps_learned(learned))) == dumps_learned(learned)


def test_a_switched_off_part_is_absent_and_reported_off(fitted) -> None:
    catalog, examples, _ = fitted
    off = LearnOptions(sample=200, folds=3, expansions=False, ranker=False, clauses=False, abstention=False,
                       mutation=False)
    learned = learn(catalog, examples, off)
    assert learned.parts == ()
    assert not {"expansions", "ranker", "clauses", "abstention", "mutation"} & set(learned.report)
    json.dumps(learned.report)


def test_threshold_keeps_false_abstention_at_or_under_target() -> None:
    import numpy as np

    p = np.linspace(0.0, 0.99, 200)
    t = threshold_for(p, 0.01)
    assert (p >= t).mean() <= 0.01
    assert (p >= np.nextafter(t, 0) - 0.005).mean() > 0.01  # the lowest such threshold


def test_quantile_threshold_survives_one_outlier_when_the_target_allows_less_than_one() -> None:
    """0.005 of 200 matched requests is one request: the count rule then lets the single
    most tool-less-looking matched request set the threshold; the interpolated quantile
    lies between the two highest, and agrees with the count rule on larger samples."""
    import numpy as np

    from tooldisc.evaluation.learn.abstention import quantile_threshold

    p = np.r_[np.linspace(0.0, 0.2, 199), 0.97]  # one outlier ("register it" without its earlier turns)
    assert threshold_for(p, 0.004) > 0.97  # count rule: nothing may abstain, the outlier sets it
    t = quantile_threshold(p, 0.004)
    assert 0.2 < t < 0.97
    big = np.linspace(0.0, 1.0, 5001)
    assert abs(quantile_threshold(big, 0.01) - threshold_for(big, 0.01)) <= 1.0 / 5000 + 1e-12


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"min_requests": 1}, "'min_requests' parameter must be an int in the range [2, 1000000] (k of k-anonymity). Got 1 instead."),
    ({"target_false_abstention": 0.0}, "'target_false_abstention' parameter must be a number in the range (0, 1). Got 0.0 instead."),
    ({"folds": 1}, "'folds'"),
])
def test_options_are_checked_in_one_place(kwargs, fragment) -> None:
    with pytest.raises(UsageError) as info:
        LearnOptions(**kwargs)
    assert fragment in str(info.value)


def test_the_shipped_abstention_model_is_what_its_fitting_function_produces() -> None:
    """Not a hand-set model: refitting on the shipped gold sets gives the shipped file, byte for byte."""
    from importlib import resources

    from tooldisc.evaluation.learn import fit_default_abstention

    shipped = resources.files("tooldisc.discovery").joinpath("data/abstention.json").read_text("utf-8")
    assert json.dumps(fit_default_abstention(), indent=1, sort_keys=True) + "\n" == shipped


def test_vectorised_ndcg_equals_the_per_request_definition() -> None:
    """The held-out judge's nDCG@10 against a plain loop, ties (rounded scores) broken by name; graded as
    DESIGN §6 (relevant 2, acceptable 1) for the rows that label acceptable tools, binary-equivalent otherwise."""
    import numpy as np

    from tooldisc.evaluation.learn.options import Rows
    from tooldisc.evaluation.learn.ranking import ndcg

    rng = np.random.default_rng(0)
    rows = []
    for i in range(200):
        n = int(rng.integers(1, 40))
        names = np.array([f"t{j:03d}" for j in rng.permutation(200)[:n]], dtype=object)
        x = np.round(rng.random((n, 3)) * (rng.random((n, 1)) > 0.3), 1)
        y = rng.random(n) < 0.1
        if i % 2:
            rows.append(Rows(0, i, names, x, y, np.zeros(6), False, False))
        else:
            gain = 2.0 * y + ((rng.random(n) < 0.2) & ~y)
            rows.append(Rows(0, i, names, x, y, np.zeros(6), False, False, gain=gain))
    discount = 1 / np.log2(np.arange(2, 12))
    for w in (np.array([1.0, 0.5, 0.2]), np.array([0.0, 1.0, 1.0])):
        want = np.zeros(len(rows))
        for r, row in enumerate(rows):
            if row.gain.any():
                s = row.x @ w
                o = np.lexsort((row.names, -s))
                o = o[s[o] > 0][:10]
                ideal = np.sort(row.gain)[::-1][:10]
                want[r] = (row.gain[o] * discount[: len(o)]).sum() / (ideal * discount[: len(ideal)]).sum()
        assert any(row.gain.max() == 1 for row in rows)  # some requests have only acceptable tools
        np.testing.assert_allclose(ndcg(rows, w), want, atol=1e-12)


def test_the_judges_ndcg_is_tooldisc_metrics_ndcg_and_independent_of_the_other_requests() -> None:
    """Random graded requests (gain 2 relevant, 1 acceptable; many exact score ties, broken by name): the
    judges' nDCG@10 equals :mod:`tooldisc.metrics`' (DESIGN §6) on the ranking discovery would offer (positive
    scores, by score then name), and a request's value is the same judged alone, in a subset or with all."""
    import numpy as np

    from tooldisc.evaluation.learn.options import Rows
    from tooldisc.evaluation.learn.ranking import Judged, ndcg
    from tooldisc.metrics import Judgment, compute

    rng = np.random.default_rng(3)
    rows = []
    for i in range(300):
        n = int(rng.integers(1, 30))
        names = np.array([f"t{j:03d}" for j in rng.permutation(100)[:n]], dtype=object)
        x = rng.integers(0, 4, (n, 3)) * 0.25  # quarters times powers of two: exact sums, exact ties
        gain = np.where(rng.random(n) < 0.15, 2.0, np.where(rng.random(n) < 0.15, 1.0, 0.0))
        gain[rng.integers(n)] = 2.0  # a relevant tool: the judges' domain, as metrics' (matched queries)
        rows.append(Rows(0, i, names, x, gain == 2, np.zeros(6), False, False, gain=gain))
    judged = Judged.of(rows)
    for w in (np.array([1.0, 0.5, 0.25]), np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0])):
        judgments, run = [], {}
        for i, r in enumerate(rows):
            s = r.x @ w
            order = sorted(np.flatnonzero(s > 0), key=lambda j: (-s[j], r.names[j]))
            run[str(i)] = [r.names[j] for j in order]
            judgments.append(Judgment(str(i), primary=r.names[r.gain == 2], acceptable=r.names[r.gain == 1]))
        want = [row.value for row in compute("nDCG@10", judgments, run)]
        got = judged.ndcg(w)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        assert 0 < (got == 1).sum() < len(rows) and (got == 0).any()
        np.testing.assert_array_equal(ndcg(rows[1::3], w), got[1::3])
        np.testing.assert_array_equal(ndcg(rows[7:8], w), got[7:8])


def test_the_abstention_baseline_abstains_where_discovery_s_floors_do() -> None:
    """A learned abstention part is judged against what discovery does without it (the floors)."""
    import numpy as np

    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.learn.abstention import floors_abstain
    from tooldisc.evaluation.learn.rows import ranking_rows

    catalog = _catalog()
    engine = Discoverer(catalog)
    queries = [e.query for e in _traffic()[:60]] + CHITCHAT + ["invoices", "ok thanks, that's all"]
    rows = np.stack([ranking_rows(engine.index, q, (), 1)[3] for q in queries])
    served = np.array([engine.discover(q).k_reason.startswith("abstained") for q in queries])
    assert served.any() and not served.all()
    assert (floors_abstain(rows, engine.config.abstain) == served).all()


def test_the_abstention_judge_weighs_sampled_matched_requests_back_to_the_log_s_mix() -> None:
    """Matched requests are sampled, no-tool ones are not: judged unweighted, a part that
    catches half the no-tool requests at about 1% false abstention wins; once each sampled
    matched request counts for the ten it stands for, the same part loses and is not kept."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from tooldisc.discovery.config import AbstainSection
    from tooldisc.evaluation.learn.abstention import judge_abstention
    from tooldisc.evaluation.learn.options import Rows

    rng = np.random.default_rng(0)

    def rows(matched_weight: float) -> list[Rows]:
        out = []
        for i in range(550):
            no_tool = i >= 500
            separable = no_tool and i % 2 == 0
            offer = np.zeros(6)
            offer[0] = rng.normal(-3.0 if separable else 2.0, 1.0)  # bm25_top
            out.append(Rows(i % 5, i, np.zeros(0, dtype=object), np.zeros((0, 1)), np.zeros(0, bool), offer,
                            False, no_tool, weight=1.0 if no_tool else matched_weight))
        return out

    opts = LearnOptions(target_false_abstention=0.01)
    floors = AbstainSection()  # no floors: discovery without the part never abstains
    with threadpool_limits(limits=1):  # as learn() fits: tiny models, no thread contention
        kept, info = judge_abstention(rows(1.0), opts, floors)
        assert kept is not None and info["held_out"]["no_match_success"] > 0.4
        kept, info = judge_abstention(rows(10.0), opts, floors)
    assert kept is None and info["with"] < info["without"]


def test_single_task_traffic_keeps_no_clauses_weight(fitted) -> None:
    learned = fitted[2]
    assert learned.clauses is None and learned.report["clauses"] == {"requests": 144, "split": 0, "kept": False}


def test_multi_step_traffic_learns_a_clauses_weight() -> None:
    """Each request asks for the weather at length, then for one short other task: the whole
    request's words rank the weather look-alikes above the second task's tool, its own clause does not."""
    from dataclasses import replace

    import numpy as np

    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.learn.clauses import judge_clauses

    tools = [Tool(name="get_weather", description="Current weather forecast for a city: temperature, rain, wind"),
             Tool(name="convert_currency", description="Convert an amount of money between currencies"),
             Tool(name="find_flights", description="Search flights between two airports and dates"),
             Tool(name="get_air_quality", description="Air quality index and pollution level")]
    tools += [Tool(name=f"weather_report_{i}", description=f"Weather city forecast temperature report {i}")
              for i in range(8)]
    catalog = catalog_from_tools(replace(t, side_effect="none") for t in tools)
    rng = random.Random(3)
    seconds = {"convert_currency": "exchange my money to euros", "find_flights": "search flights to Rome",
               "get_air_quality": "tell me the pollution level"}
    examples = []
    for i in range(36):
        other = rng.choice(sorted(seconds))
        examples.append(Example(f"What is the weather forecast in city {i}, temperature and rain and wind "
                                f"{rng.choice(FILLER)}? Then {seconds[other]}.", ("get_weather", other)))
    examples += [Example(f"weather forecast for city {i}", ("get_weather",)) for i in range(12)]
    fold_of = np.arange(len(examples)) % 3
    weight, info = judge_clauses(Discoverer(catalog), examples, fold_of, range(len(examples)),
                                 LearnOptions(sample=200, folds=3))
    assert info["split"] == 36 and info["kept"] and info["p"] < 0.05 and info["with"] > info["without"] + 0.03
    assert weight is not None and 0.0 < weight <= 1.0


def test_examples_carry_acceptable_tools_and_an_unknown_one_is_bad_input(tmp_path) -> None:
    """The judges grade acceptable tools as nDCG does, so learn must read them; a name the catalog lacks is refused."""
    from tooldisc.errors import DataError
    from tooldisc.evaluation.learn.data import load_examples

    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "a", "query": "unpaid bills", "relevant": ["list_invoices"],
                                "acceptable": ["search_payments", "list_invoices"]}) + "\n"
                    + json.dumps({"id": "b", "query": "tell me a joke", "relevant": []}) + "\n", encoding="utf-8")
    examples = load_examples([path], _catalog())
    assert [(e.relevant, e.acceptable) for e in examples] == [(("list_invoices",), ("search_payments",)), ((), ())]
    path.write_text(json.dumps({"id": "a", "query": "unpaid bills", "relevant": ["list_invoices"],
                                "acceptable": ["no_such_tool"]}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="no_such_tool"):
        load_examples([path], _catalog())


def test_ranker_pairs_rank_relevant_over_acceptable_over_the_rest() -> None:
    """Graded pairs (DESIGN §6 gains): relevant − acceptable, relevant − other, acceptable − other; never the reverse."""
    import numpy as np

    from tooldisc.evaluation.learn.options import Rows
    from tooldisc.evaluation.learn.ranking import _pairs

    names = np.array(["a", "b", "c"], dtype=object)
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    y = np.array([True, False, False])
    graded = Rows(0, 0, names, x, y, np.zeros(6), False, False, gain=np.array([2.0, 1.0, 0.0]))
    d, label = _pairs([graded], seed=0)
    wins = {tuple(v) for v in d[label == 1]}
    assert wins == {(1.0, -1.0), (1.0, 0.0), (0.0, 1.0)}  # a−b, a−c, b−c
    d, label = _pairs([Rows(0, 0, names, x, y, np.zeros(6), False, False)], seed=0)
    assert {tuple(v) for v in d[label == 1]} == {(1.0, -1.0), (1.0, 0.0)}  # binary: a against the rest
