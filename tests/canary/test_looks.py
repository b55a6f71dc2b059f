"""The sequential view: hourly look rows from the verdict's own engine pass, and the intervals at each look."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.canary.helpers import arm, evidence
from tooldisc.canary.aggregate import LOOK_MEASURES, StepCounts, evidence_query
from tooldisc.canary.comparisons import GUARDED
from tooldisc.canary.config import GateConfig
from tooldisc.canary.engine import BIN_BITS, bin_edges, log_bin
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.canary.gates import judge
from tooldisc.canary.looks import MAX_LOOKS, _Histogram, _quantile, sequential_view
from tooldisc.canary.sequential import Mixture, quantile_radius, rank
from tooldisc.canary.synthetic.events import synthesize

EXP = "indexed-retrieval-v1"
HOUR_US = 3_600_000_000
# thousandths at and around the bins' edges, rounding halves, and the largest latency allowed
EDGES = [0.0, 0.001, 0.0005, 0.0015, 0.127, 0.128, 0.1285, 0.255, 0.256, 1.023, 1.024, 1.0245, 119.8079,
         119.8085, 120.831, 86_400_000.0]


@given(st.integers(min_value=0, max_value=2**63 - 1))
@settings(max_examples=300, deadline=None)
def test_a_bin_holds_its_value_and_is_at_most_1_6_percent_wide(v: int) -> None:
    lo, hi = bin_edges(log_bin(v))
    assert lo <= v <= hi
    assert hi - lo + 1 <= max(1, lo / 2 ** (BIN_BITS - 1))
    assert log_bin(lo) == log_bin(hi) == log_bin(v)
    if v > 0:
        assert log_bin(v - 1) <= log_bin(v)


def test_duckdb_bins_every_value_as_python_does() -> None:
    import duckdb

    from tooldisc.canary.sql import DUCKDB

    values = sorted({*range(0, 600), *(2 ** k + d for k in range(7, 63) for d in (-1, 0, 1)), 2**63 - 1})
    con = duckdb.connect()
    got = con.execute(f"SELECT v, {DUCKDB.log_bin('v')} FROM unnest(?::BIGINT[]) t(v) ORDER BY v",
                      [values]).fetchall()
    assert [b for _, b in got] == [log_bin(v) for v in values]


def _away(x: float) -> int:
    """round half away from zero, as SQL's round()"""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Healthy synthetic events whose latencies are rewritten to sit on and around bin edges."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("looks")
    src = d / "src.parquet"
    synthesize(src, 20_000, "healthy", percent=25, seed=3, experiment=EXP)
    table = pq.read_table(src)
    rng = np.random.default_rng(7)
    lat = np.where(rng.random(table.num_rows) < 0.3, rng.choice(EDGES, table.num_rows),
                   np.round(rng.lognormal(np.log(120), 0.6, table.num_rows), 4))
    out = d / "events.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("latency_ms"), "latency_ms", pa.array(lat)), out)
    return out


def test_duckdb_look_rows_equal_the_rows_counted_in_python(events: Path) -> None:
    import pyarrow.parquet as pq

    from tooldisc.canary.duckdb.engine import DuckDBEngine

    rows = pq.read_table(events).to_pylist()
    expect: dict[tuple[str, int, int | None], dict[str, int]] = {}
    for r in rows:
        step = int(r["ts"].timestamp() * 1_000_000) // HOUR_US
        key = (r["arm"], step, log_bin(_away(r["latency_ms"] * 1000)))
        c = expect.setdefault(key, dict.fromkeys((m.name for m in LOOK_MEASURES), 0))
        c["requests"] += 1
        c["task_known"] += r["task_success"] is not None
        c["task_ok"] += r["task_success"] is True
        c["exec_known"] += r["tool_execution_success"] is not None
        c["exec_ok"] += r["tool_execution_success"] is True
        c["discovery_miss"] += r["discovery_miss"]
        c["fallback"] += r["fallback"]
    query = evidence_query(EXP, None, None, ("channel", "mode", "mutation"), 9500)
    engine = DuckDBEngine.from_events(str(events), EVENT_SCHEMA)
    try:
        result = engine.aggregate(query)
    finally:
        engine.close()
    got = {(key[0], step, b): dict(values) for key, step, b, values in result.looks}
    assert got == expect
    assert [(k, s, b) for k, s, b, _ in result.looks] == sorted((k, s, b) for k, s, b, _ in result.looks)


