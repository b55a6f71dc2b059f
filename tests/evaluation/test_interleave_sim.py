"""The interleaving simulator (benchmarks/interleave_power.py): its exact outcome probabilities
are team_draft's own (every coin sequence enumerated), and its vectorised bounds are the verdicts'."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.canary.sequential import Mixture
from tooldisc.canary.synthetic.power import (
    Gates,
    ab_run,
    click_curve,
    interleaving_run,
    multiplier,
    outcome_probabilities,
    p_value,
    requests_for_power,
    success_probability,
    summary,
)
from tooldisc.discovery.rank import interleave

NAMES = [f"t{i}" for i in range(7)]
rankings = st.lists(st.sampled_from(NAMES), unique=True, max_size=6)


def enumerated(a: list[str], b: list[str], rel: frozenset[str], k: int, click: np.ndarray,
               monkeypatch: pytest.MonkeyPatch) -> tuple[float, float]:
    """(P(B wins), P(A wins)) by running team_draft itself on every sequence of k coins."""
    wins_b = wins_a = 0.0
    sequences = list(itertools.product((True, False), repeat=k))
    for seq in sequences:
        monkeypatch.setattr(interleave, "coins", lambda _seed, seq=seq: iter(seq))
        names, teams = interleave.team_draft(a, b, k, b"")
        r = next((i for i, n in enumerate(names) if n in rel), None)
        if r is not None:
            if teams[r] == "B":
                wins_b += click[r]
            else:
                wins_a += click[r]
    return wins_b / len(sequences), wins_a / len(sequences)


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(a=rankings, b=rankings, rel=st.sets(st.sampled_from(NAMES), max_size=3), k=st.integers(1, 6))
def test_exact_outcome_probabilities_are_team_drafts(a, b, rel, k) -> None:
    click = click_curve(0.9, 0.8, k)
    with pytest.MonkeyPatch.context() as mp:
        expected = enumerated(a, b, frozenset(rel), k, click, mp)
    got = outcome_probabilities(a, b, frozenset(rel), k, click)
    assert got == pytest.approx(expected, abs=1e-12)


def test_success_and_the_click_curve() -> None:
    click = click_curve(0.9, 0.8, 4)
    assert click.tolist() == pytest.approx([0.9, 0.72, 0.576, 0.4608])
    assert success_probability(["x", "y", "z"], frozenset({"z", "y"}), click) == pytest.approx(0.72)
    assert success_probability(["x"], frozenset({"q"}), click) == 0.0


def test_vectorised_bounds_equal_the_verdicts_scalar_ones() -> None:
    m = Mixture.tuned(1_000, 0.05)
    t = np.array([10.0, 502.0, 4_000.0, 1e6])
    z = np.array([-1.0, 0.5, 3.0, 40.0])
    assert multiplier(m, t, 0.01).tolist() == pytest.approx([m.multiplier(x, 0.01) for x in t])
    assert p_value(m, t, z).tolist() == pytest.approx([m.p_value(x, y) for x, y in zip(t, z, strict=True)])


def test_runs_decide_as_expected_and_respect_the_floors() -> None:
    g = Gates()
    worse = [interleaving_run(0.15, 0.35, s, 5_000, 10, g) for s in range(20)]
    assert all(r.first == "ROLLBACK" and r.rollback_at >= 500 for r in worse)
    same = [interleaving_run(0.3, 0.3, s, 30_000, 10, g) for s in range(20)]
    assert sum(r.first == "PROMOTE" for r in same) >= 18
    ab = [ab_run(0.6, 0.4, 0.5, s, 20_000, 10, g) for s in range(20)]
    assert all(r.first == "ROLLBACK" and r.rollback_at >= 1_000 for r in ab)  # 500 per arm at 50/50
    assert interleaving_run(0.15, 0.35, 3, 5_000, 10, g) == worse[3]  # seeded
    s = summary([r.rollback_at for r in worse] + [None])
    assert s["decided"] == 20 and s["runs"] == 21 and s["p5"] <= s["median"] <= s["p95"]


def test_the_named_budget_is_a_power_calculation() -> None:
    # preference -0.2 among 50 % decisive requests: a 95 %-power budget well above the floor
    p = 0.4
    delta = 0.2 / (2 * math.sqrt(p * (1 - p)))
    budget = requests_for_power(delta, 0.5, 1_000, 0.01, 0.05, 0.95, 500)
    assert budget is not None and budget > 500
    assert requests_for_power(delta, 0.5, 1_000, 0.01, 0.05, 0.5, 500) < budget  # less power, fewer
    assert requests_for_power(0.0, 0.5, 1_000, 0.01, 0.05, 0.95, 500) is None
