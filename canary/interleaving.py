"""The ``interleaving`` gate profile: judge ranker B against A from interleaved requests.

An interleaved request (telemetry schema version 3, :mod:`tooldisc.canary.events`) was
offered a team-draft mix of A's and B's rankings (:mod:`tooldisc.discovery.rank.interleave`);
its ``teams`` say which ranker placed each offered tool and its ``credit`` which team
each tool call credited. Per request the outcome is **B wins** (more calls credited to B
than to A), **A wins**, or a **tie** (equal credit, no credited call, or nothing offered).
The *preference* is ``(wins_B − wins_A) / (wins_B + wins_A)``, in [−1, 1].

The decisive requests (B or A wins) are a sequence of Bernoulli trials with
``p = P(B wins | decisive)``, preference ``2p − 1``: the same always-valid confidence
sequence as the A/B verdict (:mod:`tooldisc.canary.sequential`, Agresti–Caffo adjusted
``p``, the Gaussian-mixture boundary tuned near ``interleaving.sequential_tuning_requests``
decisive requests), so the verdict may be re-run every hour. B is

* **shown worse** when the always-valid p-value of "preference ≥ 0" is at most
  ``worse_alpha`` (0.01): ROLLBACK;
* **shown not worse** when the lower bound (``non_inferiority_alpha``, 0.05) is above
  ``−interleaving.margin`` (0.05): PROMOTE, if no guard fails;
* otherwise **inconclusive**: HOLD, with the interleaved requests still needed at 80 %
  power if the observed preference holds.

Gates, in output order: ``data`` (at least ``interleaving.min_requests`` interleaved
requests), ``balance`` (team balance at the first position: among *contested* interleaved
requests — both rankers offered a tool — the first position's team is the first round's
fair coin, so it must be A half the time: a chi-square test as the sample-ratio gate's,
p < ``sample_ratio_alpha`` → HOLD: the coin or the logging is broken), ``security`` (as the A/B profile: any incident in any row of
the experiment, quarantined rows included → ROLLBACK; a missing flag → HOLD),
``preference``, ``kill_switch`` and ``quarantine``. Nothing here reads a row: the engine
hands back counts (:data:`INTERLEAVING_MEASURES`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import Any

from tooldisc.canary.aggregate import QUARANTINE_MEASURES
from tooldisc.canary.conditions import Eq, IsTrue, MoreOf, StartsWith, all_of
from tooldisc.canary.config import GateConfig
from tooldisc.canary.engine import AggregateQuery, Duplicates, Engine, Measure, total
from tooldisc.canary.events import EVENT_SCHEMA, INTERLEAVED_SCHEMA_VERSION, SECURITY_FLAGS
from tooldisc.canary.gates import (
    FAIL,
    HOLD,
    NOT_JUDGED,
    PASS,
    ROLLBACK,
    GateResult,
    GateSpec,
    Verdict,
    decide,
    next_percent,
    rnd,
)
from tooldisc.canary.sequential import Mixture, norm_ppf, requests_to_show
from tooldisc.canary.stats import goodness_of_fit

WORSE, NOT_WORSE, INCONCLUSIVE = "worse", "non_inferior", "inconclusive"
_V3 = Eq("schema_version", INTERLEAVED_SCHEMA_VERSION)
# both rankers offered a tool: the first position's team is then exactly the first round's coin
# (a filter on the team string itself would not do: whether the loser of the coin places a tool in
# round one depends on the coin when both rankings start with the same tool)
_CONTESTED = all_of(_V3, IsTrue("contested"))
INTERLEAVING_MEASURES: tuple[Measure, ...] = (
    Measure("requests", "count"),
    Measure("interleaved", "count_if", where=_V3),
    Measure("wins_a", "count_if", where=all_of(_V3, MoreOf("credit", "A", "B"))),
    Measure("wins_b", "count_if", where=all_of(_V3, MoreOf("credit", "B", "A"))),
    Measure("first_a", "count_if", where=all_of(_CONTESTED, StartsWith("teams", "A"))),
    Measure("first_b", "count_if", where=all_of(_CONTESTED, StartsWith("teams", "B"))),
    Measure("positions", "sum", "final_tool_count", where=_V3),
    *(Measure(f, "count_if", where=IsTrue(f)) for f in (*SECURITY_FLAGS, "kill_switch")),
    Measure("pct_min", "min", "percent"),
    Measure("pct_max", "max", "percent"),
    Measure("last_pct", "last", "percent", order_by="ts"),
    Measure("first_ts", "min", "ts"),
    Measure("last_ts", "max", "ts"),
)


@dataclass(frozen=True)
class InterleavingEvidence:
    """Everything the interleaving gates judge, for one experiment and window (counts only)."""

    experiment: str
    since: str | None
    until: str | None
    requests: dict[str, int]  # valid rows per arm (control: requests not interleaved)
    interleaved: int
    wins_a: int
    wins_b: int
    first_a: int
    first_b: int
    positions: int
    flags: dict[str, int]
    quarantined: int
    quarantined_security: int
    quarantined_security_unknown: int
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    duplicates: Duplicates = field(default_factory=Duplicates)
    percents: tuple[float, ...] = ()
    current_percent: float | None = None
    span_hours: float | None = None

    @property
    def decisive(self) -> int:
        return self.wins_a + self.wins_b

    @property
    def ties(self) -> int:
        return self.interleaved - self.decisive

    @property
    def rows(self) -> int:
        return sum(self.requests.values()) + self.quarantined


def interleaving_query(experiment: str, since: datetime | None, until: datetime | None) -> AggregateQuery:
    return AggregateQuery(schema=EVENT_SCHEMA, experiment=experiment, since=since, until=until,
                          group_by=("arm",), segments=(), measures=INTERLEAVING_MEASURES,
                          quarantine_measures=QUARANTINE_MEASURES)


def interleaving_evidence(engine: Engine, experiment: str, since: datetime | None = None,
                          until: datetime | None = None) -> InterleavingEvidence:
    """The profile's counts from ``engine`` (no row leaves it)."""
    result = engine.aggregate(interleaving_query(experiment, since, until))
    per_arm = {key[0]: values for key, values in result.cells if key[0] is not None}
    v = total(INTERLEAVING_MEASURES, list(per_arm.values()))
    span = None
    if v["first_ts"] is not None and v["last_ts"] is not None:
        span = (v["last_ts"] - v["first_ts"]).total_seconds() / 3600
    qv = result.quarantine_values
    percents = () if v["pct_min"] is None else tuple(sorted({float(v["pct_min"]), float(v["pct_max"])}))
    return InterleavingEvidence(
        experiment=experiment, since=since.isoformat() if since else None,
        until=until.isoformat() if until else None,
        requests={arm: int(vals["requests"]) for arm, vals in sorted(per_arm.items()) if vals["requests"]},
        interleaved=int(v["interleaved"]), wins_a=int(v["wins_a"]), wins_b=int(v["wins_b"]),
        first_a=int(v["first_a"]), first_b=int(v["first_b"]), positions=int(v["positions"]),
        flags={f: int(v[f]) for f in (*SECURITY_FLAGS, "kill_switch")},
        quarantined=sum(result.quarantine_reasons.values()),
        quarantined_security=int(qv.get("q_security", 0)),
        quarantined_security_unknown=int(qv.get("q_security_unknown", 0)),
        quarantine_reasons=dict(sorted(result.quarantine_reasons.items())),
        duplicates=result.duplicates, percents=percents,
        current_percent=float(v["last_pct"][1]) if v["last_pct"] is not None else None,
        span_hours=span)


