"""The security filter: which tools a context may see for a query (DESIGN §4).

Runs before any ranking and fails closed. Order: enabled → tenant → role →
permission → execution mode → side-effect matrix. The per-context part is computed
once per (catalog, context) with sparse incidence matrices, so 100k tools cost one
matrix-vector product, and the query-dependent part is one ``isin`` over codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from tooldisc.discovery.catalog import NameIndex
from tooldisc.discovery.indexes.sparse import ranges
from tooldisc.discovery.model import Context, Tool
from tooldisc.memory import gc_paused

READ, WRITE, DESTRUCTIVE, EXPORT, EXECUTE, UNKNOWN = "READ", "WRITE", "DESTRUCTIVE", "EXPORT", "EXECUTE", "UNKNOWN"
MUTATIONS = (DESTRUCTIVE, EXECUTE, EXPORT, WRITE, READ, UNKNOWN)

# side_effect → tool class (DESIGN §4). Missing or disabled → UNKNOWN.
TOOL_CLASS = {"none": "READ_ONLY", "write": "WRITE", "delete": "DESTRUCTIVE", "export": "HIGH_RISK", "execute": "HIGH_RISK"}

# The §4 matrix, by side effect so that HIGH_RISK's "export only / execute only" is exact.
ALLOWED_SIDE_EFFECTS: dict[str, frozenset[str]] = {
    READ: frozenset({"none"}),
    UNKNOWN: frozenset({"none"}),
    WRITE: frozenset({"none", "write"}),
    DESTRUCTIVE: frozenset({"none", "delete"}),
    EXPORT: frozenset({"none", "export"}),
    EXECUTE: frozenset({"none", "execute"}),
}
_SE_CODES = {"none": 0, "write": 1, "delete": 2, "export": 3, "execute": 4}
_UNKNOWN_CODE = -1


def index_dtype(n: int) -> type[np.signedinteger]:
    """int32 for catalog positions (and counts) while they fit, else int64: half the bytes at 100k tools."""
    return np.int32 if n < 2**31 else np.int64


def side_effect_code(side_effect: str | None) -> int:
    return _SE_CODES.get(side_effect, _UNKNOWN_CODE) if side_effect else _UNKNOWN_CODE


def allowed_side_effects(mutation: str, mode: str) -> frozenset[str]:
    """Side effects a request may see: ``analyzer`` is read-only whatever the query says."""
    if mode == "analyzer":
        return ALLOWED_SIDE_EFFECTS[READ]
    return ALLOWED_SIDE_EFFECTS.get(mutation, ALLOWED_SIDE_EFFECTS[READ])


@dataclass(frozen=True)
class Refusal:
    """Why a tool is not a candidate: the step that removed it and a reason."""

    step: str
    reason: str


def check_tool(tool: Tool, context: Context, mutation: str) -> Refusal | None:
    """Per-tool reference implementation of the filter, used by ``--explain`` and tests."""
    if not tool.enabled:
        return Refusal("enabled", "the tool is disabled")
    if tool.quarantine:
        return Refusal("enabled", f"the tool is quarantined ({tool.quarantine})")
    if tool.side_effect not in TOOL_CLASS:
        return Refusal("enabled", "the tool's side effect is unknown (fail closed)")
    if tool.tenant_required and not context.tenant:
        return Refusal("tenant", "the tool needs a tenant and the context has none")
    if tool.roles and not (set(tool.roles) & context.roles):
        return Refusal("role", f"needs one of the roles {', '.join(sorted(tool.roles))}")
    missing = [p for p in tool.permissions if p not in context.permissions]
    if missing:
        return Refusal("permission", f"needs the permission(s) {', '.join(sorted(missing))}")
    if context.mode == "analyzer" and tool.side_effect != "none":
        return Refusal("mode", "analyzer mode sees read-only tools only")
    if tool.name in context.forced:
        return None
    if tool.side_effect not in allowed_side_effects(mutation, context.mode):
        return Refusal("side_effect", f"a {mutation} query may not see a {tool.side_effect!r} tool")
    return None


class SecurityIndex:
    """Policy columns of a catalog laid out for vectorised filtering.

    Roles and permissions are stored as (tool, id) pairs; checking a context is two
    weighted ``bincount`` calls, whatever the catalog size.
    """

    def __init__(self, tools: Sequence[Tool], names: NameIndex | None = None):
        """``names``: the tools' :class:`NameIndex` when the catalog already has one (shared, not rebuilt)."""
        with gc_paused():  # per-tool lists and dicts, no cycles: see gc_paused
            self._build(tools, names)

    def _build(self, tools: Sequence[Tool], names: NameIndex | None) -> None:
        n = len(tools)
        self.n = n
        self.name_to_idx = names if names is not None else NameIndex.of([t.name for t in tools])
        self.names = self.name_to_idx.names
        self.side_effect = np.array(
            [_SE_CODES.get(t.side_effect, _UNKNOWN_CODE) if t.enabled and not t.quarantine else _UNKNOWN_CODE
             for t in tools],
            dtype=np.int8,
        )
        self.tenant_required = np.array([t.tenant_required for t in tools], dtype=bool)
        self._role_idx, self._role_tool, self._role_id = _pairs(tools, "roles")
        self._perm_idx, self._perm_tool, self._perm_id = _pairs(tools, "permissions")
        self.has_roles = np.bincount(self._role_tool, minlength=n) > 0
        self.perm_count = np.bincount(self._perm_tool, minlength=n).astype(index_dtype(n))

    def static_mask(self, context: Context) -> np.ndarray:
        """Enabled, tenant, role, permission and mode checks for one context."""
        mask = self.side_effect != _UNKNOWN_CODE
        if not context.tenant:
            mask &= ~self.tenant_required
        role_sel = _selector(context.roles, self._role_idx)
        role_hits = np.bincount(self._role_tool, weights=role_sel[self._role_id], minlength=self.n)
        mask &= ~self.has_roles | (role_hits > 0)
        perm_sel = _selector(context.permissions, self._perm_idx)
        perm_hits = np.bincount(self._perm_tool, weights=perm_sel[self._perm_id], minlength=self.n)
        mask &= perm_hits == self.perm_count
        if context.mode == "analyzer":
            mask &= self.side_effect == _SE_CODES["none"]
        return mask

    def mutation_mask(self, mutation: str, context: Context) -> np.ndarray:
        codes = [_SE_CODES[s] for s in allowed_side_effects(mutation, context.mode)]
        mask = np.isin(self.side_effect, codes)
        for name in context.forced:
            i = self.name_to_idx.get(name)
            if i is not None:
                mask[i] = True
        return mask


