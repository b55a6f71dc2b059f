"""The oracle and input strategies of the security property tests (DESIGN §4).

The oracle is the §4 matrix written out here as a literal table, not the code under
test. Two test files draw from these, 5,000 examples each under CI (10,000 in all),
so pytest-xdist runs them on both cores.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.config import load_config
from tooldisc.discovery.model import Context, Tool
from tooldisc.discovery.pipeline import Discoverer

# DESIGN §4, by side effect (HIGH_RISK = export or execute, "export only" / "execute only").
MATRIX = {
    #               none   write  delete export execute
    "READ":        (True,  False, False, False, False),
    "UNKNOWN":     (True,  False, False, False, False),
    "WRITE":       (True,  True,  False, False, False),
    "DESTRUCTIVE": (True,  False, True,  False, False),
    "EXPORT":      (True,  False, False, True,  False),
    "EXECUTE":     (True,  False, False, False, True),
}
COLUMNS = ("none", "write", "delete", "export", "execute")

ROLES = ("owner", "admin", "clerk", "viewer")
PERMS = ("a.read", "a.write", "b.read", "b.delete", "c.run")
WORDS = ("invoice", "customer", "report", "فاکتور", "مشتری", "گزارش", "stock", "payment", "list", "show",
         "delete", "remove", "حذف", "کن", "create", "ثبت", "export", "excel", "خروجی", "run", "اجرا",
         "add", "بزن", "pay", "the", "of", "۱۲۳")

CONFIG = load_config()


def _property(run: Callable, name: str, examples: int, **strategies: st.SearchStrategy) -> Callable:
    """One property test under its own name: ``derandomize`` seeds from the name, so each file draws its own examples."""
    run.__name__ = run.__qualname__ = name
    return settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(
        given(**strategies)(run))


def oracle_allows(tool: Tool, ctx: Context, mutation: str) -> bool:
    if not tool.enabled or tool.side_effect not in COLUMNS or tool.quarantine:
        return False
    if tool.tenant_required and not ctx.tenant:
        return False
    if tool.roles and not set(tool.roles) & set(ctx.roles):
        return False
    if not set(tool.permissions) <= set(ctx.permissions):
        return False
    if ctx.mode == "analyzer" and tool.side_effect != "none":
        return False
    if tool.name in ctx.forced:
        return True
    return MATRIX[mutation][COLUMNS.index(tool.side_effect)]


def uniform_bits(n_bytes: int) -> st.SearchStrategy[int]:
    """An integer whose every bit is a fair coin: hypothesis draws ``st.integers`` mostly
    small, which would leave the high bits (roles, tenant, search...) almost always 0."""
    return st.binary(min_size=n_bytes, max_size=n_bytes).map(lambda b: int.from_bytes(b, "little"))
SIDE_EFFECTS = (*COLUMNS, None)


def decode_tool(i: int, code: int, words: list[int]) -> Tool:
    """One integer → one tool, so hypothesis draws (and shrinks) a catalog cheaply."""
    def bits(offset: int, width: int) -> int:
        return (code >> offset) & ((1 << width) - 1)

    desc = " ".join(WORDS[w] for w in words)
    return Tool(
        name=f"t{i}_{WORDS[bits(0, 4) % 12]}",
        description=desc,
        aliases=(WORDS[bits(4, 5) % len(WORDS)],) if bits(9, 1) else (),
        side_effect=SIDE_EFFECTS[bits(10, 3) % len(SIDE_EFFECTS)],
        enabled=bits(13, 3) != 0,  # disabled one time in eight
        roles=tuple(r for j, r in enumerate(ROLES) if bits(16, 4) >> j & 1 and bits(20, 1)),
        permissions=tuple(p for j, p in enumerate(PERMS) if bits(21, 5) >> j & 1 and bits(26, 2) == 0),
        tenant_required=bool(bits(28, 1)),
        is_core=bool(bits(29, 1)),
    )


def decode_context(code: int, names: list[str]) -> Context:
    def bits(offset: int, width: int) -> int:
        return (code >> offset) & ((1 << width) - 1)

    return Context(
        tenant="t1" if bits(0, 1) else None,
        roles=frozenset(r for j, r in enumerate(ROLES) if bits(1, 4) >> j & 1),
        permissions=frozenset(p for j, p in enumerate(PERMS) if bits(5, 5) >> j & 1),
        mode=("analyzer", "supervised", "autonomous")[bits(10, 2) % 3],
        forced=frozenset(n for j, n in enumerate(names) if bits(12, 12) >> j & 1 and bits(24, 2) == 0),
    )


class _Bytes:
    """Reads a drawn byte string as small integers; past its end every read is 0.

    One ``st.binary`` draw per argument instead of a hundred nested draws: hypothesis
    spent about a third of the offer property's time drawing (and the rest of the
    suite waits on it), while bytes shrink just as well (shorter, then smaller).
    """

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        self.at += 1
        return self.data[self.at - 1] if self.at <= len(self.data) else 0

    def bits32(self) -> int:
        return int.from_bytes(bytes(self.byte() for _ in range(4)), "little")

    def count(self, most: int) -> int:
        """0..most from two bytes (hypothesis favours a zero byte; two rarely both are)."""
        return (self.byte() + self.byte()) % (most + 1)

    def words(self, most: int) -> list[int]:
        return [self.byte() % len(WORDS) for _ in range(self.byte() % (most + 1))]


def _tool_codes(data: bytes) -> list[tuple[int, list[int]]]:
    """1–10 tools, each a 32-bit code (uniform bits) and up to five description words."""
    r = _Bytes(data)
    return [(r.bits32(), r.words(5)) for _ in range(1 + r.count(9))]


def _requests(data: bytes) -> list[tuple[int, str, list[str], int | str]]:
    """1–3 requests: a context code, a query of up to six words, up to two earlier turns, a K."""
    r = _Bytes(data)
    out = []
    for _ in range(1 + r.count(2)):
        code, query = r.bits32(), " ".join(WORDS[w] for w in r.words(6))
        history = [" ".join(WORDS[w] for w in r.words(6)) for _ in range(r.byte() % 3)]
        out.append((code, query, history, (1, 3, 15, "auto")[r.byte() % 4]))
    return out


_TOOL_BYTES = 2 + 10 * (4 + 1 + 5)
_REQUEST_BYTES = 2 + 3 * (4 + 1 + 6 + 1 + 2 * (1 + 6) + 1)
# Fixed length, so every byte is drawn (short strings would read as zeros: disabled tools).
tools = st.binary(min_size=_TOOL_BYTES, max_size=_TOOL_BYTES).map(_tool_codes)
requests = st.binary(min_size=_REQUEST_BYTES, max_size=_REQUEST_BYTES).map(_requests)


EXAMPLES = 5_000 if os.environ.get("CI") == "true" else 750


def check_requests(tool_codes: list, reqs: list) -> None:
    """Build an engine over the decoded catalog; every offer must pass the oracle."""
    catalog_tools = [decode_tool(i, code, words) for i, (code, words) in enumerate(tool_codes)]
    engine = Discoverer(catalog_from_tools(catalog_tools), CONFIG)
    by_name = {t.name: t for t in catalog_tools}
    names = [t.name for t in catalog_tools]
    for ctx_code, query, history, k in reqs:
        ctx = decode_context(ctx_code, names)
        offer = engine.discover(query, ctx, k, history)
        for name in offer.names:
            assert oracle_allows(by_name[name], ctx, offer.mutation), (name, ctx, query, offer.mutation)
        # Every authorized tool is counted, and nothing else.
        assert offer.authorized_count == sum(oracle_allows(t, ctx, offer.mutation) for t in catalog_tools)


# --- multi-turn sessions: offers, search_tools and the guard (issue 10, item 2) ---------

SESSION_EXAMPLES = 5_000 if os.environ.get("CI") == "true" else 300  # per file; two files


def _session_tool(i: int) -> Tool:
    """A fixed small catalog that still crosses every policy dimension (a Latin-square-like spread)."""
    role_sets = ((), ("owner",), ("clerk", "admin"))
    perm_sets = ((), ("a.read",), ("b.delete", "c.run"))
    words = [WORDS[(i * 7 + j * 5) % len(WORDS)] for j in range(4)]
    return Tool(
        name=f"s{i}_{WORDS[i % 12]}",
        description=" ".join(words),
        keywords=(WORDS[(i * 3) % len(WORDS)],),
        side_effect=SIDE_EFFECTS[i % len(SIDE_EFFECTS)],
        roles=role_sets[(i // 6) % 3],
        permissions=perm_sets[(i // 2) % 3],
        tenant_required=i % 4 == 3,
        enabled=i % 11 != 10,
        requires_approval=i % 5 == 4,
        is_core=i % 3 == 0,
        parameters=None if i % 2 else {"type": "object"},
    )


SESSION_TOOLS = tuple(_session_tool(i) for i in range(36))

# One turn: an integer decoded into forced names, calls and a search (cheap to draw and
# shrink), and the request text.
def _turns(data: bytes) -> list[tuple[int, str]]:
    """1–3 turns, each a 48-bit code (see :func:`decode_turn`) and a query of up to six words."""
    r = _Bytes(data)
    return [(int.from_bytes(bytes(r.byte() for _ in range(6)), "little"), " ".join(WORDS[w] for w in r.words(6)))
            for _ in range(1 + r.count(2))]


_TURN_BYTES = 2 + 3 * (6 + 1 + 6)
turns = st.binary(min_size=_TURN_BYTES, max_size=_TURN_BYTES).map(_turns)


def decode_turn(code: int, names: list[str]) -> tuple[frozenset[str], list[tuple[int, bool]], str | None]:
    """Forced names (one turn in four), up to three (target, approved) calls, and maybe a search text.

    A call's target (0–63) names a tool already shown when it is even (the case that
    matters: shown earlier, called now), any catalog tool when it is odd.
    """
    def bits(offset: int, width: int) -> int:
        return (code >> offset) & ((1 << width) - 1)

    forced = frozenset(n for j, n in enumerate(names[:12]) if bits(j, 1)) if bits(12, 2) == 0 else frozenset()
    calls = [(bits(16 + 7 * j, 6), bool(bits(22 + 7 * j, 1))) for j in range(bits(14, 2))]
    search = " ".join((WORDS[bits(37, 5) % len(WORDS)], WORDS[bits(42, 5) % len(WORDS)])) if bits(47, 1) else None
    return forced, calls, search


@functools.cache
def session_engine() -> Discoverer:
    """Built on first use (not at collection) and shared by every example of a worker."""
    return Discoverer(catalog_from_tools(SESSION_TOOLS), CONFIG)


def check_session(engine: Discoverer, ctx_code: int, session_turns: list) -> None:
    """Play a conversation; every offer, search hit and allowed call must pass the literal §4 oracle.

    Authorization is judged against the *current* request only: a tool shown in an
    earlier turn counts as visible, never as authorized. The guard must also not
    refuse a call the oracle allows for a visible tool with valid arguments and consent.
    """
    from tooldisc.agent.guard import ToolCall, approval_key, guard
    from tooldisc.agent.search_tools import ToolSession

    names = [t.name for t in SESSION_TOOLS]
    base = decode_context(ctx_code, names)
    base = Context(base.tenant, base.roles, base.permissions, base.mode)  # forced comes per turn
    session = ToolSession(engine, base)
    by_name = engine.catalog.by_name
    shown: set[str] = set()
    history: list[str] = []
    for code, query in session_turns:
        forced, calls, search = decode_turn(code, names)
        offer = session.request(query, 3, history=tuple(history[-2:]), forced=forced)
        ctx, mutation = session.request_context, offer.mutation
        assert ctx.forced == forced and session.mutation == mutation
        for name in offer.names:
            assert oracle_allows(by_name[name], ctx, mutation), ("offer", name, ctx, query, mutation)
        shown.update(offer.names)
        if search is not None:
            result = session.search(search, limit=4)
            for hit in result.hits:
                assert oracle_allows(by_name[hit.name], ctx, mutation), ("search", hit.name, ctx, query, mutation)
            shown.update(h.name for h in result.hits)
        for target, approved in calls:
            seen = sorted(shown)
            name = seen[(target // 2) % len(seen)] if seen and target % 2 == 0 else names[target % len(names)]
            tool = by_name[name]
            key = approval_key(tool.name, {})
            decision = guard(ToolCall(tool.name, {}, key if approved else None), session, ctx, engine.catalog,
                             approvals={key} if approved else ())
            allowed = oracle_allows(tool, ctx, mutation)
            visible = tool.name in shown or tool.name in ctx.forced
            expected = allowed and visible and (approved or not tool.requires_approval)
            assert decision.allowed == expected, ("call", tool.name, ctx, query, mutation, decision.refusal)
            if not allowed and not visible:
                assert decision.refusal.code == "unknown_tool"  # looks exactly like an absent name
        history.append(query)


def offer_property(name: str) -> Callable:
    """The single-request property (offers only) as a test function called ``name``."""
    def run(tool_codes: list, reqs: list) -> None:
        check_requests(tool_codes, reqs)
    return _property(run, name, EXAMPLES, tool_codes=tools, reqs=requests)


def session_property(name: str) -> Callable:
    """The multi-turn property as a test function called ``name``."""
    def run(ctx_code: int, session_turns: list) -> None:
        check_session(session_engine(), ctx_code, session_turns)
    return _property(run, name, SESSION_EXAMPLES, ctx_code=uniform_bits(4), session_turns=turns)
