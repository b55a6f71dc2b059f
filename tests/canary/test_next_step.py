"""The decision's next step as data: who decided, and how long a HOLD must wait (the gates' arithmetic)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from tests.canary.helpers import arm, evidence, healthy
from tooldisc.canary.comparisons import Accrual, accrual
from tooldisc.canary.config import GateConfig
from tooldisc.canary.gates import judge
from tooldisc.canary.sequential import (
    Mixture,
    contrast_shown,
    rate_contrast,
    requests_to_show,
    units_for_contrast,
)


def test_requests_to_show_at_the_split_equals_the_fixed_split_solution() -> None:
    """With the arms exactly at the split, growing both together is the total-units answer."""
    b = Mixture.tuned(10_000, 0.05)
    share = 0.1
    ne, nc = 3_000, 27_000
    c = rate_contrast(2_540, ne, 22_950, nc, 1.0, -1.0, 0.02)  # 0.8467 vs 0.85, margin 2 points
    sigma = math.sqrt(c.a ** 2 * c.var_e / share + c.b ** 2 * c.var_c / (1 - share))
    total = units_for_contrast(c.estimate, sigma, b, 0.05, 0.8, c.t)
    r = requests_to_show(contrast_shown(c, b, 0.05, 0.8), (c.n_e, c.n_c), (share, 1 - share))
    assert total is not None and r is not None
    assert r == pytest.approx(total - c.t, rel=2e-3, abs=5)
    # a larger experiment share needs fewer requests in all
    r25 = requests_to_show(contrast_shown(c, b, 0.05, 0.8), (c.n_e, c.n_c), (0.25, 0.75))
    assert r25 is not None and r25 < r


def test_requests_to_show_none_when_not_reachable() -> None:
    b = Mixture.tuned(10_000, 0.05)
    worse = rate_contrast(2_000, 3_000, 22_950, 27_000, 1.0, -1.0, 0.02)  # 0.667 vs 0.85: beyond the margin
    assert requests_to_show(contrast_shown(worse, b, 0.05, 0.8), (worse.n_e, worse.n_c), (0.1, 0.9)) is None
    assert requests_to_show(lambda e, c: True, (1, 1), (0.0, 0.0)) is None


def test_hold_waits_for_the_longest_metric_at_this_percent_and_the_next_step() -> None:
    v = judge(evidence(arm(9_000), arm(1_000), percent=10))
    assert v.verdict == "HOLD"
    ns = v.next_step
    inconclusive = {m.name: m.numbers["needed"] for m in v.comparisons if m.outcome == "inconclusive"}
    assert inconclusive and ns["action"] == "wait" and ns["percent"] == 10
    wait = ns["wait"]
    longest = max(inconclusive, key=lambda n: sum(inconclusive[n]["requests_per_arm"].values()))
    assert wait["by"] == longest == ns["metric"] and ns["gate"] == next(m.gate for m in v.comparisons
                                                                        if m.name == longest)
    # the same numbers as the metric's own "still needed" (and its gate's reason)
    assert wait["hours"] == inconclusive[longest]["hours"] == max(n["hours"] for n in inconclusive.values())
    assert wait["requests_per_arm"] == inconclusive[longest]["requests_per_arm"]
    assert f"~{wait['hours']:g} h at the window's rate" in next(g.reason for g in v.gates if g.name == ns["gate"])
    assert wait["next_step"]["percent"] == 25 and wait["next_step"]["hours"] < wait["hours"]
    assert sorted(ns["still_needed"]) == sorted(inconclusive)


def test_hold_on_the_data_gate_waits_for_its_minimum_counts() -> None:
    # 300 experiment, 2,700 control in 24 h at 10 %: 125 requests an hour; the experiment arm
    # needs 200 more, i.e. 2,000 requests in all at 10 % (16 h), 800 at 25 % (6.4 h)
    v = judge(evidence(arm(2_700), arm(300), percent=10))
    ns = v.next_step
    assert ns["action"] == "wait" and ns["gate"] == "data" and ns["metric"] is None
    assert ns["wait"]["by"] == "data"
    assert ns["wait"]["requests_per_arm"] == {"experiment": 200, "control": 1_800}
    assert ns["wait"]["hours"] == 16.0
    assert ns["wait"]["next_step"] == {"by": "data", "percent": 25, "hours": 6.4,
                                       "requests_per_arm": {"experiment": 200, "control": 600}}


def test_a_broken_split_is_fixed_not_waited_for() -> None:
    v = judge(evidence(arm(40_000), arm(10_000), percent=10))  # 20 % in the experiment at 10 %
    assert v.verdict == "HOLD"
    assert v.next_step["action"] == "fix" and v.next_step["gate"] == "sample_ratio"


def test_a_metric_shown_worse_under_hold_is_fixed() -> None:
    v = judge(evidence(arm(450_000), arm(50_000, latency_scale=1.5), percent=10))
    assert v.verdict == "HOLD"
    assert v.next_step["action"] == "fix" and v.next_step["gate"] == "latency"
    assert v.next_step["metric"] == "latency"


def test_rollback_names_the_gate_metric_and_where() -> None:
    v = judge(evidence(arm(450_000), arm(50_000, task_rate=0.80), percent=10))
    assert v.verdict == "ROLLBACK"
    ns = v.next_step
    assert (ns["action"], ns["percent"], ns["gate"], ns["metric"]) == ("rollback", 0, "task", "task_success")
    assert {"segment": None, "value": None} in ns["where"]
    leak = judge(evidence(arm(450_000), arm(50_000, tenant_leak=1), percent=10)).next_step
    assert (leak["action"], leak["gate"], leak["metric"]) == ("rollback", "security", None)


def test_promote_names_the_next_step_and_100_is_complete() -> None:
    from tooldisc.canary.next_step import next_step

    v = judge(healthy())
    assert v.next_step == {"action": "promote", "percent": 25, "gate": None, "metric": None}
    assert next_step("canary", "PROMOTE", None, 100, v.gates, v.comparisons, v.evidence)["action"] == "complete"
    # at 100 % there is no split left to test: the sample ratio gate holds, and says so
    top = judge(replace(healthy(), current_percent=100.0, percents=(100.0,)))
    assert (top.verdict, top.next_step["action"], top.next_step["gate"]) == ("HOLD", "fix", "sample_ratio")


def test_accrual_asks_about_the_current_percent_and_the_next_ladder_step() -> None:
    cfg = GateConfig()
    assert accrual(evidence(arm(900), arm(100), percent=10), cfg) == Accrual(1000 / 24, ((10.0, 0.1), (25, 0.25)))
    assert accrual(evidence(arm(500), arm(500), percent=50), cfg).shares == ((50.0, 0.5), (100, 1.0))
    no_span = replace(evidence(arm(900), arm(100), percent=10), span_hours=0.0)
    assert accrual(no_span, cfg).per_hour is None


def test_shadow_hold_for_too_few_turns_is_a_wait_and_an_invalid_plan_a_fix() -> None:
    from tooldisc.canary.shadow import ShadowEvidence, judge_shadow

    fields = dict.fromkeys(ShadowEvidence.__dataclass_fields__, 0)
    base = {**fields, "scenarios": ("a",), "failed_scenarios": (), "quarantine_reasons": {}, "latency_p95": None,
            "rows": 10, "turns": 10, "eligible": 10, "golden_runs": 3}
    v = judge_shadow(ShadowEvidence(**base), "capability-planner-v1")
    assert v.verdict == "HOLD"
    assert v.next_step == {"action": "wait", "percent": None, "gate": "plans", "metric": None,
                           "still_needed": ["plans", "insufficient"]}
    bad = judge_shadow(ShadowEvidence(**{**base, "invalid_plans": 1}), "capability-planner-v1")
    assert (bad.next_step["action"], bad.next_step["gate"]) == ("fix", "plans")