# -- the preference --------------------------------------------------------------------------

@dataclass(frozen=True)
class Preference:
    """B's preference over A from (wins_B, wins_A), with its always-valid bounds."""

    wins_b: int
    wins_a: int
    boundary: Mixture

    @property
    def n(self) -> int:
        return self.wins_a + self.wins_b

    @property
    def adjusted(self) -> tuple[float, float, float]:
        """(Agresti–Caffo ``p``, its per-unit variance, units): one win added to each side."""
        p = (self.wins_b + 1) / (self.n + 2)
        return p, p * (1 - p), self.n + 2

    @property
    def estimate(self) -> float:
        """The adjusted preference ``2p − 1`` (the raw one is in :func:`preference_numbers`)."""
        return 2 * self.adjusted[0] - 1

    def se(self, units: float | None = None) -> float:
        _p, var, u = self.adjusted
        return 2 * math.sqrt(var / (units if units is not None else u))

    def radius(self, alpha: float) -> float:
        return self.se() * self.boundary.multiplier(self.adjusted[2], alpha)

    def worse_p_value(self) -> float:
        """Always-valid p-value of "B is not worse" (preference ≥ 0)."""
        return self.boundary.p_value(self.adjusted[2], -self.estimate / self.se())

    def units_to_show(self, target: str, alpha: float, margin: float, power: float) -> Callable[[float, float], bool]:
        """``ok(units, _)`` for :func:`requests_to_show`: with that many decisive units the
        observed preference would be shown ``target`` (``non_inferior`` or ``worse``) with ``power``."""
        z = norm_ppf(power)
        est, var = self.estimate, self.adjusted[1]

        def ok(units: float, _other: float) -> bool:
            gap = est + margin if target == NOT_WORSE else -est
            return gap > 0 and gap / (2 * math.sqrt(var / units)) >= self.boundary.multiplier(units, alpha) + z

        return ok


