"""The clauses step: splitting, fusion, and that it only reorders what the filter passed."""

from __future__ import annotations

import pytest

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.config import RankerConfig, config_from_mapping, default_config
from tooldisc.discovery.model import Context, Tool
from tooldisc.discovery.pipeline import STEPS, Discoverer
from tooldisc.discovery.rank.clauses import split_clauses


@pytest.mark.parametrize(("text", "clauses"), [
    ("Delete the VM. After that, optimise the database. Finally, fetch the Hadoop settings.",
     ("Delete the VM.", "After that, optimise the database.", "Finally, fetch the Hadoop settings.")),
    ("show my bills, then email them to the accountant", ("show my bills", "email them to the accountant")),
    ("list the orders and then cancel the oldest one; also archive it",
     ("list the orders", "cancel the oldest one", "also archive it")),
    ("rotate the keys, and finally restart the web servers", ("rotate the keys", "restart the web servers")),
    ("فاکتور جدید ثبت کن و سپس موجودی انبار را نشان بده", ("فاکتور جدید ثبت کن", "موجودی انبار را نشان بده")),
    ("گزارش فروش را بده؛ همچنین مانده حساب را بگو", ("گزارش فروش را بده", "مانده حساب را بگو")),
    # not clause boundaries: a number's point, "next" as an adjective, "also" inside a clause, Persian "ماه بعد"
    ("optimise if the threshold is above 8.5 percent", ("optimise if the threshold is above 8.5 percent",)),
    ("the report is due next week and I also need the totals", ("the report is due next week and I also need the totals",)),
    ("گزارش ماه بعد را بده", ("گزارش ماه بعد را بده",)),
    # a piece shorter than two words joins its neighbour
    ("Hi! Show the invoices. Thanks.", ("Hi! Show the invoices. Thanks.",)),
])
def test_split_clauses(text: str, clauses: tuple[str, ...]) -> None:
    assert split_clauses(text) == clauses


def test_split_clauses_caps_the_count() -> None:
    text = " ".join(f"Do task number {i}." for i in range(20))
    parts = split_clauses(text, max_clauses=4)
    assert len(parts) == 4 and parts[-1].endswith("number 19.")


def _catalog():
    tools = [
        Tool(name="get_weather", description="Current weather forecast for a city: temperature, rain, wind",
             side_effect="none"),
        Tool(name="get_air_quality", description="Air quality index and pollution forecast for a city",
             side_effect="none"),
        Tool(name="book_flight", description="Book a flight ticket between two airports", side_effect="write"),
        Tool(name="find_flights", description="Search flights between two airports and dates", side_effect="none"),
        Tool(name="convert_currency", description="Convert an amount of money between currencies",
             side_effect="none"),
        Tool(name="wire_money", description="Send a bank wire transfer of money", side_effect="write",
             roles=("treasurer",)),
    ]
    tools += [Tool(name=f"filler_{i}", description=f"Weather city forecast report number {i}", side_effect="none")
              for i in range(6)]
    return catalog_from_tools(tools)


MULTI = ("What is the weather forecast in Paris for the city trip, temperature and rain and wind? "
         "Then exchange my money to euros.")


def test_off_by_default_and_out_of_the_config_hash_while_off() -> None:
    assert default_config().clauses.weight == 0.0
    assert config_from_mapping({"clauses": {"weight": 0.0}}).hash == RankerConfig().hash
    assert config_from_mapping({"clauses": {"weight": 0.5}}).hash != RankerConfig().hash
    assert [s.__name__ for s in STEPS] == ["authorize", "retrieve", "rank", "clauses", "cut"]


def test_each_clause_reaches_its_tool_and_features_explain_the_score() -> None:
    catalog = _catalog()
    off = Discoverer(catalog).discover(MULTI, k=3)
    on = Discoverer(catalog, config_from_mapping({"clauses": {"weight": 0.6}}, base=default_config())).discover(MULTI, k=3)
    assert "convert_currency" not in off.names  # the long first clause fills the whole request's top 3
    assert on.names[:2] == ("get_weather", "convert_currency")
    assert on.candidates[0].score == pytest.approx(off.candidates[0].score)  # the top keeps the whole request's scale
    for c in on.candidates:
        assert sum(c.features.values()) == pytest.approx(c.score)
    assert "clauses" in on.timings and on.offer_hash != off.offer_hash


def test_a_single_clause_request_is_untouched() -> None:
    catalog = _catalog()
    on = Discoverer(catalog, config_from_mapping({"clauses": {"weight": 0.8}}, base=default_config()))
    off = Discoverer(catalog)
    for q in ("weather forecast in Paris", "convert dollars to euros", "air pollution in Rome tomorrow"):
        a, b = off.discover(q, k=5), on.discover(q, k=5)
        assert a.candidates == b.candidates and a.confidence == b.confidence


def test_clauses_never_bring_back_a_filtered_tool() -> None:
    catalog = _catalog()
    engine = Discoverer(catalog, config_from_mapping({"clauses": {"weight": 1.0}}, base=default_config()))
    query = "Check the weather in Oslo. Then send a bank wire transfer of money to Bob."
    guest = engine.discover(query, Context(mode="autonomous"), k=10)
    assert "wire_money" not in guest.names  # needs the treasurer role
    treasurer = engine.discover(query, Context(roles=frozenset({"treasurer"})), k=10)
    allowed = set(catalog.tools[i].name for i in engine.authorized_indices(Context(roles=frozenset({"treasurer"})),
                                                                            treasurer.mutation))
    assert set(treasurer.names) <= allowed
    explained = engine.explain(query, "wire_money", Context(mode="autonomous"))
    assert explained["status"] == "removed"


def test_explain_ranks_as_the_offer_does() -> None:
    catalog = _catalog()
    engine = Discoverer(catalog, config_from_mapping({"clauses": {"weight": 0.6}}, base=default_config()))
    offer = engine.discover(MULTI, k=3)
    for i, name in enumerate(offer.names, start=1):
        assert engine.explain(MULTI, name, k=3)["rank"] == i


def test_clauses_weight_one_with_an_abstention_threshold_of_one_does_not_divide_by_zero(tmp_path) -> None:
    """Issue 25: a learned file with ``clauses.weight: 1`` and an abstention threshold of 1.0 (so a request
    matching nothing is still ranked) divided by zero: weight 1 leaves the whole request no share, and
    no clause matched a tool, so every fused score was 0. With nothing to fuse the whole request's ranking
    stands (Python API, and the command with the learned file)."""
    import dataclasses
    import json

    from tests.conftest import invoke_cli
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.learned import Learned, dumps_learned
    from tooldisc.discovery.learned.read import default_abstention

    catalog = load_catalog(default_catalog_path())
    learned = Learned(catalog.hash, abstention=dataclasses.replace(default_abstention(), threshold=1.0), clauses=1.0)
    query = "qqq zzz, then xxx yyy"
    with_step = Discoverer(catalog, learned=learned).discover(query, default_context(catalog))
    without = Discoverer(catalog, learned=dataclasses.replace(learned, clauses=None)).discover(
        query, default_context(catalog))
    assert with_step.names == without.names
    assert [c.score for c in with_step.candidates] == [c.score for c in without.candidates]
    path = tmp_path / "learned.json"
    path.write_text(dumps_learned(learned), encoding="utf-8")
    proc = invoke_cli("discover", query, "--learned", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert list(json.loads(proc.stdout)["candidates"])
