"""The Discoverer's public seam for learning runs the very steps ``discover`` runs, on the record it is given."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
from tooldisc.discovery.config import config_from_mapping, default_config
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.discovery.rank.clauses import split_clauses
from tooldisc.errors import UsageError


@pytest.fixture(scope="module")
def engine() -> Discoverer:
    return Discoverer(load_catalog(default_catalog_path()))


def test_retrieved_is_the_first_two_steps_of_discover(engine: Discoverer) -> None:
    ret = engine.retrieved("show unpaid invoices", history=("I am the accountant",))
    authorized, retrieved, method = engine.candidates("show unpaid invoices", history=("I am the accountant",))
    assert np.array_equal(ret.authorized.indices, authorized) and np.array_equal(ret.indices, retrieved)
    assert ret.method == method and ret.history == ("I am the accountant",)
    assert ret.authorized.request.context == engine.default_context and ret.authorized.request.k == engine.config.k


def test_ranked_is_discover_before_the_cut(engine: Discoverer) -> None:
    offer = engine.discover("list unpaid invoices", k=5)
    ranked = engine.ranked("list unpaid invoices", k=5)
    names = [engine.index.security.names[i] for i in ranked.order[:5]]
    assert names == list(offer.names) and ranked.retrieved.authorized.request.depth == 5


def test_clause_rankings_are_the_clauses_steps_own() -> None:
    catalog = load_catalog(default_catalog_path())
    on = Discoverer(catalog, config_from_mapping({"clauses": {"weight": 0.6}}, base=default_config()))
    query = "Show me the unpaid invoices for acme, then send a reminder email to the customer about them."
    texts = split_clauses(query, on.config.clauses.min_tokens, on.config.clauses.max_clauses)
    assert len(texts) >= 2
    whole = on.ranked(query, k=10)
    parts = on.clause_rankings(whole, texts)
    assert len(parts) == len(texts)
    for part, text in zip(parts, texts, strict=True):
        assert part.retrieved.authorized.request.query == text and part.retrieved.authorized.request.history == ()
        assert np.array_equal(part.retrieved.authorized.indices, whole.retrieved.authorized.indices)


def test_over_runs_the_steps_on_the_record_as_given(engine: Discoverer) -> None:
    same = Discoverer.over(engine.index)
    assert same.index is engine.index and same.default_context == engine.default_context
    assert same.discover("unpaid invoices").offer_hash == engine.discover("unpaid invoices").offer_hash
    varied = Discoverer.over(dataclasses.replace(engine.index, expansion=None, affinity=None))
    assert varied.index.expansion is None and varied.index.abstention is engine.index.abstention  # nothing attached
    with pytest.raises(UsageError, match="must be an Index"):
        Discoverer.over(engine)  # type: ignore[arg-type]
