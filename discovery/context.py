"""Building the request :class:`Context` from flags, a context file, or the default.

DESIGN §5: when nothing is given the context is every role and permission the
catalog names, tenant ``default``, mode ``autonomous`` — and output says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from tooldisc.closed_schema import check_keys
from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.model import MODES, Context
from tooldisc.errors import ConfigError

_KEYS = ("tenant", "roles", "permissions", "mode", "forced")


def default_context(catalog: Catalog) -> Context:
    return Context(
        tenant="default",
        roles=catalog.roles(),
        permissions=catalog.permissions(),
        mode="autonomous",
        is_default=True,
    )


def _str_list(value: Any, key: str, file: str | None) -> frozenset[str]:
    """A list of non-empty strings. A bare string is refused, as :class:`Context` refuses it:
    a collection of names is never one string (``forced: abc`` is not ``[abc]``)."""
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{key} must be a list of non-empty strings; got {value!r}", file=file, where=key)
    return frozenset(value)


def context_from_mapping(data: Any, *, file: str | None = None) -> Context:
    """A context file's content (tenant, roles, permissions, mode, forced) → Context.

    Closed (tooldisc.closed_schema): an unknown key is an error naming the nearest known
    one, ``x-`` keys are extension data, and no context key may hide inside one.
    """
    if not isinstance(data, Mapping):
        raise ConfigError("a context must be a mapping with tenant, roles, permissions, mode, forced", file=file)
    check_keys(data, _KEYS, file=file, error=ConfigError, policy=_KEYS)
    tenant = data.get("tenant")
    if tenant is not None and (not isinstance(tenant, str | int) or isinstance(tenant, bool) or str(tenant) == ""):
        raise ConfigError(f"tenant must be a non-empty string; got {tenant!r}", file=file, where="tenant")
    mode = data.get("mode", "autonomous")
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}", file=file, where="mode")
    return Context(
        tenant=None if tenant is None else str(tenant),
        roles=_str_list(data.get("roles"), "roles", file),
        permissions=_str_list(data.get("permissions"), "permissions", file),
        mode=mode,
        forced=_str_list(data.get("forced"), "forced", file),
    )


MAX_CONTEXT_BYTES = 1024 * 1024


def load_context_file(path: str | os.PathLike[str]) -> Context:
    """A context file (YAML/JSON) through the hardened reader: duplicate keys, deep
    nesting and YAML alias bombs are refused before the mapping is looked at."""
    from tooldisc.documents import load_document

    data = load_document(path, max_bytes=MAX_CONTEXT_BYTES, what="context file", error=ConfigError)
    return context_from_mapping(data, file=str(path))


def build_context(
    catalog: Catalog,
    *,
    context_file: str | None = None,
    tenant: str | None = None,
    roles: Iterable[str] = (),
    permissions: Iterable[str] = (),
    mode: str | None = None,
    forced: Iterable[str] = (),
) -> Context:
    """Flags, or one context file, or the catalog default. Mixing a file and flags is refused."""
    roles, permissions, forced = list(roles), list(permissions), list(forced)
    flags_given = bool(tenant or roles or permissions or mode or forced)
    if context_file:
        if flags_given:
            from tooldisc.errors import UsageError

            raise UsageError("give the context either as flags or as --context-file, not both")
        return load_context_file(context_file)
    if not flags_given:
        return default_context(catalog)
    return context_from_mapping(
        {"tenant": tenant, "roles": roles, "permissions": permissions, "mode": mode or "autonomous",
         "forced": forced},
        file="--flags",
    )
