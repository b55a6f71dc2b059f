"""Per-clause ranking for requests that ask for several things at once.

One query vector cannot rank several unrelated tools high: in "delete VM001, then
optimise employee_db, finally fetch the Hadoop settings" the words of one task
dilute the others, and the whole request favours whichever task has the most
distinctive words. This step splits the request into clauses (sentence ends,
semicolons and line breaks in any script; sequencing words such as "then", "after
that", "finally" in English and their Persian counterparts), ranks the *same*
authorized tools for each clause with the same retrieve and rank steps, and fuses
the clause rankings with the whole-request ranking.

Security does not move: the clauses re-use the whole request's ``Authorized`` set
(computed once, from the whole request), so a clause can only reorder tools the
filter already passed, and abstention signals stay the whole request's. A request
that yields fewer than two clauses leaves the step untouched, bit for bit.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from tooldisc.discovery.stages import Authorized, Ranked
from tooldisc.discovery.text import tokenize

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tooldisc.discovery.indexes.index import Index
    from tooldisc.discovery.stages import Retrieved

# Sentence ends (Latin and Arabic-script marks) followed by white space, and hard breaks.
# A full stop inside a number ("8.5") or a name ("v1.2") has no space after it and stays.
_SENTENCE = re.compile(r"(?<=[.!?؟。！？])\s+|[;؛\n\r]+")
# Sequencing markers that open a new step inside one sentence: grammar words, not the
# vocabulary of any tool domain (English and Persian). "then" and Persian "سپس"/"بعدش"
# split wherever they stand; the others only after a comma or "and", where they start
# a clause ("next week", "I also need" and Persian "ماه بعد" stay whole).
# The white space before a marker is matched from the start of its run only, possessively
# (``(?<!\s)\s++``): what follows it never starts with a space, so a match from inside
# the run could only fail the same way — and trying every start of a long run of spaces
# rescanned the run each time (quadratic: 10,000 spaces took half a minute).
_SEQUENCE = re.compile(
    r"(?:,\s*+|(?<!\s)\s++)(?:and\s++)?then\b,?\s*"
    r"|(?:,\s*+(?:and\s++)?|(?<!\s)\s++and\s++)(?:after\s++that|afterwards|next|finally|lastly|additionally|also|"
    r"moreover|furthermore|subsequently|besides)\b,?\s*"
    r"|(?:[،,]\s*+|(?<!\s)\s++)(?:و\s++)?(?:سپس|بعدش|بعد\s++از\s++آن|و\s++بعد|همچنین|در\s++ضمن|در\s++پایان)"
    r"(?=\s)\s*",
    re.IGNORECASE,
)


def split_clauses(text: str, min_tokens: int = 2, max_clauses: int = 8) -> tuple[str, ...]:
    """The request's clauses, in order; fewer than two means "not a multi-step request".

    A piece with fewer than ``min_tokens`` word tokens ("Thank you.", "Then") joins the
    piece before it rather than standing alone. At most ``max_clauses`` are kept (the
    rest join the last), which bounds the step's cost per request. Pieces are joined
    once at the end (a request of many short pieces would otherwise copy its text once
    per piece).
    """
    pieces: list[list[str]] = []
    for sentence in _SENTENCE.split(text):
        for part in _SEQUENCE.split(sentence):
            part = part.strip(" \t,،")
            if not part:
                continue
            if pieces and len(tokenize(part)) < min_tokens:
                pieces[-1].append(part)
            else:
                pieces.append([part])
    joined = [" ".join(p) for p in pieces]
    if joined and len(tokenize(joined[0])) < min_tokens and len(joined) > 1:
        joined[1] = f"{joined[0]} {joined[1]}"
        joined.pop(0)
    if len(joined) > max_clauses:
        joined[max_clauses - 1:] = [" ".join(joined[max_clauses - 1:])]
    return tuple(joined)


def fuse(whole: Ranked, clause_ranks: list[Ranked], weight: float, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(catalog indices, fused scores) of the whole ranking and each clause's, by normalised score.

    Each ranking's scores are divided by its own best, so every clause's best tool
    reaches 1 whatever its words' IDF, and a tool's clause evidence is its best share
    over the clauses (one clause fully served is worth as much as any other). A clause
    counts in proportion to the calibrated P(some tool fits it) when the engine has an
    abstention model, so "Can you help me with that?" adds nothing. The fused value is
    ``(1 − weight)·whole + weight·clause``, rescaled so the best tool keeps the whole
    request's top score (adaptive K and the offer's scores keep their scale). Only the
    top ``depth`` of each clause ranking take part. With nothing to fuse (the whole request's
    top score is not positive, or weight 1 and no clause evidence) the whole ranking stands.
    """
    top = float(whole.scores[0])
    if top <= 0.0:  # no whole-request evidence to keep the scale of: the step adds nothing
        return whole.order, whole.scores
    share: dict[int, float] = dict(zip(whole.order.tolist(), ((1.0 - weight) / top * whole.scores).tolist(),
                                       strict=True))
    best: dict[int, float] = {}
    for r in clause_ranks:
        if not len(r.scores) or r.scores[0] <= 0:
            continue
        fits = 1.0 - r.signals.get("no_tool", 0.0)
        for i, s in zip(r.order[:depth].tolist(), (fits / float(r.scores[0]) * r.scores[:depth]).tolist(), strict=True):
            if s > best.get(i, 0.0):
                best[i] = s
    for i, s in best.items():
        share[i] = share.get(i, 0.0) + weight * s
    idx = np.fromiter(share, dtype=np.int64, count=len(share))
    val = np.fromiter(share.values(), dtype=np.float64, count=len(share))
    best_value = float(val.max())
    if best_value <= 0.0:
        # weight 1 leaves the whole request no share, and no clause holds evidence (none matched a
        # tool, or each one's P(no tool) is 1; an abstention threshold of 1.0 lets such a request
        # be ranked): nothing to fuse, so the whole request's ranking stands, not a division by zero.
        return whole.order, whole.scores
    return idx, val * (top / best_value)


