"""A tiny catalog and gold set whose offers are easy to reason about, and the shipped ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TOOLS = [
    {"name": "list_invoices", "description": "List sales invoices", "side_effect": "none",
     "keywords": ["invoice", "invoices", "bill"]},
    {"name": "get_invoice", "description": "Get one sales invoice by number", "side_effect": "none",
     "keywords": ["invoice"]},
    {"name": "create_invoice", "description": "Create a sales invoice", "side_effect": "write",
     "keywords": ["invoice"]},
    {"name": "delete_invoice", "description": "Delete a sales invoice", "side_effect": "delete",
     "keywords": ["invoice"]},
    {"name": "list_customers", "description": "List customers", "side_effect": "none",
     "keywords": ["customer", "customers", "client"]},
    {"name": "export_report", "description": "Export a sales report as Excel", "side_effect": "export",
     "keywords": ["report", "excel"]},
]

QUERIES = [
    {"id": "q1", "query": "show sales invoices", "primary_expected_tools": ["list_invoices"],
     "acceptable_tools": ["get_invoice"], "intent": "read", "category": "invoice", "difficulty": "easy"},
    {"id": "q2", "query": "delete the invoice", "primary_expected_tools": ["delete_invoice"],
     "forbidden_tools": ["create_invoice"], "intent": "delete", "category": "invoice", "difficulty": "easy"},
    {"id": "q3", "query": "list customers", "primary_expected_tools": ["list_customers"], "intent": "read",
     "category": "customer", "difficulty": "easy"},
    {"id": "q4", "query": "show me the weather on mars", "primary_expected_tools": ["list_customers"],
     "intent": "read", "category": "customer", "difficulty": "hard"},
    {"id": "q5", "query": "tell me a joke about penguins", "no_match": True, "intent": "none",
     "category": "none", "difficulty": "easy"},
    {"id": "q6", "query": "show invoices and customers", "primary_expected_tools": ["list_customers"],
     "intent": "read", "category": "customer", "difficulty": "medium",
     "history": [{"role": "user", "content": "I mean clients"}]},
    {"id": "q7", "query": "list invoices of customers", "primary_expected_tools": ["list_invoices"],
     "forbidden_tools": ["list_customers"], "intent": "read", "category": "invoice", "difficulty": "medium"},
]


@pytest.fixture(scope="session")
def tiny_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(catalog.json, gold.json)`` on disk, as a user would pass them."""
    d = tmp_path_factory.mktemp("tiny")
    cat = d / "catalog.json"
    cat.write_text(json.dumps({"catalog_version": "tiny-1", "tools": TOOLS}), encoding="utf-8")
    gold = d / "gold.json"
    gold.write_text(json.dumps({"dataset_version": "tiny-gold-1", "catalog_version": "tiny-1",
                                "queries": QUERIES}), encoding="utf-8")
    return cat, gold


@pytest.fixture(scope="session")
def tiny(tiny_files: tuple[Path, Path]):
    """``(catalog, gold, engine)`` for the tiny set, built once."""
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.gold.loader import load_gold

    cat = load_catalog(tiny_files[0])
    return cat, load_gold(tiny_files[1]), Discoverer(cat)


@pytest.fixture(scope="session")
def shipped():
    """``(catalog, gold, engine)`` for the shipped default data."""
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.inputs import default_gold_path
    from tooldisc.gold.loader import load_gold

    cat = load_catalog(default_catalog_path())
    gold = load_gold(default_gold_path())
    return cat, gold, Discoverer(cat)
