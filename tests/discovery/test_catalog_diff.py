"""Catalog diff: added/removed/changed tools and every policy-loosening finding."""

from __future__ import annotations

from typing import Any

import pytest

from tooldisc.discovery.catalog import build_catalog
from tooldisc.discovery.catalog_diff import SIDE_EFFECT_STRICTNESS, diff_catalogs

BASE = {
    "name": "pay_invoice", "description": "Pay an invoice", "side_effect": "write",
    "roles": ["accountant", "admin"], "permissions": ["payments.write", "invoices.read"],
    "tenant_required": True, "requires_approval": True, "always_confirm": True, "enabled": True,
    "parameters": {"type": "object"},
}


def _cat(*tools: dict[str, Any]):
    return build_catalog({"catalog_version": "1", "tools": list(tools)})


def _codes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return [f.code for f in diff_catalogs(_cat(old), _cat(new)).findings]


def test_identical_catalogs() -> None:
    d = diff_catalogs(_cat(BASE), _cat(BASE))
    assert d.unchanged and not d.loosens
    assert d.old_hash == d.new_hash
    assert d.to_dict()["changed"] == []


def test_added_removed_changed() -> None:
    other = {"name": "list_invoices", "side_effect": "none"}
    new_tool = {"name": "list_payments", "side_effect": "none", "roles": ["admin"], "permissions": ["payments.read"]}
    d = diff_catalogs(_cat(BASE, other), _cat({**BASE, "description": "Pay it", "keywords": ["pay"]}, new_tool))
    assert d.added == ("list_payments",)
    assert d.removed == ("list_invoices",)
    assert [(c.name, c.fields) for c in d.changed] == [("pay_invoice", ("description", "keywords"))]
    assert d.changed[0].old_hash != d.changed[0].new_hash
    # descriptions, removals and a read-only addition restricted by roles and permissions do not loosen
    assert not d.loosens


@pytest.mark.parametrize(("tool", "codes"), [
    # issue 10 item 16: a delete tool with no roles, permissions or approval
    ({"name": "drop_database", "side_effect": "delete"},
     ["added_not_read_only", "added_open_to_every_role", "added_needs_no_permission"]),
    ({"name": "export_all", "side_effect": "export", "roles": ["admin"], "permissions": ["x.export"]},
     ["added_not_read_only"]),
    ({"name": "never_offered", "roles": ["admin"], "permissions": ["x"]}, ["added_not_read_only"]),
    ({"name": "list_all", "side_effect": "none", "permissions": ["x.read"]}, ["added_open_to_every_role"]),
    ({"name": "list_own", "side_effect": "none", "roles": ["admin"]}, ["added_needs_no_permission"]),
    ({"name": "list_ok", "side_effect": "none", "roles": ["admin"], "permissions": ["x.read"]}, []),
])
def test_an_added_tool_loosens_unless_read_only_with_roles_and_permissions(tool, codes) -> None:
    d = diff_catalogs(_cat(BASE), _cat(BASE, tool))
    assert [f.code for f in d.findings] == codes
    assert d.loosens is bool(codes)
    assert all(f.tool == tool["name"] for f in d.findings)


def test_tightening_is_not_loosening() -> None:
    stricter = {**BASE, "side_effect": "delete", "permissions": [*BASE["permissions"], "x"], "roles": ["admin"]}
    assert _codes(BASE, stricter) == []
    assert _codes({**BASE, "requires_approval": False}, BASE) == []
    assert _codes({**BASE, "enabled": True}, {**BASE, "enabled": False}) == []


@pytest.mark.parametrize(("old", "new", "downgrade"), [
    ("delete", "write", True), ("delete", "none", True), ("export", "write", True), ("execute", "none", True),
    ("write", "none", True), (None, "none", True), (None, "delete", True),
    ("none", "write", False), ("write", "delete", False), ("export", "execute", False), ("none", None, False),
    ("delete", None, False),
])
def test_side_effect_order(old, new, downgrade: bool) -> None:
    codes = _codes({**BASE, "side_effect": old}, {**BASE, "side_effect": new})
    assert ("side_effect_downgraded" in codes) is downgrade


def test_unknown_side_effect_is_strictest() -> None:
    assert SIDE_EFFECT_STRICTNESS[None] > max(v for k, v in SIDE_EFFECT_STRICTNESS.items() if k is not None)