def clause_rankings(ranked: Ranked, clauses: Sequence[str], ix: Index,
                    retrieve: Callable[[Authorized, Index], Retrieved],
                    rank: Callable[[Retrieved, Index], Ranked]) -> list[Ranked]:
    """Each clause ranked by the same steps over the whole request's authorized set (no history)."""
    auth = ranked.retrieved.authorized
    req = auth.request
    return [rank(retrieve(Authorized(replace(req, query=text, tokens=tuple(tokenize(text)), history=()),
                                     auth.mutation, auth.indices), ix), ix)
            for text in clauses]


def fused_order(whole: Ranked, clause_ranks: list[Ranked], weight: float, depth: int,
                ix: Index) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fuse`'s (indices, scores), best first; ties broken by tool name as everywhere."""
    idx, val = fuse(whole, clause_ranks, weight, depth)
    order = np.lexsort((ix.name_rank[idx], -val))
    return idx[order], val[order]


def rank_clauses(ranked: Ranked, ix: Index, retrieve: Callable[[Authorized, Index], Retrieved],
                 rank: Callable[[Retrieved, Index], Ranked]) -> Ranked:
    """The clauses step: ``ranked`` fused with each clause's ranking of the same authorized set.

    Off (``clauses.weight`` 0) or a single-clause request: ``ranked`` itself.
    """
    cfg = ix.config.clauses
    auth = ranked.retrieved.authorized
    req = auth.request
    if cfg.weight <= 0.0 or not len(ranked.order):
        return ranked
    clauses = split_clauses(req.query, cfg.min_tokens, cfg.max_clauses)
    if len(clauses) < 2:
        return ranked
    depth = req.depth if req.depth is not None else len(auth.indices)
    idx, val = fused_order(ranked, clause_rankings(ranked, clauses, ix, retrieve, rank), cfg.weight, depth, ix)
    # Contributions stay the whole request's features, read at each tool's new place (0 where the
    # whole request did not rank it), plus the clause evidence, so the offer says why it moved.
    pos = np.full(ix.size, -1, dtype=np.int64)
    pos[ranked.order] = np.arange(len(ranked.order))
    where = pos[idx]
    contributions = {name: np.where(where >= 0, v[np.maximum(where, 0)], 0.0) for name, v in ranked.contributions.items()}
    own = np.zeros(len(idx))
    own[where >= 0] = ranked.scores[where[where >= 0]]
    contributions["clauses"] = val - own
    return replace(ranked, order=idx, scores=val, contributions=contributions)
