"""What changed between two catalogs, and which changes loosen security policy.

A catalog change is a policy change: a reviewer (or CI job) must see when an edit
lets more requests, roles or callers reach a tool. Tools are matched by name;
"changed" means the definition hash differs, listed by field. Loosening findings
follow the §4 filter exactly: ``roles`` is an any-of allow list (adding a role, or
emptying the list, admits more callers), ``permissions`` is an all-of requirement
(removing one admits more), and side effects are ordered by strictness with a
missing side effect the strictest of all, since it is never offered.

An added tool is a loosening too unless it is read-only and names both the roles
that may use it and the permissions it needs (issue 10 item 16): adding
``{name: drop_database, side_effect: delete}`` with no roles, permissions or approval
must fail a review gate, not print "no loosening".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tooldisc.discovery.catalog import TOOL_FIELDS, Catalog, tool_to_dict
from tooldisc.discovery.model import Tool

# Higher is stricter. export and execute are both HIGH_RISK; None (unknown) is never offered.
SIDE_EFFECT_STRICTNESS: dict[str | None, int] = {
    "none": 0, "write": 1, "export": 2, "execute": 2, "delete": 3, None: 4,
}


@dataclass(frozen=True)
class ToolChange:
    """A tool present in both catalogs whose definition hash differs."""

    name: str
    fields: tuple[str, ...]
    old_hash: str
    new_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "fields": list(self.fields), "old_hash": self.old_hash, "new_hash": self.new_hash}


@dataclass(frozen=True)
class Finding:
    """One policy-loosening change: the tool, the field, a stable code, and both values."""

    tool: str
    field: str
    code: str
    old: Any
    new: Any
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "field": self.field, "code": self.code, "old": self.old, "new": self.new,
                "message": self.message}


@dataclass(frozen=True)
class CatalogDiff:
    """The difference between an old and a new catalog, sorted by tool name."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[ToolChange, ...]
    findings: tuple[Finding, ...]
    old_hash: str
    new_hash: str

    @property
    def loosens(self) -> bool:
        """Whether any change admits more requests or callers (CI fails on this)."""
        return bool(self.findings)

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "old_hash": self.old_hash,
            "new_hash": self.new_hash,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": [c.to_dict() for c in self.changed],
            "loosens_policy": self.loosens,
            "findings": [f.to_dict() for f in self.findings],
        }


def changed_fields(old: Tool, new: Tool) -> tuple[str, ...]:
    """Fields whose canonical values differ, in catalog field order."""
    a, b = tool_to_dict(old), tool_to_dict(new)
    return tuple(f for f in TOOL_FIELDS if a[f] != b[f])


def loosening(old: Tool, new: Tool) -> list[Finding]:
    """Every way ``new`` admits more than ``old`` did, in filter order (DESIGN §4)."""
    name = old.name
    out: list[Finding] = []

    def add(field: str, code: str, old_v: Any, new_v: Any, message: str) -> None:
        out.append(Finding(name, field, code, old_v, new_v, message))

    if not old.enabled and new.enabled:
        add("enabled", "enabled", False, True, "a disabled tool is enabled")
    if old.quarantine and not new.quarantine:
        add("quarantine", "quarantine_lifted", old.quarantine, None, "a quarantined tool can now be offered")
    if old.tenant_required and not new.tenant_required:
        add("tenant_required", "tenant_not_required", True, False, "the tool no longer needs a tenant")
    if old.roles and not new.roles:
        add("roles", "roles_emptied", list(old.roles), [], "the roles list is now empty: open to every role")
    elif old.roles:
        gained = sorted(set(new.roles) - set(old.roles))
        if gained:
            add("roles", "role_added", list(old.roles), list(new.roles),
                f"role(s) {', '.join(gained)} may now use the tool")
    dropped = sorted(set(old.permissions) - set(new.permissions))
    if dropped:
        add("permissions", "permission_removed", list(old.permissions), list(new.permissions),
            f"permission(s) {', '.join(dropped)} no longer required")
    before, after = SIDE_EFFECT_STRICTNESS.get(old.side_effect, 4), SIDE_EFFECT_STRICTNESS.get(new.side_effect, 4)
    if after < before:
        add("side_effect", "side_effect_downgraded", old.side_effect, new.side_effect,
            f"side effect downgraded from {old.side_effect or 'unknown'} to {new.side_effect or 'unknown'}")
    for field in ("requires_approval", "always_confirm"):
        if getattr(old, field) and not getattr(new, field):
            add(field, f"{field}_dropped", True, False, f"{field} turned off")
    return out


def added_loosening(tool: Tool) -> list[Finding]:
    """Why an added tool widens what the catalog allows (empty when it is read-only and restricted)."""
    out: list[Finding] = []
    if tool.side_effect != "none":
        shown = tool.side_effect or "unknown"
        out.append(Finding(tool.name, "side_effect", "added_not_read_only", None, tool.side_effect,
                           f"an added tool that is not read-only (side effect {shown})"))
    if not tool.roles:
        out.append(Finding(tool.name, "roles", "added_open_to_every_role", None, [],
                           "an added tool with no roles: open to every role"))
    if not tool.permissions:
        out.append(Finding(tool.name, "permissions", "added_needs_no_permission", None, [],
                           "an added tool that needs no permission"))
    return out


def diff_catalogs(old: Catalog, new: Catalog) -> CatalogDiff:
    """Added, removed and changed tools, plus every policy-loosening finding (by tool name)."""
    old_by, new_by = old.by_name, new.by_name
    added = tuple(sorted(set(new_by) - set(old_by)))
    removed = tuple(sorted(set(old_by) - set(new_by)))
    changed: list[ToolChange] = []
    findings: list[Finding] = [f for name in added for f in added_loosening(new_by[name])]
    for name in sorted(set(old_by) & set(new_by)):
        a, b = old_by[name], new_by[name]
        if a.definition_hash != b.definition_hash:
            changed.append(ToolChange(name, changed_fields(a, b), a.definition_hash, b.definition_hash))
        findings.extend(loosening(a, b))
    findings.sort(key=lambda f: f.tool)  # stable: filter order within a tool
    return CatalogDiff(added, removed, tuple(changed), tuple(findings), old.hash, new.hash)