def test_roles_emptied_opens_the_tool_to_all() -> None:
    assert _codes(BASE, {**BASE, "roles": []}) == ["roles_emptied"]
    assert _codes(BASE, {**BASE, "roles": None}) == ["roles_emptied"]


def test_role_added_admits_more_callers() -> None:
    d = diff_catalogs(_cat(BASE), _cat({**BASE, "roles": ["accountant", "admin", "clerk"]}))
    assert [(f.code, f.field) for f in d.findings] == [("role_added", "roles")]
    assert "clerk" in d.findings[0].message
    # A role replaced by another is an addition too.
    assert _codes(BASE, {**BASE, "roles": ["accountant", "clerk"]}) == ["role_added"]


def test_role_removed_from_an_any_of_list_only_narrows() -> None:
    assert _codes(BASE, {**BASE, "roles": ["admin"]}) == []


def test_tool_without_roles_gaining_roles_is_stricter() -> None:
    assert _codes({**BASE, "roles": []}, BASE) == []


def test_permission_removed() -> None:
    d = diff_catalogs(_cat(BASE), _cat({**BASE, "permissions": ["invoices.read"]}))
    assert [f.code for f in d.findings] == ["permission_removed"]
    assert d.findings[0].old == ["payments.write", "invoices.read"]
    assert d.findings[0].new == ["invoices.read"]


@pytest.mark.parametrize(("field", "old", "new", "code"), [
    ("tenant_required", True, False, "tenant_not_required"),
    ("enabled", False, True, "enabled"),
    ("requires_approval", True, False, "requires_approval_dropped"),
    ("always_confirm", True, False, "always_confirm_dropped"),
])
def test_flag_loosening(field: str, old: bool, new: bool, code: str) -> None:
    assert _codes({**BASE, field: old}, {**BASE, field: new}) == [code]


def test_enabled_by_default_counts() -> None:
    old = {k: v for k, v in BASE.items() if k != "enabled"}
    assert _codes({**old, "enabled": False}, old) == ["enabled"]


def test_quarantine_lifted() -> None:
    broken = {**BASE, "parameters": {"type": "object", "properties": {"x": {"type": "nope"}}}}
    assert _codes(broken, BASE) == ["quarantine_lifted"]


def test_several_findings_in_filter_order() -> None:
    loose = {**BASE, "roles": [], "permissions": [], "tenant_required": False, "side_effect": "none",
             "requires_approval": False, "always_confirm": False}
    assert _codes({**BASE, "enabled": False}, loose) == [
        "enabled", "tenant_not_required", "roles_emptied", "permission_removed", "side_effect_downgraded",
        "requires_approval_dropped", "always_confirm_dropped"]


def test_to_dict_is_json_ready() -> None:
    import json

    d = diff_catalogs(_cat(BASE), _cat({**BASE, "roles": []}))
    body = json.loads(json.dumps(d.to_dict()))
    assert body["loosens_policy"] is True
    assert body["findings"][0] == {"tool": "pay_invoice", "field": "roles", "code": "roles_emptied",
                                   "old": ["accountant", "admin"], "new": [],
                                   "message": "the roles list is now empty: open to every role"}


@pytest.mark.parametrize("fmt", ["md", "html", "table"])
def test_the_catalog_diff_report_shows_names_as_data_in_every_format(fmt: str) -> None:
    """``catalog diff --format md`` goes through ``reports.render``: one escaping rule per format."""
    from tooldisc.reports.render import render

    hostile = {"name": "<svg onload=x>|[a](b)", "side_effect": "delete"}  # control characters: refused at load
    doc = {"old": "a\x1b[2J.yaml", "new": "b\u202e.yaml", **diff_catalogs(_cat(BASE), _cat(BASE, hostile)).to_dict()}
    text = render(doc, "catalog-diff", fmt)
    assert "\x1b" not in text and "\u202e" not in text and "u202e.yaml" in text  # shown as its code
    if fmt != "table":  # a terminal shows the name as written; markup formats only ever escaped
        assert "<svg" not in text.replace("\\<svg", "")
    assert "an added tool that needs no permission" in text
    if fmt == "md":
        assert "### Policy loosened" in text and "| \\<svg onload=x>\\|\\[a\\](b) | side_effect |" in text
