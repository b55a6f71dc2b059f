"""Gate edge cases with the numbers written here, plus the no-evidence property."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.canary.helpers import arm, evidence, healthy
from tooldisc.canary.config import GateConfig
from tooldisc.canary.gates import GATE_NAMES, judge, next_percent


def status(v, name: str) -> str:
    return next(g.status for g in v.gates if g.name == name)


def test_healthy_promotes_to_next_step() -> None:
    v = judge(healthy())
    assert v.verdict == "PROMOTE"
    assert v.next_percent == 25
    assert [g.name for g in v.gates] == list(GATE_NAMES)
    assert {g.status for g in v.gates} <= {"pass", "reported"}
    assert {m.outcome for m in v.comparisons} == {"non_inferior"}


@pytest.mark.parametrize(("n_exp", "data", "task_reason"),
                         [(499, "fail", "judged only once both arms have >= 500 requests"),
                          (500, "pass", "inconclusive")])
def test_499_vs_500_requests(n_exp: int, data: str, task_reason: str) -> None:
    # percent 5: 9,500 control vs 499/500 experiment is a fair split either way; 500
    # requests let the comparisons run, but they cannot show non-inferiority yet: HOLD
    v = judge(evidence(arm(9500), arm(n_exp), percent=5))
    assert v.verdict == "HOLD"
    assert status(v, "data") == data
    task = next(g for g in v.gates if g.name == "task")
    assert task.status == "not_judged" and task_reason in task.reason
    assert status(v, "sample_ratio") == "pass"


@pytest.mark.parametrize(("n_exp", "p_value", "sr"),
                         [(902, 0.00108822, "pass"), (901, 0.000966848, "fail")])
def test_sample_ratio_p_value_around_0_001(n_exp: int, p_value: float, sr: str) -> None:
    # 10,000 requests at 10 %: chi2 10.671 (p 0.001088) vs 10.890 (p 0.000967)
    v = judge(evidence(arm(10_000 - n_exp), arm(n_exp), percent=10))
    gate = next(g for g in v.gates if g.name == "sample_ratio")
    assert gate.numbers["p_value"] == pytest.approx(p_value, rel=1e-5)
    assert gate.status == sr


@pytest.mark.parametrize(("quarantined", "verdict", "q"),
                         [(5000, "PROMOTE", "pass"), (5001, "HOLD", "fail")])
def test_quarantine_1_00_vs_1_01_percent(quarantined: int, verdict: str, q: str) -> None:
    # 495,000 good rows + 5,000 bad = 1.00 %; one more bad row is over
    n_control = 445_000 - (quarantined - 5000)
    v = judge(evidence(arm(n_control), arm(50_000), percent=10, quarantined=quarantined))
    assert status(v, "quarantine") == q
    assert v.verdict == verdict


def test_one_security_event_in_100k_rows_rolls_back() -> None:
    v = judge(evidence(arm(95_000), arm(4_999 + 1, tenant_leak=1), percent=5))
    assert v.verdict == "ROLLBACK"
    assert v.next_percent == 0
    assert status(v, "security") == "fail"


def test_security_rolls_back_at_any_sample_size() -> None:
    v = judge(evidence(arm(30), arm(3, unauthorized_candidate=1), percent=10))
    assert v.verdict == "ROLLBACK"


def test_security_signal_in_a_quarantined_row_rolls_back() -> None:
    v = judge(evidence(arm(9000), arm(1000), quarantined=1, quarantined_security=1))
    assert v.verdict == "ROLLBACK"


def test_empty_window_holds_with_nothing_passing() -> None:
    v = judge(evidence(None, None, percent=None))
    assert v.verdict == "HOLD"
    assert v.next_percent is None
    assert all(g.status in {"fail", "not_judged"} for g in v.gates)


def test_one_arm_only_holds() -> None:
    v = judge(evidence(arm(10_000), None, percent=10))
    assert v.verdict == "HOLD"
    assert status(v, "data") == "fail"
    assert status(v, "task") == "not_judged"
    assert v.next_percent == 10


def test_task_regression_rolls_back_and_a_small_gap_is_not_safe() -> None:
    bad = judge(evidence(arm(9000, task_rate=0.85), arm(1000, task_rate=0.70)))
    assert bad.verdict == "ROLLBACK" and status(bad, "task") == "fail"
    # the finding: 0.80 vs 0.85 at ~620 per arm used to PROMOTE on overlapping intervals
    close = judge(evidence(arm(625, task_rate=0.85), arm(625, task_rate=0.80), percent=50))
    assert close.verdict == "HOLD" and status(close, "task") == "not_judged"
    task = next(m for m in close.comparisons if m.name == "task_success")
    assert task.outcome == "inconclusive"


def test_fallback_lower_bound_above_half_holds() -> None:
    # 560/1000: Wilson 95 % lower bound 0.5292 > 0.5
    v = judge(evidence(arm(9000), arm(1000, fallback=560)))
    gate = next(g for g in v.gates if g.name == "fallback")
    assert gate.status == "fail" and "lower bound" in gate.reason


def test_slower_experiment_latency_is_shown_worse_and_holds() -> None:
    v = judge(evidence(arm(450_000), arm(50_000, latency_scale=1.2)))
    assert status(v, "latency") == "fail" and v.verdict == "HOLD"
    assert status(judge(healthy()), "latency") == "pass"


def test_unknown_security_flag_never_passes() -> None:
    v = judge(evidence(arm(450_000), arm(50_000), quarantined=10, quarantined_security_unknown=10))
    gate = next(g for g in v.gates if g.name == "security")
    assert gate.status == "not_judged" and gate.outcome == "HOLD" and v.verdict == "HOLD"
    v = judge(evidence(arm(450_000), arm(50_000), quarantined=10, quarantined_security=1,
                       quarantined_security_unknown=10))
    assert v.verdict == "ROLLBACK"


def test_kill_switch_and_percent_change_hold() -> None:
    assert judge(evidence(arm(450_000), arm(50_000, kill_switch=1))).verdict == "HOLD"
    v = judge(evidence(arm(450_000), arm(50_000), percent=10, percents=(5.0, 10.0)))
    assert status(v, "sample_ratio") == "fail"
    assert "narrow the window" in next(g.reason for g in v.gates if g.name == "sample_ratio")


def test_next_percent_ladder() -> None:
    ladder = (5, 10, 25, 50, 100)
    assert next_percent("PROMOTE", 5, ladder) == 10
    assert next_percent("PROMOTE", 7, ladder) == 10
    assert next_percent("PROMOTE", 50, ladder) == 100
    assert next_percent("PROMOTE", 100, ladder) is None
    assert next_percent("HOLD", 25, ladder) == 25
    assert next_percent("ROLLBACK", 25, ladder) == 0


def _strip(ev, gate: str):
    """Remove the evidence one gate needs."""
    c, e = ev.arms["control"], ev.arms["experiment"]
    if gate == "data":
        return replace(ev, arms={"control": c})
    if gate == "sample_ratio":
        return replace(ev, percents=(), current_percent=None)
    if gate == "security":
        return replace(ev, arms={"control": c, "experiment": replace(
            e, flags={k: v for k, v in e.flags.items() if k != "tenant_leak"})})
    if gate == "task":
        return replace(ev, arms={"control": c, "experiment": replace(e, task_known=0,
                                                                        task_successes=0)})
    if gate == "retrieval":
        return replace(ev, arms={"control": replace(
            c, flags={k: v for k, v in c.flags.items() if k != "discovery_miss"}), "experiment": e})
    if gate == "fallback":
        return replace(ev, arms={"control": c, "experiment": replace(
            e, flags={k: v for k, v in e.flags.items() if k != "fallback"})})
    if gate == "latency":
        return replace(ev, arms={"control": replace(c, latency={}, latency_order=None),
                                 "experiment": e})
    if gate == "kill_switch":
        return replace(ev, arms={"control": c, "experiment": replace(
            e, flags={k: v for k, v in e.flags.items() if k != "kill_switch"})})
    if gate == "quarantine":
        return replace(ev, arms={}, percents=(), current_percent=None)
    raise AssertionError(gate)


def _corrupt(ev, how: str):
    """Make one piece of evidence unusable or alarming."""
    c, e = ev.arms["control"], ev.arms["experiment"]
    if how == "security_unknown":
        return replace(ev, quarantined=1, quarantined_security_unknown=1,
                       quarantine_reasons={"tenant_leak: missing": 1})
    if how == "task_unknown":
        return replace(ev, arms={"control": c, "experiment": replace(e, execution_known=0,
                                                                        execution_successes=0)})
    if how == "segment_collapse":
        seg = {"a": {"control": c, "experiment": replace(e, task_successes=0)}}
        return replace(ev, segments={"mutation": seg})
    if how == "latency_missing":
        return replace(ev, arms={"control": c, "experiment": replace(e, latency_order=None)})
    raise AssertionError(how)


@settings(max_examples=40, deadline=None)
@given(
    n_control=st.integers(300_000, 600_000),
    share=st.sampled_from([10, 25, 50]),
    gates=st.sets(st.sampled_from(GATE_NAMES), min_size=1),
    corrupt=st.sets(st.sampled_from(["security_unknown", "task_unknown", "segment_collapse",
                                     "latency_missing"])),
)
def test_removing_or_corrupting_evidence_never_promotes(n_control: int, share: int, gates: set[str],
                                                        corrupt: set[str]) -> None:
    n_exp = round(n_control * share / (100 - share))
    ev = evidence(arm(n_control), arm(n_exp), percent=share)
    assume(judge(ev).verdict == "PROMOTE")  # start from full, passing evidence
    for how in sorted(corrupt):
        ev = _corrupt(ev, how)
    for gate in sorted(gates):
        if set(ev.arms) == {"control", "experiment"}:
            ev = _strip(ev, gate)
    assert judge(ev, GateConfig()).verdict != "PROMOTE"
