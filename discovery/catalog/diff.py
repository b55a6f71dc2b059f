"""What changed between two catalogs, and which changes loosen security policy.

A catalog change is a policy change: a reviewer (or CI job) must see when an edit
lets more requests, roles or callers reach a tool, or lets what reaches it do more.
Tools are matched by name; "changed" means the definition hash differs, listed by
field. Which changes loosen is one table of rules, data read in one place
(:data:`RULES` for a tool in both catalogs, :data:`ADDED_RULES` for an added one), so
each rule is tested on its own (issue 25 item 3):

- ``roles`` is an any-of allow list: adding a role, or emptying the list, admits more
  callers; ``permissions`` is an all-of requirement: removing one (or all) admits more;
- a side effect is ordered by what the tool does, ``none < write < export < execute <
  delete``: moving up lets the same callers do more, moving down offers the tool to
  requests of a milder class (a delete tool declared read-only is offered to every read
  request), and moving from unknown (never offered) to any known value makes it
  reachable at all — so every change between known side effects is a loosening, and
  only a change to unknown is not;
- dropping ``tenant_required``, ``requires_approval`` or ``always_confirm``, enabling a
  disabled tool, lifting a quarantine, lowering a high ``risk_level`` (plans refuse
  high-risk tools) and dropping ``parameters`` (any arguments accepted) loosen too.

An added tool is a loosening too unless it is read-only and names both the roles
that may use it and the permissions it needs (issue 10 item 16): adding
``{name: drop_database, side_effect: delete}`` with no roles, permissions or approval
must fail a review gate, not print "no loosening".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooldisc.discovery.catalog import TOOL_FIELDS, Catalog, tool_to_dict
from tooldisc.discovery.model import Tool

# What a tool does, in order (issue 25): a move up lets the same callers do more.
SIDE_EFFECT_ORDER: tuple[str, ...] = ("none", "write", "export", "execute", "delete")
_RANK = {s: i for i, s in enumerate(SIDE_EFFECT_ORDER)}
HIGH_RISK_LEVELS = frozenset({"high", "critical"})  # as the plan validator reads risk_level


def _high(level: Any) -> bool:
    return isinstance(level, str) and level.lower() in HIGH_RISK_LEVELS


def _shown(value: Any) -> str:
    return "unknown" if value is None else str(value)


@dataclass(frozen=True)
class Rule:
    """One way a change loosens policy: the field it reads, a stable code, when it applies
    (old value, new value → bool) and what the finding says (old, new → message)."""

    field: str
    code: str
    applies: Callable[[Any, Any], bool]
    message: Callable[[Any, Any], str]


@dataclass(frozen=True)
class AddedRule:
    """One way an added tool widens the catalog: the field, a stable code, when (the new value)."""

    field: str
    code: str
    applies: Callable[[Any], bool]
    message: Callable[[Any], str]


# In the filter's order (DESIGN §4), then what a call may do once reached.
RULES: tuple[Rule, ...] = (
    Rule("enabled", "enabled", lambda o, n: o is False and n is True,
         lambda o, n: "a disabled tool is enabled"),
    Rule("quarantine", "quarantine_lifted", lambda o, n: bool(o) and not n,
         lambda o, n: "a quarantined tool can now be offered"),
    Rule("side_effect", "side_effect_now_known", lambda o, n: o is None and n is not None,
         lambda o, n: f"a tool that was never offered (unknown side effect) now has side effect {n}"),
    Rule("tenant_required", "tenant_not_required", lambda o, n: o is True and n is False,
         lambda o, n: "the tool no longer needs a tenant"),
    Rule("roles", "roles_emptied", lambda o, n: bool(o) and not n,
         lambda o, n: "the roles list is now empty: open to every role"),
    Rule("roles", "role_added", lambda o, n: bool(o) and bool(n) and not set(n) <= set(o),
         lambda o, n: f"role(s) {', '.join(sorted(set(n) - set(o)))} may now use the tool"),
    Rule("permissions", "permission_removed", lambda o, n: not set(o) <= set(n),
         lambda o, n: f"permission(s) {', '.join(sorted(set(o) - set(n)))} no longer required"
                      + ("; none is required now" if not n else "")),
    Rule("side_effect", "side_effect_downgraded",
         lambda o, n: o is not None and n is not None and _RANK[n] < _RANK[o],
         lambda o, n: f"side effect downgraded from {o} to {n}: offered to milder requests"),
    Rule("side_effect", "side_effect_escalated",
         lambda o, n: o is not None and n is not None and _RANK[n] > _RANK[o],
         lambda o, n: f"side effect escalated from {o} to {n}: the same callers may now do more"),
    Rule("requires_approval", "requires_approval_dropped", lambda o, n: o is True and n is False,
         lambda o, n: "requires_approval turned off"),
    Rule("always_confirm", "always_confirm_dropped", lambda o, n: o is True and n is False,
         lambda o, n: "always_confirm turned off"),
    Rule("risk_level", "risk_level_lowered", lambda o, n: _high(o) and not _high(n),
         lambda o, n: f"risk level lowered from {o} to {_shown(n)}: plans may now use the tool"),
    Rule("parameters", "parameters_dropped", lambda o, n: o is not None and n is None,
         lambda o, n: "the parameters schema was removed: any arguments are now accepted"),
)

ADDED_RULES: tuple[AddedRule, ...] = (
    AddedRule("side_effect", "added_not_read_only", lambda v: v != "none",
              lambda v: f"an added tool that is not read-only (side effect {_shown(v)})"),
    AddedRule("roles", "added_open_to_every_role", lambda v: not v,
              lambda v: "an added tool with no roles: open to every role"),
    AddedRule("permissions", "added_needs_no_permission", lambda v: not v,
              lambda v: "an added tool that needs no permission"),
)


def _json(value: Any) -> Any:
    """A field's value as the finding reports it (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


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
    """Every way ``new`` admits more than ``old`` did: each rule of :data:`RULES` that applies, in table order."""
    out: list[Finding] = []
    for rule in RULES:
        before, after = getattr(old, rule.field), getattr(new, rule.field)
        if rule.applies(before, after):
            out.append(Finding(old.name, rule.field, rule.code, _json(before), _json(after),
                               rule.message(before, after)))
    return out


def added_loosening(tool: Tool) -> list[Finding]:
    """Why an added tool widens what the catalog allows (empty when it is read-only and restricted)."""
    out: list[Finding] = []
    for rule in ADDED_RULES:
        value = getattr(tool, rule.field)
        if rule.applies(value):
            out.append(Finding(tool.name, rule.field, rule.code, None, _json(value), rule.message(value)))
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
