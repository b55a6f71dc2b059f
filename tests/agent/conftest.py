"""A small catalog that exercises every policy branch the agent surface cares about."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

PARAMS_ID = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}

TOOLS = [
    {"name": "list_invoices", "description": "List sales invoices with status filters.", "side_effect": "none",
     "keywords": ["invoice", "invoices"], "domains": ["sales"], "capability": "sales.invoice", "is_core": True,
     "parameters": {"type": "object", "properties": {"status": {"type": "string", "enum": ["paid", "unpaid"]}}},
     "output_schema": {"type": "object", "properties": {"items": {"type": "array", "items": {
         "type": "object", "properties": {"id": {"type": "integer"}}}}}}},
    {"name": "get_invoice", "description": "Show one invoice by id.", "side_effect": "none",
     "keywords": ["invoice"], "domains": ["sales"], "capability": "sales.invoice", "parameters": PARAMS_ID},
    {"name": "create_invoice", "description": "Create a new sales invoice.", "side_effect": "write",
     "keywords": ["invoice"], "domains": ["sales"], "capability": "sales.invoice", "roles": ["accountant"],
     "permissions": ["invoices.write"], "parameters": PARAMS_ID},
    {"name": "delete_invoice", "description": "Delete an invoice permanently.", "side_effect": "delete",
     "keywords": ["invoice"], "domains": ["sales"], "capability": "sales.invoice", "requires_approval": True,
     "permissions": ["invoices.delete"], "parameters": PARAMS_ID},
    {"name": "export_invoices", "description": "Export invoices to an Excel file.", "side_effect": "export",
     "keywords": ["invoice", "excel"], "domains": ["sales"], "capability": "sales.report"},
    {"name": "list_products", "description": "List products in the warehouse with stock.", "side_effect": "none",
     "keywords": ["product", "stock"], "domains": ["inventory"], "capability": "inventory.product",
     "tenant_required": True, "is_core": True, "parameters": {"type": "object", "properties": {}}},
    {"name": "adjust_stock", "description": "Adjust the stock of a product.", "side_effect": "write",
     "keywords": ["stock", "product"], "domains": ["inventory"], "capability": "inventory.stock",
     "always_confirm": True, "parameters": {"type": "object", "properties": {"qty": {"type": "integer"}},
                                             "required": ["qty"]}},
    {"name": "crm::find&merge customers", "description": "Find customer records to merge.", "side_effect": "none",
     "keywords": ["customer"], "domains": ["crm"], "capability": "crm.customer",
     "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "legacy_tool", "description": "An invoice tool with no declared side effect.",
     "keywords": ["invoice"]},
    {"name": "disabled_invoice_tool", "description": "Disabled invoice tool.", "side_effect": "none",
     "enabled": False, "keywords": ["invoice"]},
]


@pytest.fixture()
def catalog_doc() -> dict:
    return {"catalog_version": "agent-test-1", "tools": [dict(t) for t in TOOLS]}


@pytest.fixture()
def catalog_path(tmp_path: Path, catalog_doc: dict) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(catalog_doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture()
def catalog(catalog_doc: dict):
    from tooldisc.discovery.catalog import build_catalog

    return build_catalog(catalog_doc, source="agent-test")


@pytest.fixture()
def discoverer(catalog):
    from tooldisc.discovery.pipeline import Discoverer

    return Discoverer(catalog)