def _wait(requests: float | None, per_hour: float | None) -> dict[str, Any]:
    if requests is None:
        return {"requests": None, "hours": None, "note": "not reachable if the observed preference holds"}
    return {"requests": math.ceil(requests), "hours": rnd(requests / per_hour, 2) if per_hour else None}


def _rates(ev: InterleavingEvidence, cfg: GateConfig) -> list[tuple[float | None, float | None]]:
    """(percent, interleaved requests per hour) now, and at the next ladder step."""
    per_hour = ev.interleaved / ev.span_hours if ev.span_hours and ev.span_hours > 0 and ev.interleaved else None
    pct = ev.current_percent
    out: list[tuple[float | None, float | None]] = [(pct, per_hour)]
    nxt = next((s for s in cfg.ladder if pct is not None and s > pct), None) if pct else None
    if nxt is not None and pct:
        out.append((nxt, per_hour * nxt / pct if per_hour else None))
    return out


def _needed(ev: InterleavingEvidence, cfg: GateConfig, pref: Preference, target: str) -> dict[str, Any]:
    """Further interleaved requests (and hours, now and at the next ladder step) until the
    observed preference would be shown ``target``."""
    ic = cfg.interleaving
    alpha = cfg.non_inferiority_alpha if target == NOT_WORSE else cfg.worse_alpha
    share = ev.decisive / ev.interleaved if ev.interleaved else 0.0  # decisive units per request
    r = None
    if share > 0:
        r = requests_to_show(pref.units_to_show(target, alpha, ic.margin, cfg.power),
                             (pref.adjusted[2], 0.0), (share, 0.0))
    out: dict[str, Any] = {"to_show": target}
    for i, (pct, per_hour) in enumerate(_rates(ev, cfg)):
        at = _wait(r, per_hour)
        if i == 0:
            out.update(at)
        else:
            out["next_step"] = {"percent": pct, **at}
    return out


