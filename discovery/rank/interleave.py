"""Team-draft interleaving: one offer drawn from two rankings, each position credited to a team.

A ranking-only change (new weights, a learned file, the semantic tier) can be judged on
live traffic by *interleaving* (Radlinski, Kurup and Joachims, "How does clickthrough
data reflect retrieval quality?", CIKM 2008; Chapelle, Joachims, Radlinski and Yue,
"Large-scale validation and analysis of interleaved search evaluation", ACM TOIS 2012):
instead of showing each arm one ranker, every interleaved request is shown one list
that mixes both, and the agent's tool call (the "click") is credited to the ranker
that contributed the called tool.

Team draft, as Radlinski et al. give it: in each round a fair coin decides which team
picks first; each team then adds its highest-ranked tool not already in the list
(duplicates are skipped, never offered twice). When one team has nothing new left, the
other fills the remaining places (as common implementations do); the list stops at K
positions or when both rankings are spent. Both rankings come from the same authorized
set (:meth:`tooldisc.discovery.pipeline.Discoverer.discover_interleaved`), so mixing
them can only reorder what the security filter passed.

The coins are deterministic per request: ``seed = SHA-256(request id)`` and the coin of
round ``r`` is bit ``r mod 256`` (most significant first) of
``SHA-256(seed || r div 256 as 8 big-endian bytes)``; 1 means A picks first. A replay
of the request id gives the same offer. The seed is never a user's bucket, which would
give one user the same coin flips on every request.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tooldisc.discovery.model import Candidate, Offer
from tooldisc.params import Text, checked

TEAMS = ("A", "B")
MAX_REQUEST_ID = 256  # characters; an event id is 36


REQUEST_ID = Text(1, MAX_REQUEST_ID)  # the rulebook's constraint on a request id


def check_request_id(request_id: object) -> str:
    """A request id is a non-empty string of at most :data:`MAX_REQUEST_ID` characters (a usage error)."""
    from tooldisc.errors import UsageError

    return checked(REQUEST_ID, request_id, "request_id", UsageError)


def seed_of(request_id: str) -> bytes:
    """The coins' seed: SHA-256 of the request id's UTF-8 bytes."""
    return hashlib.sha256(request_id.encode("utf-8")).digest()


def coins(seed: bytes) -> Iterator[bool]:
    """The coin of each round, in order (True: A picks first); see the module docstring."""
    block = 0
    while True:
        digest = hashlib.sha256(seed + block.to_bytes(8, "big")).digest()
        for byte in digest:
            for bit in range(7, -1, -1):
                yield bool(byte >> bit & 1)
        block += 1


def team_draft(a: Sequence[str], b: Sequence[str], k: int, seed: bytes) -> tuple[tuple[str, ...], str]:
    """Interleave rankings ``a`` and ``b`` (best first) into at most ``k`` names.

    Returns the names and their teams, one letter per position (``"ABBA…"``).
    """
    picked: list[str] = []
    teams: list[str] = []
    seen: set[str] = set()
    lists = {"A": a, "B": b}
    at = {"A": 0, "B": 0}
    flips = coins(seed)
    while len(picked) < k:
        order = TEAMS if next(flips) else ("B", "A")
        progressed = False
        for team in order:
            if len(picked) >= k:
                break
            ranking, i = lists[team], at[team]
            while i < len(ranking) and ranking[i] in seen:
                i += 1  # a duplicate: the other team already placed it
            if i < len(ranking):
                picked.append(ranking[i])
                seen.add(ranking[i])
                teams.append(team)
                i += 1
                progressed = True
            at[team] = i
        if not progressed:
            break
    return tuple(picked), "".join(teams)


@dataclass(frozen=True)
class InterleavedOffer:
    """One interleaved request: the offer the model sees, its teams, and both rankers' offers.

    ``offer`` is an :class:`Offer` like any other (the guard and sessions take it as
    is); ``teams`` has one letter per offered position. ``a`` is the serving ranker's
    offer, ``b`` the challenger's, both over the same authorized set and at A's K.
    """

    offer: Offer
    teams: str
    a: Offer
    b: Offer
    request_id: str

    def __post_init__(self) -> None:
        if len(self.teams) != len(self.offer.candidates) or set(self.teams) - set(TEAMS):
            raise ValueError("InterleavedOffer.teams must hold one letter A or B per offered tool")

    @property
    def contested(self) -> bool:
        """Both rankers offered a tool: the first position's team is then the first round's coin."""
        return bool(self.a.candidates) and bool(self.b.candidates)

    def team_of(self, name: str) -> str | None:
        """The team credited when the agent calls ``name`` (None: not an offered tool)."""
        for cand, team in zip(self.offer.candidates, self.teams, strict=True):
            if cand.name == name:
                return team
        return None


def interleave_offers(a: Offer, b: Offer, request_id: str) -> InterleavedOffer:
    """The team-draft interleaving of two offers of one request, at A's K."""
    names, teams = team_draft(a.names, b.names, a.k, seed_of(request_id))
    by_team = {"A": {c.name: c for c in a.candidates}, "B": {c.name: c for c in b.candidates}}
    candidates = tuple(Candidate(n, by_team[t][n].score, by_team[t][n].features)
                       for n, t in zip(names, teams, strict=True))
    parts = ["tooldisc-interleaved-v1", a.offer_hash, b.offer_hash, teams, *names]
    digest = hashlib.sha256("\x1e".join(parts).encode("utf-8")).hexdigest()
    timings = {"a_total": float(a.timings.get("total", 0.0)), "b_total": float(b.timings.get("total", 0.0))}
    timings["total"] = timings["a_total"] + timings["b_total"]
    offer = Offer(
        query=a.query, context=a.context, mutation=a.mutation, k=a.k,
        k_reason=f"interleaved (team draft) at A's K: {a.k_reason}", candidates=candidates,
        confidence=a.confidence, authorized_count=a.authorized_count, retrieval=a.retrieval,
        catalog_hash=a.catalog_hash, offer_hash=digest, fallback=a.fallback,
        fallback_reason=a.fallback_reason, timings=timings,
    )
    return InterleavedOffer(offer, teams, a, b, request_id)
