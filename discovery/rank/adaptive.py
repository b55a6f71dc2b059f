"""Adaptive K: how many tools to offer, chosen from the shape of the ranked scores.

Each policy is a small pure function of the ranked scores (best first) and the
config; ``--k auto`` picks the configured one by name. All clamp to
[``adaptive.min_k``, ``adaptive.max_k``] and never offer more tools than ranked.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tooldisc.discovery.config import AdaptiveSection

Policy = Callable[[np.ndarray, AdaptiveSection], tuple[int, str]]


def ratio(scores: np.ndarray, a: AdaptiveSection) -> tuple[int, str]:
    """Keep every tool scoring at least ``ratio`` × the top score."""
    within = int(np.count_nonzero(scores >= a.ratio * scores[0]))
    return within, f"{within} tool(s) within {a.ratio:g}× the top score"


def gap(scores: np.ndarray, a: AdaptiveSection) -> tuple[int, str]:
    """Cut at the largest drop between neighbours (the elbow) among the first ``max_k``."""
    s = scores[: a.max_k + 1]
    if len(s) <= a.min_k:
        return len(s), "fewer ranked tools than min_k"
    drops = s[a.min_k - 1:-1] - s[a.min_k:]
    cut = int(np.argmax(drops)) + a.min_k
    return cut, f"largest score drop after rank {cut} ({float(drops.max()):.3f})"


def confidence(scores: np.ndarray, a: AdaptiveSection) -> tuple[int, str]:
    """A clear winner gets a short offer; a flat ranking gets the longest."""
    top = float(scores[0])
    second = float(scores[1]) if len(scores) > 1 else 0.0
    rel = (top - second) / top if top > 0 else 0.0
    span = a.max_k - a.min_k
    k = a.min_k + round(span * (1.0 - min(rel / max(a.ratio, 1e-9), 1.0)))
    return k, f"relative gap {rel:.3f} between the top two tools"


def mass(scores: np.ndarray, a: AdaptiveSection) -> tuple[int, str]:
    """The fewest tools holding ``mass`` of the softmax probability over the top ``max_k``.

    Scores become probabilities with ``temperature`` (features are scaled to [0, 1], so
    one temperature fits any catalog): a clear winner holds the mass alone and the offer
    is short; near-ties share it and the offer grows, as far as the evidence is spread.
    """
    s = scores[: a.max_k].astype(np.float64)
    p = np.exp((s - s[0]) / a.temperature)
    held = np.cumsum(p) / p.sum()
    k = int(np.searchsorted(held, a.mass - 1e-12)) + 1
    return k, f"{k} tool(s) hold {a.mass:g} of the score mass (temperature {a.temperature:g})"


POLICIES: dict[str, Policy] = {"ratio": ratio, "gap": gap, "confidence": confidence, "mass": mass}


def choose_k(scores: np.ndarray, a: AdaptiveSection) -> tuple[int, str]:
    """(K, why) for a non-empty ranking under the configured policy."""
    k, why = POLICIES[a.policy](scores, a)
    k = int(min(max(k, a.min_k), a.max_k))
    return k, f"auto ({a.policy}): {why}; clamped to [{a.min_k}, {a.max_k}]"
