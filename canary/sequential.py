"""Always-valid comparisons for the canary gates: safe to look at after every hour.

A CI job re-runs the verdict on a growing window and keeps no state between looks, so
a fixed-horizon test looked at ten times would promote a regression far more often
than its α. Every comparison here instead uses a *confidence sequence*: a bound that
holds at all sample sizes at once, so any number of looks keeps the error rate.

Method: the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy and
Ramdas, "Time-uniform central limit theory and asymptotic confidence sequences"
(Annals of Statistics, 2024; arXiv:2103.06476), with the one-sided Gaussian-mixture
boundary of Howard, Ramdas, McAuliffe and Sekhon, "Time-uniform, nonparametric,
nonasymptotic confidence sequences" (Annals of Statistics, 2021, eq. 14). For an
estimate with standard error ``se`` after ``t`` units, the one-sided bound at level α is

    estimate ∓ se · m(t, α),  m(t, α) = sqrt( 2(tρ²+1)/(tρ²) · log(1 + sqrt(tρ²+1)/(2α)) )

with ρ² fixed in advance (tuned to be tightest near ``t_opt`` units; any fixed ρ keeps
validity). This is the same Gaussian mixture as the mixture SPRT of Johari, Pekelis and
Walsh, "Always valid inference" (2017). It has a closed-form always-valid p-value, so
Holm's step-down procedure applies across metrics and segments
(:func:`tooldisc.stats.holm`, the one Holm in tooldisc).

Two-arm contrasts of rates use the Agresti–Caffo adjusted proportions (one success
and one failure added per arm), so a 1-request segment is never "certain". Latency
quantiles use the distribution-free quantile confidence sequence of Howard and
Ramdas, "Sequential estimation of quantiles with applications to A/B-testing and
best-arm identification" (Bernoulli, 2022): the indicator ``X ≤ q_p`` is Bernoulli(p)
with known variance p(1−p), so the same boundary bounds its running mean and order
statistics bound the quantile.

confseq (the authors' package) is not used: its last release is from 2023, it is a
compiled extension, and the closed forms above are a few lines. statsmodels checks the
fixed-horizon special cases in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


def norm_ppf(q: float) -> float:
    """Standard normal quantile (see :mod:`tooldisc.canary.stats` for why not scipy)."""
    from tooldisc.canary.stats import normal_quantile

    return normal_quantile(q)


class Boundary(Protocol):
    """How far (in standard errors) a one-sided bound sits from the estimate after ``t`` units."""

    def multiplier(self, t: float, alpha: float) -> float: ...

    def p_value(self, t: float, z: float) -> float: ...


@dataclass(frozen=True)
class Mixture:
    """The one-sided Gaussian-mixture boundary (always valid); ``rho2`` is standardised ρ²."""

    rho2: float

    @classmethod
    def tuned(cls, t_opt: float, alpha: float) -> Mixture:
        """ρ² that makes the boundary tightest near ``t_opt`` units (Waudby-Smith et al., eq. 16)."""
        two_log = -2 * math.log(alpha)
        return cls((two_log + math.log(two_log + 1)) / t_opt)

    def multiplier(self, t: float, alpha: float) -> float:
        x = t * self.rho2
        return math.sqrt(2 * (x + 1) / x * math.log1p(math.sqrt(x + 1) / (2 * alpha)))

    def p_value(self, t: float, z: float) -> float:
        """The smallest α at which the bound excludes the null, for a z-score ``z``."""
        if not z > 0:
            return 1.0
        x = t * self.rho2
        e = z * z * x / (2 * (x + 1))
        if e > 700:
            return 0.0
        return min(1.0, math.sqrt(x + 1) / (2 * math.expm1(e)))


@dataclass(frozen=True)
class FixedHorizon:
    """The classic one-look z boundary; only for comparisons with statsmodels in tests."""

    def multiplier(self, t: float, alpha: float) -> float:
        return norm_ppf(1 - alpha)

    def p_value(self, t: float, z: float) -> float:
        from tooldisc.canary.stats import normal_sf

        return normal_sf(z)


@dataclass(frozen=True)
class Contrast:
    """A linear contrast ``a·p_e + b·p_c + c`` of two arms and its standard error.

    ``var_e``/``var_c`` are per-unit variances of each arm; ``n_e``/``n_c`` its units.
    The contrast is "shown positive" at level α when ``estimate − se·m(t, α) > 0``.
    """

    estimate: float
    a: float
    b: float
    var_e: float
    var_c: float
    n_e: float
    n_c: float

    @property
    def t(self) -> float:
        return self.n_e + self.n_c

    @property
    def se(self) -> float:
        return math.sqrt(self.a ** 2 * self.var_e / self.n_e + self.b ** 2 * self.var_c / self.n_c)

    def lower(self, boundary: Boundary, alpha: float) -> float:
        return self.estimate - self.se * boundary.multiplier(self.t, alpha)

    def p_positive(self, boundary: Boundary) -> float:
        """Always-valid p-value of "the contrast is ≤ 0"."""
        se = self.se
        if se == 0:
            return 0.0 if self.estimate > 0 else 1.0
        return boundary.p_value(self.t, self.estimate / se)


def adjusted(successes: int, n: int) -> tuple[float, float, float]:
    """Agresti–Caffo: (adjusted rate, its per-unit variance, adjusted units)."""
    p = (successes + 1) / (n + 2)
    return p, p * (1 - p), n + 2


def rate_contrast(x_e: int, n_e: int, x_c: int, n_c: int, a: float, b: float, c: float) -> Contrast:
    """``a·p_e + b·p_c + c`` over Agresti–Caffo adjusted rates."""
    pe, ve, ue = adjusted(x_e, n_e)
    pc, vc, uc = adjusted(x_c, n_c)
    return Contrast(a * pe + b * pc + c, a, b, ve, vc, ue, uc)


def mean_contrast(sum_e: float, sumsq_e: float, n_e: int, sum_c: float, sumsq_c: float, n_c: int,
                  a: float, b: float, c: float) -> Contrast:
    """``a·mean_e + b·mean_c + c`` with sample variances from sums and sums of squares."""
    def var(s: float, ss: float, n: int) -> float:
        return max(0.0, (ss - s * s / n) / (n - 1)) if n > 1 else 0.0

    me, mc = sum_e / n_e, sum_c / n_c
    return Contrast(a * me + b * mc + c, a, b, var(sum_e, sumsq_e, n_e), var(sum_c, sumsq_c, n_c),
                    n_e, n_c)


# -- quantiles ---------------------------------------------------------------------------

BASIS = 10_000  # quantile levels are k / 10,000 so that ranks are exact integers


def rank(level_bp: int, n: int) -> int:
    """Nearest-rank order statistic index of level ``level_bp``/10,000 among ``n`` (1-based).

    ``max(1, ceil(k·n / 10,000))``: SQL's ``percentile_disc`` (DuckDB's
    ``quantile_disc``), in integer arithmetic so every engine agrees.
    """
    return max(1, -(-level_bp * n // BASIS))


@dataclass(frozen=True)
class OrderStats:
    """Exact order statistics of one arm at fixed levels (basis points), and its size."""

    n: int
    levels: tuple[int, ...]
    values: tuple[float, ...]

    def at_rank_at_least(self, r: int) -> float:
        """Smallest available order statistic with rank ≥ ``r`` (∞ when r > n)."""
        if r > self.n:
            return math.inf
        for lv, v in zip(self.levels, self.values, strict=True):
            if rank(lv, self.n) >= r:
                return v
        return math.inf

    def at_rank_at_most(self, r: int) -> float:
        """Largest available order statistic with rank ≤ ``r`` (−∞ when r < 1)."""
        if r < 1:
            return -math.inf
        best = -math.inf
        for lv, v in zip(self.levels, self.values, strict=True):
            if rank(lv, self.n) <= r:
                best = v
        return best


def quantile_radius(p: float, n: float, boundary: Boundary, alpha: float) -> float:
    """How far the running share of ``X ≤ q_p`` may stray from ``p`` (always valid)."""
    return math.sqrt(p * (1 - p) / n) * boundary.multiplier(n, alpha)


def quantile_upper(os: OrderStats, p: float, boundary: Boundary, alpha: float) -> float:
    """Upper confidence-sequence bound of the p-quantile: ``X_(⌊n(p+u)⌋+1)``."""
    u = quantile_radius(p, os.n, boundary, alpha)
    return os.at_rank_at_least(math.floor(os.n * (p + u)) + 1)


def quantile_lower(os: OrderStats, p: float, boundary: Boundary, alpha: float) -> float:
    """Lower confidence-sequence bound of the p-quantile: ``X_(⌈n(p−u)⌉)``."""
    u = quantile_radius(p, os.n, boundary, alpha)
    return os.at_rank_at_most(math.ceil(os.n * (p - u)))


def smallest_alpha(shown: Callable[[float], bool], lo: float = 1e-12, steps: int = 60) -> float:
    """The smallest α in [lo, 1] with ``shown(α)`` true (monotone), by bisection on log α."""
    if not shown(1.0):
        return 1.0
    if shown(lo):
        return lo
    a, b = math.log(lo), 0.0
    for _ in range(steps):
        mid = (a + b) / 2
        if shown(math.exp(mid)):
            b = mid
        else:
            a = mid
    return math.exp(b)


# -- sample size ---------------------------------------------------------------------------

def solve_units(ok: Callable[[float], bool], start: float, limit: float = 1e13) -> float | None:
    """Smallest total ``t ≥ start`` with ``ok(t)`` (monotone), or None if not by ``limit``."""
    if ok(start):
        return start
    hi = max(start * 2, 10.0)
    while not ok(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = start
    while hi - lo > max(1.0, lo * 1e-6):
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return math.ceil(hi)


def units_for_contrast(estimate: float, sigma_unit: float, boundary: Boundary,
                       alpha: float, power: float, start: float) -> float | None:
    """Total units at which a contrast of this size is shown positive with ``power``.

    ``sigma_unit`` is the contrast's standard deviation per unit of the total (so
    ``se = sigma_unit / sqrt(t)`` at the current split); "if the observed rates hold":
    the true contrast is taken to be ``estimate``.
    """
    if estimate <= 0:
        return None
    z_power = norm_ppf(power)

    def ok(t: float) -> bool:
        return estimate * math.sqrt(t) / sigma_unit >= boundary.multiplier(t, alpha) + z_power

    return solve_units(ok, max(start, 4.0))


def requests_to_show(ok: Callable[[float, float], bool], have: tuple[float, float],
                     per_request: tuple[float, float], limit: float = 1e13) -> float | None:
    """Fewest further requests ``R ≥ 0`` after which ``ok(n_e, n_c)`` holds, where each arm
    grows by its units per request (``per_request``: the arm's share of requests times
    the share of its requests that carry the metric) — so the answer may be asked for the
    current split or for another rollout percent, data already collected included.
    ``None`` when not by ``limit`` requests (or when no arm grows). ``ok`` is monotone."""
    if per_request[0] <= 0 and per_request[1] <= 0:
        return None

    def at(r: float) -> bool:
        return ok(have[0] + r * per_request[0], have[1] + r * per_request[1])

    if at(0.0):
        return 0.0
    hi = 16.0
    while not at(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = hi / 2 if hi > 16.0 else 0.0
    while hi - lo > max(1.0, lo * 1e-6):
        mid = (lo + hi) / 2
        if at(mid):
            hi = mid
        else:
            lo = mid
    return math.ceil(hi)


def contrast_shown(c: Contrast, boundary: Boundary, alpha: float, power: float) -> Callable[[float, float], bool]:
    """``ok(n_e, n_c)`` for :func:`requests_to_show`: with ``n_e``/``n_c`` units and the
    per-unit variances of ``c`` ("if the observed rates hold"), the contrast would be
    shown positive with ``power``."""
    z_power = norm_ppf(power)

    def ok(n_e: float, n_c: float) -> bool:
        if c.estimate <= 0:
            return False
        se = math.sqrt(c.a ** 2 * c.var_e / n_e + c.b ** 2 * c.var_c / n_c)
        return c.estimate / se >= boundary.multiplier(n_e + n_c, alpha) + z_power

    return ok
