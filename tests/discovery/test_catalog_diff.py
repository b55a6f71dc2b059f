"""Catalog diff: added/removed/changed tools and every policy-loosening finding."""

from __future__ import annotations

from typing import Any

import pytest

from tooldisc.discovery.catalog import build_catalog
from tooldisc.discovery.catalog.diff import ADDED_RULES, RULES, SIDE_EFFECT_ORDER, diff_catalogs

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
    stricter = {**BASE, "permissions": [*BASE["permissions"], "x"], "roles": ["admin"]}
    assert _codes(BASE, stricter) == []
    assert _codes({**BASE, "requires_approval": False}, BASE) == []
    assert _codes({**BASE, "enabled": True}, {**BASE, "enabled": False}) == []
    assert _codes(BASE, {**BASE, "side_effect": None}) == []  # unknown: never offered
    assert _codes({**BASE, "risk_level": "low"}, {**BASE, "risk_level": "high"}) == []
    assert _codes({**BASE, "parameters": None}, BASE) == []


# Every pair of side effects, by hand (issue 25 item 3): the order is none < write < export <
# execute < delete; up is "escalated" (the same callers may do more: the measured misses
# none → delete, write → delete, write → execute), down is "downgraded" (offered to milder
# requests), unknown → known is "now known", known → unknown is no loosening.
SIDE_EFFECT_CHANGES = [
    ("none", "write", "side_effect_escalated"), ("none", "export", "side_effect_escalated"),
    ("none", "execute", "side_effect_escalated"), ("none", "delete", "side_effect_escalated"),
    ("write", "export", "side_effect_escalated"), ("write", "execute", "side_effect_escalated"),
    ("write", "delete", "side_effect_escalated"), ("export", "execute", "side_effect_escalated"),
    ("export", "delete", "side_effect_escalated"), ("execute", "delete", "side_effect_escalated"),
    ("write", "none", "side_effect_downgraded"), ("export", "none", "side_effect_downgraded"),
    ("execute", "none", "side_effect_downgraded"), ("delete", "none", "side_effect_downgraded"),
    ("export", "write", "side_effect_downgraded"), ("execute", "write", "side_effect_downgraded"),
    ("delete", "write", "side_effect_downgraded"), ("execute", "export", "side_effect_downgraded"),
    ("delete", "export", "side_effect_downgraded"), ("delete", "execute", "side_effect_downgraded"),
    (None, "none", "side_effect_now_known"), (None, "write", "side_effect_now_known"),
    (None, "export", "side_effect_now_known"), (None, "execute", "side_effect_now_known"),
    (None, "delete", "side_effect_now_known"),
    ("none", None, None), ("write", None, None), ("export", None, None), ("execute", None, None),
    ("delete", None, None),
    *[(s, s, None) for s in ("none", "write", "export", "execute", "delete", None)],
]


@pytest.mark.parametrize(("old", "new", "code"), SIDE_EFFECT_CHANGES)
def test_side_effect_order(old, new, code) -> None:
    assert _codes({**BASE, "side_effect": old}, {**BASE, "side_effect": new}) == ([code] if code else [])


def test_every_side_effect_pair_is_written_out() -> None:
    values = [*SIDE_EFFECT_ORDER, None]
    assert sorted(((o or ""), (n or "")) for o, n, _ in SIDE_EFFECT_CHANGES) == sorted(
        ((o or ""), (n or "")) for o in values for n in values)
    assert SIDE_EFFECT_ORDER == ("none", "write", "export", "execute", "delete")


# One hand-written case per rule of the table: (old tool fields, new tool fields), changing only
# what the rule reads, so the rule's code must be the one finding; the reverse change must not
# raise it. Written apart from the table, so a rule that drifts from its meaning fails here.
RULE_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "enabled": ({"enabled": False}, {"enabled": True}),
    "quarantine_lifted": ({"parameters": {"type": "object", "properties": {"x": {"type": "nope"}}}}, {}),
    "side_effect_now_known": ({"side_effect": None}, {"side_effect": "none"}),
    "tenant_not_required": ({"tenant_required": True}, {"tenant_required": False}),
    "roles_emptied": ({"roles": ["admin"]}, {"roles": []}),
    "role_added": ({"roles": ["admin"]}, {"roles": ["admin", "clerk"]}),
    "permission_removed": ({"permissions": ["a.read", "a.write"]}, {"permissions": ["a.read"]}),
    "side_effect_downgraded": ({"side_effect": "delete"}, {"side_effect": "write"}),
    "side_effect_escalated": ({"side_effect": "write"}, {"side_effect": "delete"}),
    "requires_approval_dropped": ({"requires_approval": True}, {"requires_approval": False}),
    "always_confirm_dropped": ({"always_confirm": True}, {"always_confirm": False}),
    "risk_level_lowered": ({"risk_level": "high"}, {"risk_level": "low"}),
    "parameters_dropped": ({}, {"parameters": None}),
}
ADDED_CASES: dict[str, dict[str, Any]] = {
    "added_not_read_only": {"side_effect": "write", "roles": ["admin"], "permissions": ["a.write"]},
    "added_open_to_every_role": {"side_effect": "none", "permissions": ["a.read"]},
    "added_needs_no_permission": {"side_effect": "none", "roles": ["admin"]},
}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_each_rule_of_the_table(rule) -> None:
    assert rule.code in RULE_CASES, f"rule {rule.code} has no hand-written case"
    old, new = RULE_CASES[rule.code]
    before, after = {**BASE, **old}, {**BASE, **new}
    d = diff_catalogs(_cat(before), _cat(after))
    assert [(f.code, f.field) for f in d.findings] == [(rule.code, rule.field)]
    assert d.loosens
    assert rule.code not in _codes(after, before)


def test_the_table_has_no_rule_without_a_case_and_no_case_without_a_rule() -> None:
    assert sorted(r.code for r in RULES) == sorted(RULE_CASES)
    assert sorted(r.code for r in ADDED_RULES) == sorted(ADDED_CASES)
    assert len({r.code for r in (*RULES, *ADDED_RULES)}) == len(RULES) + len(ADDED_RULES)


@pytest.mark.parametrize("rule", ADDED_RULES, ids=lambda r: r.code)
def test_each_added_rule_of_the_table(rule) -> None:
    tool = {"name": "new_tool", **ADDED_CASES[rule.code]}
    assert [(f.code, f.field) for f in diff_catalogs(_cat(BASE), _cat(BASE, tool)).findings] == [(rule.code, rule.field)]


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