def preference_numbers(ev: InterleavingEvidence, cfg: GateConfig) -> tuple[str, str, dict[str, Any]]:
    """(outcome, reason, numbers) of the preference on the whole window."""
    ic = cfg.interleaving
    b = Mixture.tuned(ic.sequential_tuning_requests, cfg.non_inferiority_alpha)
    pref = Preference(ev.wins_b, ev.wins_a, b)
    alpha = cfg.non_inferiority_alpha
    est, half = pref.estimate, pref.radius(alpha)
    p_worse = pref.worse_p_value()
    raw = (ev.wins_b - ev.wins_a) / ev.decisive if ev.decisive else None
    nums: dict[str, Any] = {
        "margin": {"absolute": ic.margin}, "higher_is_better": True,
        "experiment": {"successes": ev.wins_b, "n": ev.decisive,
                       "rate": rnd(ev.wins_b / ev.decisive) if ev.decisive else None},
        "control": {"successes": ev.wins_a, "n": ev.decisive,
                    "rate": rnd(ev.wins_a / ev.decisive) if ev.decisive else None},
        "wins_b": ev.wins_b, "wins_a": ev.wins_a, "ties": ev.ties, "decisive": ev.decisive,
        "interleaved": ev.interleaved, "preference": rnd(raw),
        "interval": {"kind": "preference", "estimate": rnd(est), "low": rnd(est - half), "high": rnd(est + half),
                     "limit": rnd(-ic.margin), "worse": "lower", "alpha": alpha},
        "non_inferiority_slack": rnd(est - half + ic.margin),
        "worse_p_value": float(f"{p_worse:.6g}"),
        "shown_worse": [],
    }
    if p_worse <= cfg.worse_alpha:
        nums["shown_worse"] = [{"segment": None, "value": None, "p_value": nums["worse_p_value"]}]
        return WORSE, (f"preference: B shown worse than A ({raw:+.3f}, always-valid p = {p_worse:.3g} "
                       f"<= {cfg.worse_alpha:g})"), nums
    if est - half > -ic.margin:
        return NOT_WORSE, f"preference: B shown not worse than A within {ic.margin:g} ({raw:+.3f})", nums
    target = NOT_WORSE if est > -ic.margin else WORSE
    nums["needed"] = _needed(ev, cfg, pref, target)
    need = nums["needed"]
    shown = "not worse" if target == NOT_WORSE else "worse"
    more = (f"; about {need['requests']:,} more interleaved requests to show B {shown}"
            + (f" (~{need['hours']:g} h at the window's rate)" if need.get("hours") is not None else "")
            if need.get("requests") is not None else "; not reachable if the observed preference holds")
    text = f"{raw:+.3f}" if raw is not None else "no decisive request yet"
    return INCONCLUSIVE, f"preference inconclusive within {ic.margin:g} ({text}){more}", nums


# -- gates -----------------------------------------------------------------------------------

def gate_data(ev: InterleavingEvidence, cfg: GateConfig, pref: Any = None) -> GateResult:
    need = cfg.interleaving.min_requests
    nums: dict[str, Any] = {"interleaved": ev.interleaved, "requests": dict(ev.requests), "min_requests": need}
    if ev.interleaved >= need:
        return GateResult("data", PASS, None, f"{ev.interleaved:,} interleaved requests (>= {need:,})", nums)
    if ev.interleaved:
        nums["needed"] = {"to_show": "data", **_wait(need - ev.interleaved, _rates(ev, cfg)[0][1])}
        nxt = _rates(ev, cfg)[1:]
        if nxt:
            nums["needed"]["next_step"] = {"percent": nxt[0][0], **_wait(need - ev.interleaved, nxt[0][1])}
    return GateResult("data", FAIL, HOLD, f"{ev.interleaved:,} interleaved requests; the preference is judged "
                      f"from {need:,}", nums)


