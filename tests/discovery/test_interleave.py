"""Team-draft interleaving: the algorithm (Radlinski et al. 2008), its determinism, and that an
interleaved offer never holds a tool the §4 oracle refuses (tests/discovery/security_oracle.py),
with the guard authorizing calls against the current request as for any offer."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.discovery.security_oracle import (
    CONFIG,
    _property,
    decode_context,
    decode_tool,
    oracle_allows,
    requests,
    tools,
)
from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.config import load_config
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.discovery.rank.interleave import coins, seed_of, team_draft
from tooldisc.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
BM25 = load_config(ROOT / "configs" / "bm25.yaml")
NAMES = [f"t{i}" for i in range(12)]
rankings = st.lists(st.sampled_from(NAMES), unique=True, max_size=12)


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(a=rankings, b=rankings, k=st.integers(1, 15), rid=st.text(min_size=1, max_size=20))
def test_team_draft_is_a_fair_draft_of_both_rankings(a: list[str], b: list[str], k: int, rid: str) -> None:
    names, teams = team_draft(a, b, k, seed_of(rid))
    assert (names, teams) == team_draft(a, b, k, seed_of(rid))  # deterministic per request id
    assert len(names) == len(set(names)) == len(teams) == min(k, len(set(a) | set(b)))
    for team, ranking in (("A", a), ("B", b)):
        mine = [n for n, t in zip(names, teams, strict=True) if t == team]
        assert all(n in ranking for n in mine)
        assert mine == sorted(mine, key=ranking.index)  # each team drafts in its own order
    # while both still had something new, the teams differ by at most one pick (the draft's fairness)
    for i in range(1, len(names) + 1):
        placed = set(names[:i])
        if any(x not in placed for x in a) and any(x not in placed for x in b):
            assert abs(teams[:i].count("A") - teams[:i].count("B")) <= 1


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(a=rankings.filter(bool), b=rankings.filter(bool), k=st.integers(1, 15), first=st.booleans())
def test_when_both_rank_something_the_first_position_is_the_first_coin(a, b, k, first) -> None:
    """What the balance gate counts: in a contested request (both rankings non-empty) the first
    position's team is exactly the first round's coin, whatever the rankings."""
    import itertools

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("tooldisc.discovery.rank.interleave.coins", lambda _seed: itertools.chain([first], itertools.repeat(True)))
        assert team_draft(a, b, k, b"")[1][0] == ("A" if first else "B")


def test_duplicates_are_skipped_and_a_spent_team_lets_the_other_fill() -> None:
    a, b = ["x", "y", "z"], ["y", "x"]
    for rid in ("r1", "r2", "r3", "r4"):
        names, teams = team_draft(a, b, 5, seed_of(rid))
        # B's second choice (x) is A's first: whoever places x, B has nothing new after y
        assert sorted(names) == ["x", "y", "z"] and teams.count("B") == 1
        assert names[teams.index("B")] == "y" and teams[names.index("z")] == "A"
    assert team_draft([], ["p", "q"], 3, seed_of("r"))[1] == "BB"
    assert team_draft([], [], 3, seed_of("r")) == ((), "")


def test_coins_are_the_documented_stream_and_fair() -> None:
    import hashlib

    seed = seed_of("6b1e8c52-3f0a-4c1b-9d7e-2a5f4e3d2c1b")
    assert seed == hashlib.sha256(b"6b1e8c52-3f0a-4c1b-9d7e-2a5f4e3d2c1b").digest()
    first = hashlib.sha256(seed + (0).to_bytes(8, "big")).digest()
    stream = coins(seed)
    assert [next(stream) for _ in range(8)] == [bool(first[0] >> (7 - i) & 1) for i in range(8)]
    second = hashlib.sha256(seed + (1).to_bytes(8, "big")).digest()
    for _ in range(248):
        next(stream)
    assert next(stream) == bool(second[0] >> 7)
    # the first round's coin over many request ids: A first about half the time
    firsts = sum(team_draft(["a", "b"], ["c", "d"], 4, seed_of(f"req-{i}"))[1][0] == "A" for i in range(4000))
    assert abs(firsts - 2000) < 4 * 32  # 4 standard deviations


@pytest.fixture(scope="module")
def engines() -> tuple[Discoverer, Discoverer]:
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog

    cat = load_catalog(default_catalog_path())
    return Discoverer(cat), Discoverer(cat, BM25)


def test_an_interleaved_offer_mixes_a_and_b_at_a_k(engines) -> None:
    a, b = engines
    for k in (15, "auto", 3):
        il = a.discover_interleaved(b, "show unpaid invoices", k=k, request_id="r-1")
        alone_a, alone_b = a.discover("show unpaid invoices", k=k), b.discover("show unpaid invoices", k=alone_k(a, k))
        assert il.a.names == alone_a.names and il.b.names == alone_b.names  # each ranker as it ranks alone
        assert il.offer.k == alone_a.k and len(il.offer.names) <= alone_a.k
        assert set(il.offer.names) <= set(alone_a.names) | set(alone_b.names)
        assert il.offer.mutation == alone_a.mutation and il.offer.authorized_count == alone_a.authorized_count
        assert {il.team_of(n) for n in il.offer.names} <= {"A", "B"} and il.team_of("nope") is None
        again = a.discover_interleaved(b, "show unpaid invoices", k=k, request_id="r-1")
        assert again.offer.offer_hash == il.offer.offer_hash and again.teams == il.teams
    teams = {a.discover_interleaved(b, "show unpaid invoices", request_id=f"r-{i}").teams for i in range(20)}
    assert len(teams) > 1  # another request id, other coins


def alone_k(a: Discoverer, k: int | str) -> int:
    return a.discover("show unpaid invoices", k=k).k


def test_refuses_a_ranker_of_another_catalog_or_a_bad_request_id(engines) -> None:
    a, _ = engines
    other = Discoverer(catalog_from_tools([decode_tool(0, 5, [1, 2])]))
    with pytest.raises(UsageError, match="same catalog"):
        a.discover_interleaved(other, "x", request_id="r")
    with pytest.raises(UsageError, match="request_id"):
        a.discover_interleaved(a, "x", request_id="")
    with pytest.raises(UsageError, match="request_id"):
        a.discover_interleaved(a, "x", request_id=7)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Discoverer"):
        a.discover_interleaved("b", "x", request_id="r")  # type: ignore[arg-type]


# -- security: nothing outside the filter, whatever B ranks -----------------------------------

EXAMPLES = 1_000 if os.environ.get("CI") == "true" else 200


def check_interleaved(tool_codes: list, reqs: list) -> None:
    """A (the default ranker) and B (BM25 only) over one decoded catalog: every interleaved
    offer passes the literal §4 oracle for A's own mutation class, and the guard authorizes
    each call against the current request only (shown earlier is not authorized now)."""
    from tooldisc.agent.guard import ToolCall, approval_key, guard
    from tooldisc.agent.search_tools import ToolSession

    catalog_tools = [decode_tool(i, code, words) for i, (code, words) in enumerate(tool_codes)]
    catalog = catalog_from_tools(catalog_tools)
    a, b = Discoverer(catalog, CONFIG), Discoverer(catalog, BM25)
    by_name = {t.name: t for t in catalog_tools}
    names = [t.name for t in catalog_tools]
    sessions: dict[object, ToolSession] = {}
    shown: dict[object, set[str]] = {}
    for n, (ctx_code, query, history, k) in enumerate(reqs):
        ctx = decode_context(ctx_code, names)
        il = a.discover_interleaved(b, query, ctx, k, history, request_id=f"req-{n}-{ctx_code}")
        plain = a.discover(query, ctx, k, history)
        assert il.offer.mutation == plain.mutation and il.a.names == plain.names
        for name in il.offer.names:
            assert oracle_allows(by_name[name], ctx, il.offer.mutation), (name, ctx, query, il.offer.mutation)
        for name in il.b.names:  # B ranked the same authorized set, never a wider one
            assert oracle_allows(by_name[name], ctx, il.offer.mutation), ("B", name, ctx, query)
        base = ctx.__class__(ctx.tenant, ctx.roles, ctx.permissions, ctx.mode)
        key = (base.tenant, base.roles, base.permissions, base.mode)
        session = sessions.setdefault(key, ToolSession(a, base))
        session.add_offer(il.offer)  # the current request now (forced names, if any, are its own)
        seen = shown.setdefault(key, set())
        seen.update(il.offer.names)
        for name in sorted(seen):  # every tool shown so far in this conversation, called now
            tool = by_name[name]
            token = approval_key(name, {})
            decision = guard(ToolCall(name, {}, token), session, session.request_context, catalog,
                             approvals={token})
            assert decision.allowed == oracle_allows(tool, session.request_context, session.mutation), (
                name, session.mutation, decision.refusal)


test_an_interleaved_offer_holds_only_what_the_oracle_allows = _property(
    lambda tool_codes, reqs: check_interleaved(tool_codes, reqs),
    "test_an_interleaved_offer_holds_only_what_the_oracle_allows", EXAMPLES, tool_codes=tools, reqs=requests)


def test_the_property_sees_both_teams_and_refusals() -> None:
    """The property is not vacuous: over a sample of its inputs, offers hold B's picks and
    calls of earlier offers are refused."""
    rng = random.Random(5)
    both = refused = 0
    from tests.discovery.security_oracle import _REQUEST_BYTES, _TOOL_BYTES, _requests, _tool_codes

    for _ in range(60):
        codes = _tool_codes(bytes(rng.getrandbits(8) for _ in range(_TOOL_BYTES)))
        reqs = _requests(bytes(rng.getrandbits(8) for _ in range(_REQUEST_BYTES)))
        catalog_tools = [decode_tool(i, code, words) for i, (code, words) in enumerate(codes)]
        catalog = catalog_from_tools(catalog_tools)
        a, b = Discoverer(catalog, CONFIG), Discoverer(catalog, BM25)
        for n, (ctx_code, query, history, k) in enumerate(reqs):
            ctx = decode_context(ctx_code, [t.name for t in catalog_tools])
            il = a.discover_interleaved(b, query, ctx, k, history, request_id=f"s{n}")
            both += "A" in il.teams and "B" in il.teams
            refused += sum(not oracle_allows(t, ctx, il.offer.mutation) for t in catalog_tools)
    assert both > 10 and refused > 10