@pytest.fixture(scope="module")
def verdict(events: Path):
    from tooldisc.canary.verdict import run_verdict

    return run_verdict(EVENT_SCHEMA, EXP, events=str(events))


def test_the_last_look_is_the_whole_window(verdict) -> None:
    _, d = verdict
    seq = d["sequential"]
    looks = seq["looks"]
    assert [lk["hours"] for lk in looks] == sorted(lk["hours"] for lk in looks)
    assert looks[-1]["requests"] == {a: d["arms"][a]["requests"] for a in ("control", "experiment")}
    assert all(min(lk["requests"].values()) >= 500 for lk in looks)
    assert looks[-1]["at"] == "2025-01-02T00:00:00Z" and seq["step_hours"] == 1
    forest = {m["name"]: m["interval"] for m in d["metrics"]}
    for g in GUARDED:
        last = seq["metrics"][g.name]["intervals"][-1]
        if g.kind == "rate":  # the gates' own interval, exactly
            assert last == {k: forest[g.name][k] for k in ("estimate", "low", "high", "limit")}
        else:  # latency from the histogram: within a couple of bins of the exact bounds
            for k in ("low", "high"):
                assert last[k] == pytest.approx(forest[g.name][k], rel=0.04)


def test_crossings_are_the_first_look_within_the_margin(verdict) -> None:
    _, d = verdict
    seq = d["sequential"]
    for name, s in seq["metrics"].items():
        inside = [lk["hours"] for lk, iv in zip(seq["looks"], s["intervals"], strict=True)
                  if iv is not None and ((iv["low"] > iv["limit"]) if s["worse"] == "lower" else iv["high"] < iv["limit"])]
        assert s["non_inferior_from"] == (inside[0] if inside else None), name


@given(st.lists(st.floats(min_value=0, max_value=5_000, allow_nan=False), min_size=50, max_size=400),
       st.sampled_from([0.5, 0.9, 0.95]))
@settings(max_examples=60, deadline=None)
def test_histogram_bounds_bracket_the_exact_order_statistics(values: list[float], p: float) -> None:
    b = Mixture.tuned(10_000, 0.05)
    ints = sorted(_away(v * 1000) for v in values)
    h = _Histogram()
    counts: dict[int, int] = {}
    for v in ints:
        counts[log_bin(v)] = counts.get(log_bin(v), 0) + 1
    h.add(tuple(sorted(counts.items())))
    est, low, up = _quantile(h, p, b, 0.025)
    n = len(ints)
    u = quantile_radius(p, n, b, 0.025)
    r_low, r_up = math.ceil(n * (p - u)), math.floor(n * (p + u)) + 1
    if r_low >= 1:
        assert low <= ints[r_low - 1] / 1000
    if r_up <= n:
        assert up >= ints[r_up - 1] / 1000 and up <= ints[r_up - 1] / 1000 * 1.016 + 0.001
    exact = ints[rank(round(p * 10_000), n) - 1] / 1000
    assert abs(est - exact) <= exact * 0.016 + 0.001


def test_a_long_window_is_shown_every_few_hours_ending_at_the_last() -> None:
    base = evidence(arm(90_000), arm(10_000), percent=10)
    counts = {"requests": 400, "task_known": 400, "task_ok": 340, "exec_known": 400, "exec_ok": 380,
              "discovery_miss": 8, "fallback": 4}
    steps = tuple(StepCounts(s, a, counts, ((log_bin(120_000), 400),))
                  for s in range(1000, 1400) for a in ("control", "experiment"))
    seq = sequential_view(replace(base, steps=steps), GateConfig())
    assert len(seq["looks"]) <= MAX_LOOKS and seq["step_hours"] == 3
    assert seq["looks"][-1]["hours"] == 400 and seq["looks"][-1]["requests"]["control"] == 160_000
    assert all(len(m["intervals"]) == len(seq["looks"]) for m in seq["metrics"].values())


def test_no_steps_no_view() -> None:
    assert sequential_view(evidence(arm(900), arm(100)), GateConfig()) == {}
    assert judge(evidence(arm(900), arm(100))).sequential == {}