def gate_balance(ev: InterleavingEvidence, cfg: GateConfig, pref: Any = None) -> GateResult:
    counts = {"A": ev.first_a, "B": ev.first_b}
    n = ev.first_a + ev.first_b
    nums: dict[str, Any] = {"first_position": counts, "alpha": cfg.sample_ratio_alpha}
    if n == 0:
        return GateResult("balance", NOT_JUDGED, HOLD, "no contested interleaved request (both rankers "
                          "offering a tool)", nums)
    test = goodness_of_fit([ev.first_a, ev.first_b], [0.5, 0.5])
    nums.update({"share_a": rnd(ev.first_a / n), "chi_square": rnd(test.statistic),
                 "p_value": float(f"{test.p_value:.6g}")})
    if test.p_value < cfg.sample_ratio_alpha:
        return GateResult("balance", FAIL, HOLD,
                          f"team balance broken: A first in {ev.first_a / n:.1%} of {n:,} contested offers, p = "
                          f"{test.p_value:.3g} < {cfg.sample_ratio_alpha:g}; the coin or the logging is broken",
                          nums)
    return GateResult("balance", PASS, None,
                      f"A first in {ev.first_a / n:.1%} of {n:,} contested offers (p = {test.p_value:.3g})",
                      nums)


def gate_security(ev: InterleavingEvidence, cfg: GateConfig, pref: Any = None) -> GateResult:
    flags = {f: ev.flags[f] for f in SECURITY_FLAGS}
    nums: dict[str, Any] = {"flags": flags, "quarantined_rows_with_security_flag": ev.quarantined_security,
                            "quarantined_rows_with_unknown_security_flag": ev.quarantined_security_unknown}
    events = sum(flags.values()) + ev.quarantined_security
    if events:
        where = [f"{f}={v}" for f, v in flags.items() if v]
        if ev.quarantined_security:
            where.append(f"quarantined rows {ev.quarantined_security}")
        return GateResult("security", FAIL, ROLLBACK, f"{events} security event(s): {', '.join(where)}; "
                          "roll back now", nums)
    if ev.quarantined_security_unknown:
        return GateResult("security", NOT_JUDGED, HOLD,
                          f"{ev.quarantined_security_unknown} quarantined row(s) have a missing or unparseable "
                          "security flag; security cannot be shown clean", nums)
    if not ev.interleaved:
        return GateResult("security", NOT_JUDGED, HOLD, "no interleaved requests", nums)
    return GateResult("security", PASS, None, "no unauthorized candidate, tenant leak or permission violation",
                      nums)


def gate_preference(ev: InterleavingEvidence, cfg: GateConfig,
                    pref: tuple[str, str, dict[str, Any]] | None = None) -> GateResult:
    if pref is None:
        return GateResult("preference", NOT_JUDGED, HOLD,
                          f"judged once {cfg.interleaving.min_requests:,} interleaved requests are in",
                          {"interleaved": ev.interleaved})
    outcome, reason, nums = pref
    if outcome == WORSE:
        return GateResult("preference", FAIL, ROLLBACK, reason, nums)
    if outcome == NOT_WORSE:
        return GateResult("preference", PASS, None, reason, nums)
    return GateResult("preference", NOT_JUDGED, HOLD, reason, nums)


def gate_kill_switch(ev: InterleavingEvidence, cfg: GateConfig, pref: Any = None) -> GateResult:
    if not sum(ev.requests.values()):
        return GateResult("kill_switch", NOT_JUDGED, HOLD, "no requests in the window", {})
    engaged = ev.flags["kill_switch"]
    nums = {"requests_with_kill_switch": engaged}
    if engaged:
        return GateResult("kill_switch", FAIL, HOLD, f"kill switch engaged on {engaged} request(s) in the window",
                          nums)
    return GateResult("kill_switch", PASS, None, "kill switch never engaged in the window", nums)


def gate_quarantine(ev: InterleavingEvidence, cfg: GateConfig, pref: Any = None) -> GateResult:
    nums: dict[str, Any] = {"quarantined": ev.quarantined, "rows": ev.rows, "max_share": cfg.max_quarantine_share,
                            "reasons": dict(sorted(ev.quarantine_reasons.items()))}
    if ev.rows == 0:
        return GateResult("quarantine", NOT_JUDGED, HOLD, "no rows in the window", nums)
    share = Fraction(ev.quarantined, ev.rows)
    nums["share"] = rnd(float(share))
    if share > Fraction(str(cfg.max_quarantine_share)):
        return GateResult("quarantine", FAIL, HOLD, f"{float(share):.2%} of rows quarantined "
                          f"(> {cfg.max_quarantine_share:.2%})", nums)
    return GateResult("quarantine", PASS, None, f"{float(share):.2%} of rows quarantined "
                      f"(<= {cfg.max_quarantine_share:.2%})", nums)