def _pairs(tools: Sequence[Tool], attr: str) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """Distinct (tool, value) pairs of a list field, as id arrays.

    Value ids are numbered in first-occurrence order; each distinct tuple of values
    (most tools share their roles and permissions) is resolved to ids once, and the
    tools are mapped to their tuple in C-level passes (no Python statement per tool).
    """
    values = list(map(attrgetter(attr), tools))
    distinct = list(dict.fromkeys(values))  # first-occurrence order
    position = {v: i for i, v in enumerate(distinct)}
    which = np.fromiter(map(position.__getitem__, values), dtype=np.int64, count=len(values))
    del values, position
    index: dict[str, int] = {}
    per_tuple = [[index.setdefault(v, len(index)) for v in dict.fromkeys(t)] for t in distinct]
    lengths = np.fromiter(map(len, per_tuple), dtype=np.int64, count=len(per_tuple))
    flat = np.fromiter(chain.from_iterable(per_tuple), dtype=np.int64, count=int(lengths.sum()))
    starts = np.zeros(len(per_tuple), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    counts = lengths[which]
    # kept for the index's life: 4 bytes an entry where positions and value ids fit
    tool_ids = np.repeat(np.arange(len(tools), dtype=index_dtype(len(tools))), counts)
    return index, tool_ids, flat[ranges(starts[which], counts)].astype(index_dtype(max(len(index), 1)))


def _selector(values: frozenset[str], index: dict[str, int]) -> np.ndarray:
    vec = np.zeros(max(len(index), 1), dtype=np.float64)
    for v in values:
        i = index.get(v)
        if i is not None:
            vec[i] = 1.0
    return vec
