"""The ``_meta`` keys tooldisc reads on MCP requests: a closed schema, as every policy document's.

An MCP request's ``_meta`` is an open map shared by every layer (the SDK's
``progressToken``, the protocol's ``io.modelcontextprotocol/…`` keys). tooldisc reads
four keys of its own namespace; :func:`read_meta` refuses anything else in that
namespace instead of ignoring it, because an ignored key fails open: a client whose
``tooldisc/qurey`` was dropped believes it started a new request while the previous
(perhaps destructive) one is still current.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tooldisc import values
from tooldisc.errors import UsageError

QUERY_META_KEY = "tooldisc/query"
FORCED_META_KEY = "tooldisc/forced"
APPROVAL_META_KEY = "tooldisc/approval"
USER_META_KEY = "tooldisc/user"
MAX_USER_ID = 256

LIST, SEARCH, CALL = "tools/list", "tools/call search_tools", "tools/call"
# The closed schema of tooldisc's _meta keys: key → (what its value must be, the requests that read it).
META_SCHEMA: dict[str, tuple[str, tuple[str, ...]]] = {
    QUERY_META_KEY: ("a string (the user's request text)", (LIST, SEARCH)),
    FORCED_META_KEY: ("a list of tool names this server issued (strings)", (LIST, SEARCH)),
    APPROVAL_META_KEY: ("a string (an approval key)", (CALL,)),
    # the request's user, for interleaving's bucket only (tooldisc.agent.interleaving); never logged
    USER_META_KEY: (f"a non-empty string of at most {MAX_USER_ID} characters (the user id, for bucketing "
                    "only)", (LIST, SEARCH)),
}
# A key is tooldisc's when, folded (NFKC, case, format characters dropped), it is
# "tooldisc" or starts with "tooldisc" and a separator: "Tooldisc/query" and
# "tooldisc.query" are misspellings to refuse, not another vendor's keys to ignore.
_OURS = re.compile(r"tooldisc(?![a-z0-9])")


@dataclass(frozen=True)
class RequestMeta:
    """tooldisc's keys of one request's ``_meta``, read by :func:`read_meta` (None: the key was absent)."""

    query: str | None = None
    forced: tuple[str, ...] | None = None
    approval: str | None = None
    user: str | None = None  # bucketing only (interleaving); never logged


def _folded(key: str) -> str:
    text = "".join(c for c in unicodedata.normalize("NFKC", key) if unicodedata.category(c) != "Cf")
    return text.casefold().strip()


def read_meta(meta: Any, request: str) -> RequestMeta:
    """The ``tooldisc/`` keys of a request's ``_meta``, checked against :data:`META_SCHEMA`.

    ``request`` is :data:`LIST`, :data:`SEARCH` or :data:`CALL`. An unknown key in
    tooldisc's namespace (a misspelling is one), a key this request does not read,
    or a value of the wrong type is a :class:`UsageError` (one line): ignoring it
    would leave the client believing it had, say, started a new request. Keys of
    other namespaces (``progressToken``, ``io.modelcontextprotocol/…``) are not
    tooldisc's and are not read.
    """
    from difflib import get_close_matches

    if meta is None:
        return RequestMeta()
    if not isinstance(meta, Mapping):
        raise UsageError(f"_meta must be an object; got {type(meta).__name__}")
    given: dict[str, Any] = {}
    for key in sorted(k for k in meta if isinstance(k, str) and _OURS.match(_folded(k))):
        spec = META_SCHEMA.get(key)
        if spec is None:
            near = get_close_matches(_folded(key), list(META_SCHEMA), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else f"; tooldisc reads {', '.join(META_SCHEMA)}"
            raise UsageError(f"_meta: unknown key {key!r}{hint}")
        what, requests = spec
        if request not in requests:
            raise UsageError(f"_meta: {key!r} is not read on {request} (only on {' and '.join(requests)})")
        value = meta[key]
        if key == FORCED_META_KEY:
            ok = isinstance(value, list) and all(isinstance(v, str) and v for v in value)
        elif key == USER_META_KEY:
            ok = isinstance(value, str) and 0 < len(value) <= MAX_USER_ID
        else:
            ok = isinstance(value, str)
        if not ok:
            # a user id is never echoed, not even in an error: its type and length say what is wrong
            got = (f"{type(value).__name__} of length {len(value)}" if key == USER_META_KEY and isinstance(value, str)
                   else type(value).__name__ if key == USER_META_KEY else values.shown(value))
            raise UsageError(f"_meta: {key!r} must be {what}; got {got}")
        given[key] = value
    forced = given.get(FORCED_META_KEY)
    return RequestMeta(given.get(QUERY_META_KEY), None if forced is None else tuple(forced),
                       given.get(APPROVAL_META_KEY), given.get(USER_META_KEY))