GATES: tuple[GateSpec, ...] = (
    GateSpec("data", gate_data, waits=True,
             fix="No interleaved request in the window: check that interleaving is on (serve --interleave) and "
                 "that the export keeps schema version 3 rows."),
    GateSpec("balance", gate_balance,
             fix="Fix the coin or the logging (who picks first must be a fair coin per request), then judge a "
                 "new window; waiting does not help."),
    GateSpec("security", gate_security,
             fix="Fix the export so every row carries its security flags, then judge again."),
    GateSpec("preference", gate_preference, metrics=("preference",), waits=True,
             fix="The preference would not conclude if the observed difference holds; look at B's ranking "
                 "before waiting longer."),
    GateSpec("kill_switch", gate_kill_switch,
             fix="Find out why the kill switch was engaged; judge a window that starts after it was "
                 "released (--since)."),
    GateSpec("quarantine", gate_quarantine,
             fix="Fix what writes the quarantined rows (see the reasons below), then judge again."),
)
INTERLEAVING_GATES: tuple[str, ...] = tuple(g.name for g in GATES)


def judge_interleaving(ev: InterleavingEvidence, experiment: str, cfg: GateConfig | None = None) -> Verdict:
    """Every gate in order, then ROLLBACK > HOLD > PROMOTE (PROMOTE: eligible; an operator decides)."""
    from tooldisc.canary.comparisons import MetricResult
    from tooldisc.canary.next_step import next_step

    cfg = cfg or GateConfig()
    pref = preference_numbers(ev, cfg) if ev.interleaved >= cfg.interleaving.min_requests else None
    results = tuple(g.check(ev, cfg, pref) for g in GATES)
    verdict = decide(results)
    current = _num(ev.current_percent)
    # ROLLBACK: interleave no more (0); HOLD: keep the percent; PROMOTE: no ladder step — B is
    # eligible to replace A as the ranker (an operator decides), so there is no next percent
    nxt = None if verdict == "PROMOTE" else next_percent(verdict, ev.current_percent, cfg.ladder)
    comparisons = (MetricResult("preference", "preference", pref[0], pref[1], pref[2]),) if pref else ()
    summary = {
        "requests": dict(ev.requests), "interleaved": ev.interleaved, "wins_b": ev.wins_b, "wins_a": ev.wins_a,
        "ties": ev.ties, "decisive": ev.decisive,
        "mean_offered": rnd(ev.positions / ev.interleaved, 3) if ev.interleaved else None,
        "first_position": {"A": ev.first_a, "B": ev.first_b},
        "duplicates": {"rows_removed": ev.duplicates.rows_removed, "v1_rows_removed": ev.duplicates.v1_rows_removed,
                       "v2_ids_repeated": ev.duplicates.v2_ids_repeated,
                       "v2_ids_conflicting": ev.duplicates.v2_ids_conflicting},
        "quarantine_reasons": dict(ev.quarantine_reasons), "quarantined": ev.quarantined,
        "window": {"since": ev.since, "until": ev.until,
                   "hours": round(ev.span_hours, 3) if ev.span_hours is not None else None},
    }
    return Verdict(profile="interleaving", experiment=experiment, verdict=verdict, next_percent=nxt,
                   current_percent=current, gates=results, evidence=None, summary=summary,
                   comparisons=comparisons,
                   next_step=next_step("interleaving", verdict, nxt, current, results, comparisons, None, cfg, GATES))


def _num(x: float | None) -> float | int | None:
    return None if x is None else (int(x) if float(x).is_integer() else x)
