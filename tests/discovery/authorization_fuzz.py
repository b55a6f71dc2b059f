"""The authorization fuzz (issue 25 item 7, first suite): strategies, mutations and the oracle.

A random valid catalog and context are drawn as the raw documents a user writes; one
policy-bearing key or value of either is then mutated the ways a typo, an exporter or an
attacker would (case, spelling, singular/plural, type, nesting, an extra unknown key, a Unicode
look-alike). The property: the mutated input is either refused at load, or every tool the
security filter passes and every call the guard lets run is one the oracle allows on the
*unmutated* input. No mutation may widen access.

The oracle reads the raw documents and the literal §4 matrix of
:mod:`tests.discovery.security_oracle` (``MATRIX``), never tooldisc's loaders, defaults or
filter: so a loader that misreads a key, or a guard that skips a check, is caught here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.discovery.security_oracle import COLUMNS, MATRIX

ROLES = ("owner", "admin", "clerk", "viewer")
PERMS = ("a.read", "a.write", "b.delete", "c.run")
SIDE_EFFECTS = ("none", "write", "delete", "export", "execute")
MODES = ("analyzer", "supervised", "autonomous")
CLASSES = ("READ", "UNKNOWN", "WRITE", "DESTRUCTIVE", "EXPORT", "EXECUTE")
TOOL_FLAGS = ("tenant_required", "enabled", "requires_approval", "always_confirm")
TOOL_POLICY = ("side_effect", "roles", "permissions", *TOOL_FLAGS)
CONTEXT_KEYS = ("tenant", "roles", "permissions", "mode", "forced")
WORDS = ("invoice", "customer", "report", "stock", "payment", "فاکتور", "گزارش")

# Latin letters and the Cyrillic/Greek letters that print like them (a look-alike mutation).
_LOOKALIKE = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "i": "і", "s": "ѕ", "y": "у",
              "t": "τ", "n": "ո", "r": "г", "d": "ԁ", "m": "м", "l": "ӏ", "u": "υ", "v": "ν", "w": "ԝ",
              "k": "κ", "h": "һ", "q": "ԛ", "f": "ƒ", "b": "Ь", "g": "ɡ", "j": "ј", "z": "ᴢ"}


# --------------------------------------------------------------------------- the oracle


def oracle_allows(tool: dict[str, Any], ctx: dict[str, Any], mutation: str) -> bool:
    """DESIGN §4 on the raw documents: an absent or null field is its documented default."""
    side_effect = tool.get("side_effect")
    if tool.get("enabled") is False or side_effect not in COLUMNS:
        return False
    if tool.get("tenant_required") is True and not ctx.get("tenant"):
        return False
    roles = tool.get("roles") or []
    if roles and not set(roles) & set(ctx.get("roles") or []):
        return False
    if not set(tool.get("permissions") or []) <= set(ctx.get("permissions") or []):
        return False
    if (ctx.get("mode") or "autonomous") == "analyzer" and side_effect != "none":
        return False
    if tool["name"] in (ctx.get("forced") or []):
        return True
    return MATRIX[mutation][COLUMNS.index(side_effect)]


def oracle_needs_consent(tool: dict[str, Any]) -> bool:
    return tool.get("requires_approval") is True or tool.get("always_confirm") is True


# --------------------------------------------------------------------------- valid documents
#
# Drawn as one fixed-length byte string and decoded (as security_oracle does): hypothesis spends
# about 7 ms drawing a case through a hundred nested draws, 0.2 ms drawing one string of bytes.


class Bytes:
    """Reads a drawn byte string as small numbers; past its end every read is 0."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        self.at += 1
        return self.data[self.at - 1] if self.at <= len(self.data) else 0

    def below(self, n: int) -> int:
        return (self.byte() << 8 | self.byte()) % n

    def subset(self, values: tuple[str, ...], most: int) -> list[str]:
        bits = self.byte()
        return [v for j, v in enumerate(values) if bits >> j & 1][:most]


def decode_tool(r: Bytes, i: int) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": f"t{i}_{WORDS[r.below(len(WORDS))]}"}
    side_effect = (*SIDE_EFFECTS, None)[r.below(len(SIDE_EFFECTS) + 1)]
    if side_effect is not None:
        tool["side_effect"] = side_effect
    tool["description"] = " ".join(WORDS[r.below(len(WORDS))] for _ in range(1 + r.below(3)))
    for key, values in (("roles", ROLES), ("permissions", PERMS)):
        items = r.subset(values, 2)
        if items:
            tool[key] = items
    for flag in TOOL_FLAGS:
        value = (None, True, False)[r.below(3)]
        if value is not None:
            tool[flag] = value
    return tool


