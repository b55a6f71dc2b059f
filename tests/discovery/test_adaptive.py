"""Adaptive K policies: each is a pure function of the ranked scores, clamped to [min_k, max_k]."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.discovery.config import config_from_mapping
from tooldisc.discovery.rank.adaptive import POLICIES, choose_k


def cfg(**adaptive: object):
    return config_from_mapping({"adaptive": {"min_k": 3, "max_k": 20, **adaptive}}).adaptive


def test_mass_short_offer_for_a_clear_winner_long_for_a_tie() -> None:
    c = cfg(policy="mass", temperature=0.1, mass=0.9)
    clear = np.array([1.0, 0.4, 0.35, 0.3, 0.2] + [0.1] * 20)
    flat = np.full(25, 0.5)
    assert choose_k(clear, c)[0] == 3  # one tool holds > 0.9 of the mass; min_k clamps
    assert choose_k(flat, c)[0] == 18  # 25 tied, only the top max_k (20) count: 0.9 × 20
    k, why = choose_k(np.array([1.0, 0.98, 0.97, 0.2, 0.1, 0.05]), c)
    assert k == 3 and "mass" in why and "clamped to [3, 20]" in why


def test_mass_matches_the_softmax_by_hand() -> None:
    scores = np.array([0.9, 0.8, 0.6, 0.5])
    c = cfg(policy="mass", temperature=0.2, mass=0.8, min_k=1)
    p = np.exp(scores / 0.2) / np.exp(scores / 0.2).sum()  # 0.516, 0.313, 0.115, 0.056
    assert np.cumsum(p)[1] >= 0.8 > np.cumsum(p)[0]
    assert choose_k(scores, c)[0] == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.001, 3.0), min_size=1, max_size=60), st.sampled_from(sorted(POLICIES)))
def test_every_policy_stays_in_range(values: list[float], policy: str) -> None:
    scores = np.sort(np.array(values))[::-1]
    k, why = choose_k(scores, cfg(policy=policy))
    assert 3 <= k <= 20 and why


@pytest.mark.parametrize("bad", [{"temperature": 0}, {"mass": 1.5}, {"policy": "nucleus"}])
def test_bad_adaptive_settings_are_refused(bad: dict) -> None:
    from tooldisc.errors import ConfigError

    with pytest.raises(ConfigError):
        cfg(**bad)
