"""Synthetic catalogs and queries: deterministic, the right size, policy kept, vocabulary growing."""

from __future__ import annotations

import pytest

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
from tooldisc.discovery.model import Tool
from tooldisc.evaluation.bench.synthetic import (
    SyntheticQuery,
    catalog_queries,
    synthetic_catalog,
    synthetic_queries,
    vocabulary_size,
)


@pytest.fixture(scope="module")
def base():
    tools = [
        Tool("list_sales_invoices", "Lists sales invoices by date. فهرست فاکتورهای فروش.", side_effect="none",
             roles=("sales",), permissions=("invoices.read",), domains=("sales",),
             aliases=("invoice list", "لیست فاکتور"), keywords=("invoice",), examples=("show invoices",)),
        Tool("delete_customer", "Deletes a customer record. Cannot be undone.", side_effect="delete",
             roles=("admin",), permissions=("customers.delete",), domains=("people",), requires_approval=True,
             aliases=("remove customer",), keywords=("customer",)),
        Tool("export_stock_report", "Exports the warehouse stock report as a spreadsheet.", side_effect="export",
             roles=("owner",), permissions=("inventory.export",), domains=("inventory",),
             aliases=("stock excel", "گزارش موجودی انبار"), examples=("export stock",)),
    ]
    return catalog_from_tools(tools, version="t1")


def test_same_seed_same_catalog_and_other_seed_differs(base) -> None:
    a, b = synthetic_catalog(base, 60, seed=1), synthetic_catalog(base, 60, seed=1)
    assert a.tools == b.tools and a.hash == b.hash
    assert synthetic_catalog(base, 60, seed=2).hash != a.hash


def test_size_names_and_policy(base) -> None:
    cat = synthetic_catalog(base, 300, seed=0)
    assert len(cat) == 300
    assert len({t.name for t in cat.tools}) == 300
    assert cat.tools[: len(base)] == base.tools
    policy = {t.name: t for t in base.tools}
    for t in cat.tools[len(base):]:
        origin = next(b for b in base.tools if b.name in t.name)
        assert t.name not in policy
        assert (t.side_effect, t.roles, t.permissions, t.requires_approval) == (
            origin.side_effect, origin.roles, origin.permissions, origin.requires_approval)
        assert t.description != origin.description
        assert not t.is_core


def test_vocabulary_grows_with_size(base) -> None:
    small, big = synthetic_catalog(base, 100), synthetic_catalog(base, 3000)
    assert vocabulary_size(big) > 5 * vocabulary_size(small)


def test_subset_and_identity(base) -> None:
    assert synthetic_catalog(base, len(base)).tools == base.tools
    sub = synthetic_catalog(base, 2, seed=0)
    assert len(sub) == 2 and set(sub.tools) <= set(base.tools)


def test_bad_size(base) -> None:
    with pytest.raises(ValueError, match="'n' parameter"):
        synthetic_catalog(base, 0)


def test_queries_mix_and_intended_tools_exist(base) -> None:
    cat = synthetic_catalog(base, 50, seed=0)
    gold = [SyntheticQuery("g1", "show invoices", ("list_sales_invoices",)),
            SyntheticQuery("g2", "hello there", ()),
            SyntheticQuery("g3", "drop a tool", ("not_in_catalog",))]
    qs = synthetic_queries(cat, gold, 20, seed=3, base_names=frozenset(t.name for t in base.tools))
    assert len(qs) == 20
    assert qs == synthetic_queries(cat, gold, 20, seed=3, base_names=frozenset(t.name for t in base.tools))
    assert len({q.id for q in qs}) == 20
    assert {q.source for q in qs} == {"gold", "synthetic"}
    for q in qs:
        assert all(name in cat.by_name for name in q.intended)
        if q.source == "synthetic":
            assert q.intended and q.intended[0] not in {t.name for t in base.tools}


def test_catalog_queries_fallback(base) -> None:
    qs = catalog_queries(base)
    assert SyntheticQuery("cat-list_sales_invoices-0", "show invoices", ("list_sales_invoices",), (), "catalog") in qs
    mixed = synthetic_queries(base, (), 7, seed=0)
    assert len(mixed) == 7 and {q.source for q in mixed} == {"catalog"}


def test_shipped_catalog_grows_to_realistic_vocabulary() -> None:
    base = load_catalog(default_catalog_path())
    cat = synthetic_catalog(base, 5000, seed=0)
    assert len(cat) == 5000
    assert vocabulary_size(cat) > 2 * vocabulary_size(base)