def decode_context(r: Bytes, names: list[str]) -> dict[str, Any]:
    ctx: dict[str, Any] = {}
    if r.below(2):
        ctx["tenant"] = "t1"
    for key, values in (("roles", ROLES), ("permissions", PERMS)):
        items = r.subset(values, 3)
        if items:
            ctx[key] = items
    mode = (None, *MODES)[r.below(len(MODES) + 1)]
    if mode is not None:
        ctx["mode"] = mode
    if r.below(4) == 0:
        ctx["forced"] = [names[r.below(len(names))]]
    return ctx


def decode_documents(r: Bytes) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """1–3 tools and a context, as the raw documents a user writes."""
    tools = [decode_tool(r, i) for i in range(1 + r.below(3))]
    return tools, decode_context(r, [t["name"] for t in tools])


# --------------------------------------------------------------------------- mutations


def _variants_of_word(word: str, pick: Callable[[int], int]) -> dict[str, str]:
    """Spellings of a key or a value a typo, an exporter or an attacker could produce."""
    at = pick(len(word))
    letter = next((j for j in range(at, at + len(word)) if word[j % len(word)] in _LOOKALIKE), 0) % len(word)
    out = {
        "case_upper": word.upper(),
        "case_title": word[:1].upper() + word[1:],
        "spelling_drop": word[:at] + word[at + 1:] if len(word) > 1 else word + word,
        "spelling_double": word[:at] + word[at] + word[at:],
        "spelling_swap": word[:at] + word[at + 1:at + 2] + word[at:at + 1] + word[at + 2:] if at + 1 < len(word) else word[::-1],
        "spelling_hyphen": word.replace("_", "-") if "_" in word else word + "-",
        "space": f" {word}" if at % 2 else f"{word} ",
        "plural": word[:-1] if word.endswith("s") else f"{word}s",
        "lookalike": word[:letter] + _LOOKALIKE.get(word[letter], "ı") + word[letter + 1:],
        "fullwidth": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word),
        "zero_width": word[:at] + "\u200c" + word[at:],
        "extension": f"x-{word}",
    }
    return {k: v for k, v in out.items() if v != word}


@dataclass(frozen=True)
class Mutation:
    """Where (``tool`` index or ``context``), which key, what kind, and the change (for the report)."""

    target: str
    key: str
    kind: str
    detail: str


def _value_variants(key: str, value: Any, pick: Callable[[int], int]) -> dict[str, Any]:
    """Re-encodings of a policy value: wrong types, nesting, spellings. Never null or empty:
    a null field is documented as absent (DESIGN §3), so nulling one is a policy edit (which
    ``catalog diff`` reports), not a re-encoding."""
    if isinstance(value, bool):
        return {"type_string": str(value).lower(), "type_int": int(value), "type_list": [value],
                "nesting": {key: value}, "type_yes": "yes" if value else "no"}
    if isinstance(value, list):
        first = value[0]
        out: dict[str, Any] = {"type_string": first, "nesting_list": [value], "type_mapping": {first: True},
                               "type_number": [len(first)], "nesting": {key: value}}
        out.update({f"item_{k}": [v, *value[1:]] for k, v in _variants_of_word(first, pick).items()})
        return out
    out = {"type_list": [value], "type_bool": True, "type_number": 1, "nesting": {key: value}}
    out.update({f"value_{k}": v for k, v in _variants_of_word(str(value), pick).items()})
    return out


