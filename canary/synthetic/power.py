"""How many requests does a verdict need? Interleaving against A/B on one user model.

The simulator behind ``benchmarks/interleave_power.py`` (docs/canary.md, "Interleaving:
how many requests"). A gold set is replayed through two rankers A and B; the *user
model* is the agent of issue 29: it calls the **first relevant offered tool** (a primary
tool of the gold query) at rank ``r`` with probability ``p(r) = p1 · decay^(r−1)``
(0.9 · 0.8^(r−1) by default), else calls nothing.

* **Interleaving.** A request's offer is the team draft of A's and B's rankings
  (:func:`tooldisc.discovery.rank.interleave.team_draft`); the call, if any, credits the team
  that placed the tool: B wins, A wins, or a tie. :func:`outcome_probabilities` gives a
  query's exact ``(P(B wins), P(A wins))`` over the coins (a search over the draft's
  rounds, branching only where a coin matters).
* **A/B.** An arm sees its own ranker's offer; task success is the same model's call
  (:func:`success_probability`).

Queries arrive uniformly from the gold set, so every request is an independent draw of
the same categorical outcome: a run draws the counts at each look (multinomial and
binomial increments, :func:`interleaving_run`, :func:`ab_run`) and judges every look with
the verdicts' own always-valid bounds (the Gaussian-mixture boundary of
:mod:`tooldisc.canary.sequential`, vectorised over looks), the data floors included
(500 interleaved requests; 500 per arm). Nothing here is fitted: the rankers, the gold
set and the gates are the shipped ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tooldisc.canary.sequential import Mixture


def click_curve(p1: float, decay: float, k: int) -> np.ndarray:
    """``p(r)`` for ranks 1…k: the chance the agent calls the first relevant tool at rank r."""
    return p1 * decay ** np.arange(k, dtype=np.float64)


def success_probability(names: Sequence[str], relevant: frozenset[str], click: np.ndarray) -> float:
    """One ranker's offer: the agent calls its first relevant tool with ``click[rank − 1]``."""
    for i, name in enumerate(names):
        if name in relevant:
            return float(click[i])
    return 0.0


def outcome_probabilities(a: Sequence[str], b: Sequence[str], relevant: frozenset[str], k: int,
                          click: np.ndarray) -> tuple[float, float]:
    """Exact ``(P(B wins), P(A wins))`` of one request over the team draft's coins.

    Follows :func:`tooldisc.discovery.rank.interleave.team_draft` round by round: a fair coin
    orders the two picks of a round (no branch when only one team has anything new);
    the first relevant tool placed, at rank r, is called with ``click[r − 1]`` and
    credited to its team.
    """
    def new(ranking: Sequence[str], i: int, placed: frozenset[str]) -> int:
        while i < len(ranking) and ranking[i] in placed:
            i += 1
        return i

    def walk(placed: frozenset[str], ia: int, ib: int, weight: float) -> tuple[float, float]:
        ia, ib = new(a, ia, placed), new(b, ib, placed)
        has = {"A": ia < len(a), "B": ib < len(b)}
        if len(placed) >= k or not (has["A"] or has["B"]):
            return 0.0, 0.0
        orders = [("A", "B"), ("B", "A")] if has["A"] and has["B"] else [("A",) if has["A"] else ("B",)]
        share = weight / len(orders)
        win_b = win_a = 0.0
        for order in orders:
            p, at = set(placed), {"A": ia, "B": ib}
            done = False
            for team in order:
                if len(p) >= k:
                    break
                ranking = a if team == "A" else b
                i = new(ranking, at[team], frozenset(p))
                if i >= len(ranking):
                    continue
                name = ranking[i]
                at[team] = i + 1
                p.add(name)
                if name in relevant:  # the first relevant tool of this offer: called or not, decided
                    got = share * float(click[len(p) - 1])
                    win_b, win_a = (win_b + got, win_a) if team == "B" else (win_b, win_a + got)
                    done = True
                    break
            if not done:
                more_b, more_a = walk(frozenset(p), at["A"], at["B"], share)
                win_b, win_a = win_b + more_b, win_a + more_a
        return win_b, win_a

    return walk(frozenset(), 0, 0, 1.0)


# -- the sequential verdicts, vectorised over looks ---------------------------------------------

def multiplier(m: Mixture, t: np.ndarray, alpha: float) -> np.ndarray:
    """:meth:`Mixture.multiplier` for an array of units."""
    x = t * m.rho2
    return np.sqrt(2 * (x + 1) / x * np.log1p(np.sqrt(x + 1) / (2 * alpha)))


def p_value(m: Mixture, t: np.ndarray, z: np.ndarray) -> np.ndarray:
    """:meth:`Mixture.p_value` for arrays (the smallest α whose bound excludes the null)."""
    x = t * m.rho2
    e = np.where(z > 0, z * z * x / (2 * (x + 1)), 0.0)
    with np.errstate(over="ignore", divide="ignore"):
        p = np.sqrt(x + 1) / (2 * np.expm1(np.minimum(e, 700.0)))
    return np.where(z > 0, np.minimum(p, 1.0), 1.0)


