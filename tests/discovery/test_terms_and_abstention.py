"""Stemmed terms on both sides of the index, and when an offer is empty."""

from __future__ import annotations

import pytest

from tooldisc.discovery.catalog import build_catalog
from tooldisc.discovery.config import config_from_mapping, load_config
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.discovery.text.fields import stem_term, terms
from tooldisc.errors import ConfigError

TOOLS = [
    {"name": "list_invoices", "description": "Lists the sales invoices issued to customers", "side_effect": "none"},
    {"name": "restart_service", "description": "Restarts a running service", "side_effect": "execute"},
    {"name": "list_warehouses", "description": "فهرست انبارها", "side_effect": "none"},
]


@pytest.fixture(scope="module")
def catalog():
    return build_catalog({"catalog_version": "t-1", "tools": TOOLS})


def test_inflections_share_one_term() -> None:
    assert stem_term("invoices") == stem_term("invoicing") == stem_term("invoice")
    assert stem_term("انبارها") == stem_term("انبار")
    assert stem_term("1403") == "1403"
    assert terms("the Invoices", stem=False) == ["invoice"]  # the old plural folding


def test_stemmed_query_matches_and_explains(catalog) -> None:
    engine = Discoverer(catalog, load_config())
    offer = engine.discover("invoicing")
    assert offer.names[0] == "list_invoices"
    assert engine.index.lexical.matched_terms("invoicing", catalog.tools.index(catalog.by_name["list_invoices"])) == [
        stem_term("invoice")]


def test_stem_switch_changes_matching(catalog) -> None:
    plain = Discoverer(catalog, config_from_mapping({"text": {"stem": False}}, base=load_config()))
    stemmed = Discoverer(catalog, load_config())
    assert plain.index.lexical.scores("invoicing").max() == 0
    assert stemmed.index.lexical.scores("invoicing").max() > 0
    with pytest.raises(ConfigError, match=r"text\.stem"):
        config_from_mapping({"text": {"stem": "yes"}})


def test_abstains_when_nothing_fits_and_says_why(catalog) -> None:
    engine = Discoverer(catalog, load_config())
    offer = engine.discover("tell me a joke about penguins")
    assert offer.names == () and offer.k_reason.startswith("abstained: no tool fits")


def test_history_that_names_a_tool_rules_out_abstention(catalog) -> None:
    engine = Discoverer(catalog, load_config())
    assert engine.discover("and the whole lot of them").names == ()
    offer = engine.discover("and the whole lot of them", history=["which invoices went to customers"])
    assert offer.names and offer.names[0] == "list_invoices"


def test_filler_words_are_no_evidence(catalog) -> None:
    """Stop words share n-grams with every description; the no-match signal ignores them."""
    offer = Discoverer(catalog, load_config()).discover("ok thanks, that's all for now")
    assert offer.names == () and "ngram 0.000" in offer.k_reason  # the floors (default)
    assert offer.confidence.probability is not None and offer.confidence.probability < 0.5  # the shipped model
    model = config_from_mapping({"abstain": {"model": True}}, base=load_config())
    offer = Discoverer(catalog, model).discover("ok thanks, that's all for now")
    assert offer.names == () and "P(no tool)" in offer.k_reason  # the calibrated model, when switched on