def mutate(tools: list[dict[str, Any]], ctx: dict[str, Any], choice: int, pick: Callable[[int], int]
           ) -> tuple[list[dict[str, Any]], dict[str, Any], Mutation]:
    """One mutation of the documents; ``choice`` and ``pick`` are drawn numbers that choose it."""
    tools = json.loads(json.dumps(tools))
    ctx = json.loads(json.dumps(ctx))
    # The context half the time (one document, as hostile as the catalog), else one of the tools.
    if choice % 2 == 0 or not tools:
        obj, where, policy = ctx, "context", CONTEXT_KEYS
    else:
        at = (choice // 2) % len(tools)
        obj, where, policy = tools[at], f"tools[{at}]", TOOL_POLICY
    present = [k for k in policy if k in obj]
    family = (choice // 2 // max(len(tools), 1)) % 4
    if not present or family == 3:  # an extra key: unknown (refused) or an x- extension (ignored)
        name = ("public", "admin", "allow_all", "Enabled", "Roles", "superuser", "x-public", "x-owner")[pick(8)]
        value = (True, [], "*", ["owner"])[pick(4)]
        obj[name] = value
        return tools, ctx, Mutation(where, name, "extra_key", repr(value))
    key = present[pick(len(present))]
    if family == 0:  # the key's name
        variants = _variants_of_word(key, pick)
        kind = sorted(variants)[pick(len(variants))]
        obj[variants[kind]] = obj.pop(key)
        return tools, ctx, Mutation(where, key, f"key_{kind}", variants[kind])
    if family == 1:  # moved under another object (nesting)
        holder = ("x-policy", "policy", "x-meta", "security")[pick(4)]
        value = obj.pop(key)
        obj[holder] = {key: value} if pick(2) else {"inner": [{key: value}]}
        return tools, ctx, Mutation(where, key, "key_nesting", holder)
    variants = _value_variants(key, obj[key], pick)
    kind = sorted(variants)[pick(len(variants))]
    obj[key] = variants[kind]
    return tools, ctx, Mutation(where, key, kind, repr(variants[kind]))


# --------------------------------------------------------------------------- loading and judging

REFUSED = (ValueError, TypeError)  # DataError and ConfigError are ValueErrors


def load(tools: list[dict[str, Any]], ctx: dict[str, Any], form: str) -> tuple[Any, Any]:
    """The documents read the way a user hands them over: ``json``/``yaml`` text through the file
    readers, or ``object``: the Python API's constructors. Raises when refused."""
    from tooldisc.discovery.catalog import build_catalog, catalog_from_tools
    from tooldisc.discovery.context import context_from_mapping
    from tooldisc.discovery.model import Context, Tool
    from tooldisc.documents import parse_document

    if form == "object":
        return catalog_from_tools([Tool(**t) for t in tools]), Context(**ctx)
    if form == "yaml":
        import yaml

        def text(doc: Any) -> str:
            return yaml.safe_dump(doc, allow_unicode=True)
    else:
        def text(doc: Any) -> str:
            return json.dumps(doc, ensure_ascii=False)
    suffix = ".yaml" if form == "yaml" else ".json"
    catalog = build_catalog(parse_document(text({"catalog_version": "1", "tools": tools}), f"catalog{suffix}"),
                            source=f"catalog{suffix}")
    return catalog, context_from_mapping(parse_document(text(ctx), f"context{suffix}"), file=f"context{suffix}")


def widenings(catalog: Any, context: Any, tools: list[dict[str, Any]], ctx: dict[str, Any]) -> list[str]:
    """Every (class, tool) the security filter passes, or the guard lets run (with and without the
    user's approval), that the oracle refuses on the unmutated ``tools`` and ``ctx``. Empty: no wider."""
    from tooldisc.agent.guard import ToolCall, approval_key, guard
    from tooldisc.discovery.indexes.index import AuthorizedSets
    from tooldisc.discovery.model import Candidate, Confidence, Offer
    from tooldisc.discovery.security import SecurityIndex

    original = {t["name"]: t for t in tools}
    authorized = AuthorizedSets(SecurityIndex(catalog.tools, catalog.name_index))
    names = [t.name for t in catalog.tools]
    out: list[str] = []
    for mutation in CLASSES:
        offered = {names[i] for i in authorized(context, mutation).tolist()}
        for name in sorted(offered):
            if name not in original or not oracle_allows(original[name], ctx, mutation):
                out.append(f"{mutation}: the filter passes {name}")
        # The guard, given the current request lists every tool (so only policy decides).
        offer = Offer("q", context, mutation, len(names), "fuzz", tuple(Candidate(n, 0.0, {}) for n in names),
                      Confidence(0.0, 0.0, "none"), len(names), "fuzz", catalog.hash, "fuzz")
        for name in names:
            key = approval_key(name, {})
            approved = guard(ToolCall(name, {}, key), offer, context, catalog, approvals={key}).allowed
            bare = guard(ToolCall(name, {}), offer, context, catalog).allowed
            allowed = name in original and oracle_allows(original[name], ctx, mutation)
            if approved and not allowed:
                out.append(f"{mutation}: the guard runs {name}")
            if bare and not (allowed and not oracle_needs_consent(original[name])):
                out.append(f"{mutation}: the guard runs {name} without approval")
    return out