@dataclass(frozen=True)
class Gates:
    """The verdicts' constants, as shipped (tooldisc/canary/data/gates.yaml)."""

    worse_alpha: float = 0.01
    ni_alpha: float = 0.05
    interleaving_margin: float = 0.05
    interleaving_min: int = 500
    interleaving_tuning: int = 1_000
    ab_margin: float = 0.02
    ab_min_per_arm: int = 500
    ab_tuning: int = 10_000


@dataclass(frozen=True)
class Run:
    """One seeded run: the first look (in requests) at which the verdict was ROLLBACK or PROMOTE
    (None: not by the horizon), and whether a ROLLBACK came at any look."""

    rollback_at: int | None
    promote_at: int | None
    first: str  # ROLLBACK, PROMOTE or HOLD (at the horizon)


def _first(mask: np.ndarray, requests: np.ndarray) -> int | None:
    hit = np.flatnonzero(mask)
    return int(requests[hit[0]]) if len(hit) else None


def _run(worse: np.ndarray, ni: np.ndarray, requests: np.ndarray) -> Run:
    r, p = _first(worse, requests), _first(ni & ~worse, requests)
    first = "HOLD" if r is None and p is None else ("ROLLBACK" if p is None or (r is not None and r <= p)
                                                    else "PROMOTE")
    return Run(r, p, first)


def interleaving_run(p_b: float, p_a: float, seed: int, horizon: int, look: int, gates: Gates,
                     tag: int = 0) -> Run:
    """One run of the interleaving verdict: counts drawn per look, every look judged."""
    rng = np.random.default_rng([seed, 29, tag])
    looks = horizon // look
    inc = rng.multinomial(look, [p_b, p_a, max(0.0, 1.0 - p_b - p_a)], size=looks)
    wb, wa = np.cumsum(inc[:, 0]), np.cumsum(inc[:, 1])
    requests = look * np.arange(1, looks + 1)
    m = Mixture.tuned(gates.interleaving_tuning, gates.ni_alpha)
    n = wb + wa
    p = (wb + 1) / (n + 2)
    u = n + 2.0
    est = 2 * p - 1
    se = 2 * np.sqrt(p * (1 - p) / u)
    valid = requests >= gates.interleaving_min
    worse = valid & (p_value(m, u, -est / se) <= gates.worse_alpha)
    ni = valid & (est - se * multiplier(m, u, gates.ni_alpha) > -gates.interleaving_margin)
    return _run(worse, ni, requests)


def ab_run(s_a: float, s_b: float, share_b: float, seed: int, horizon: int, look: int, gates: Gates,
           tag: int = 0) -> Run:
    """One run of the A/B verdict on task success alone (B is the experiment arm at ``share_b``)."""
    rng = np.random.default_rng([seed, 11, tag])
    looks = horizon // look
    n_b = rng.binomial(look, share_b, size=looks)
    x_b = rng.binomial(n_b, s_b)
    x_a = rng.binomial(look - n_b, s_a)
    ne, nc = np.cumsum(n_b), look * np.arange(1, looks + 1) - np.cumsum(n_b)
    xe, xc = np.cumsum(x_b), np.cumsum(x_a)
    requests = look * np.arange(1, looks + 1)
    m = Mixture.tuned(gates.ab_tuning, gates.ni_alpha)
    pe, pc = (xe + 1) / (ne + 2), (xc + 1) / (nc + 2)
    se = np.sqrt(pe * (1 - pe) / (ne + 2) + pc * (1 - pc) / (nc + 2))
    t = ne + nc + 4.0
    valid = (ne >= gates.ab_min_per_arm) & (nc >= gates.ab_min_per_arm)
    worse = valid & (p_value(m, t, (pc - pe) / se) <= gates.worse_alpha)
    ni = valid & (pe - pc + gates.ab_margin - se * multiplier(m, t, gates.ni_alpha) > 0)
    return _run(worse, ni, requests)


def requests_for_power(delta_over_sd: float, units_per_request: float, tuning: int, alpha: float,
                       ni_alpha: float, power: float, floor: int) -> int | None:
    """Requests at which an effect of ``delta_over_sd`` (effect / per-unit sd) is shown with
    ``power`` by the always-valid bound (at least ``floor`` requests): the budget a simulator
    names before its runs."""
    if delta_over_sd <= 0 or units_per_request <= 0:
        return None
    from tooldisc.canary.sequential import norm_ppf, solve_units

    m = Mixture.tuned(tuning, ni_alpha)
    z = norm_ppf(power)
    units = solve_units(lambda t: delta_over_sd * math.sqrt(t) >= m.multiplier(t, alpha) + z, 4.0)
    if units is None:
        return None
    return max(floor, math.ceil(units / units_per_request))


def summary(values: Sequence[int | None]) -> dict[str, Any]:
    """Median and spread of requests needed over runs (None: not decided by the horizon)."""
    got = np.array([v for v in values if v is not None], dtype=np.float64)
    if not len(got):
        return {"decided": 0, "runs": len(values)}
    q = np.percentile(got, [5, 25, 50, 75, 95])
    return {"decided": len(got), "runs": len(values), "mean": round(float(got.mean()), 1),
            "p5": round(float(q[0]), 1), "p25": round(float(q[1]), 1), "median": round(float(q[2]), 1),
            "p75": round(float(q[3]), 1), "p95": round(float(q[4]), 1)}
