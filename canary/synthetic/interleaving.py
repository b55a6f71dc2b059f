"""Synthetic interleaved telemetry with a known verdict (``canary synth --profile interleaving``).

Like :mod:`tooldisc.canary.synthetic.events`, each scenario changes one thing about a healthy
interleaving experiment so that one gate decides. Requests whose bucket falls below the
percent are interleaved (schema version 3: ``teams``, ``credit`` and ``contested``; in 3 %
of them B offered nothing, so every position is A's and the request is not contested); the
others are plain version-2 events of the control arm. Teams follow team draft's rounds (a coin per
round decides which team picks first); credit strings are drawn per outcome (B wins, A
wins, tie) from a few call patterns (``"B"``, ``"BAB"``, ``"-B"``, …), so counting
credited calls is exercised, not only single calls. Generation is vectorised (numpy →
Arrow, one million rows per chunk, each chunk seeded from ``(seed, chunk)``); output is
byte-identical for the same arguments. No ids, query text or tool names.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tooldisc.canary.assignment import threshold
from tooldisc.canary.events import EVENT_SCHEMA_VERSION, INTERLEAVED_SCHEMA_VERSION
from tooldisc.canary.synthetic.events import (
    CHUNK,
    SPAN_US,
    START_US,
    Scenario,
    _dict_array,
    _uuid_text,
    check_out,
    write_tables,
)
from tooldisc.errors import UsageError
from tooldisc.params import Options, checked

DEFAULT_EXPERIMENT = "ranking-v2"
MAX_K = 20
INTERLEAVING_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("no_preference", "PROMOTE", None,
                 "B and A each win 30% of interleaved requests (PROMOTE needs enough requests: "
                 ">= 20,000 events at 50%)"),
        Scenario("b_better", "PROMOTE", None, "B wins 33%, A 27% of interleaved requests"),
        Scenario("b_worse", "ROLLBACK", "preference", "B wins 24%, A 36% of interleaved requests"),
        Scenario("unbalanced", "HOLD", "balance",
                 "no preference, but A picks first in 65% of first rounds (a broken coin or logger)"),
        Scenario("security_leak", "ROLLBACK", "security",
                 "no preference; exactly one interleaved request shows a tenant leak"),
    )
}
# P(B wins), P(A wins) per scenario; the rest are ties
_WINS = {"no_preference": (0.30, 0.30), "b_better": (0.33, 0.27), "b_worse": (0.24, 0.36),
         "unbalanced": (0.30, 0.30), "security_leak": (0.30, 0.30)}
# credit patterns per outcome (index 0: no call, a null credit) and their probabilities
_CREDIT = ("", "B", "BAB", "-B", "BB", "A", "ABA", "-A", "AA", "AB", "-", "BA")
_B_WIN, _A_WIN, _TIE = (1, 2, 3, 4), (5, 6, 7, 8), (0, 9, 10, 11)
_PATTERN_P = (0.55, 0.15, 0.15, 0.15)


@dataclass(frozen=True)
class InterleaveSynthResult:
    path: str
    events: int
    interleaved: int
    scenario: str
    expected_verdict: str
    failing_gate: str | None


def _teams(pa: Any, np: Any, rng: Any, final: Any, first_a: float, valid: Any, solo: Any) -> Any:
    """One team string per row: per round a coin orders the pair ("AB" or "BA"), cut to
    ``final``; only A where ``solo`` (B offered nothing); null where ``valid`` is false."""
    n = len(final)
    rounds = (MAX_K + 1) // 2
    coin = rng.random((n, rounds)) < 0.5
    coin[:, 0] = rng.random(n) < first_a
    letters = np.empty((n, 2 * rounds), dtype=np.uint8)
    letters[:, 0::2] = np.where(coin, ord("A"), ord("B"))
    letters[:, 1::2] = np.where(coin, ord("B"), ord("A"))
    letters[solo, :] = ord("A")
    keep = np.arange(2 * rounds)[None, :] < final[:, None]
    data = letters[keep]
    offsets = np.concatenate([[0], np.cumsum(final)]).astype(np.int32)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes()),
                                       bitmap, int((~valid).sum()))


def _chunk(pa: Any, np: Any, *, start: int, size: int, n: int, scenario: str, thr: int, percent: float,
           seed: int, experiment: str, leak_chunk: bool) -> tuple[Any, int]:
    rng = np.random.default_rng([seed, start // CHUNK, 3])
    lo = START_US + (SPAN_US * start) // n
    hi = START_US + (SPAN_US * (start + size)) // n
    ts = np.sort(rng.integers(lo, max(hi, lo + 1), size))
    bucket = rng.integers(0, 10_000, size).astype(np.int32)
    exp = bucket < thr
    mode = rng.choice(3, size, p=[0.6, 0.3, 0.1])
    channel = rng.choice(3, size, p=[0.6, 0.3, 0.1])
    mutation = rng.choice(6, size, p=[0.7, 0.15, 0.03, 0.04, 0.03, 0.05])
    candidate = (rng.poisson(120, size) + 1).astype(np.int32)
    k = rng.choice(np.array([10, 15, 20], dtype=np.int32), size, p=[0.2, 0.6, 0.2])
    final = np.minimum(k, candidate).astype(np.int32)
    fallback = rng.random(size) < 0.01
    reason_idx = rng.choice(6, size, p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    latency = np.round(np.exp(rng.normal(np.log(240.0), 0.5, size)), 1)  # two rankers per request
    tokens = (final * rng.integers(150, 220, size)).astype(np.int32)
    p_b, p_a = _WINS[scenario]
    u = rng.random(size)
    outcome = np.where(u < p_b, 0, np.where(u < p_b + p_a, 1, 2))
    which = rng.choice(4, size, p=_PATTERN_P)
    credit_idx = np.choose(outcome, [np.array(_B_WIN)[which], np.array(_A_WIN)[which], np.array(_TIE)[which]])
    # B offered nothing in 3 % of interleaved requests (never one B wins): every position is
    # A's, the request is not contested, and only A (or no call) can be credited
    solo = exp & (outcome != 0) & (rng.random(size) < 0.03 / (1 - p_b))
    credit_idx = np.where(solo, np.where(outcome == 1, _A_WIN[0], 0), credit_idx)
    credit_mask = ~exp | (credit_idx == 0)
    teams = _teams(pa, np, rng, np.where(exp, final, 0), 0.65 if scenario == "unbalanced" else 0.5, exp, solo)
    zeros = np.zeros(size, dtype=bool)
    tenant_leak = zeros.copy()
    n_exp = int(exp.sum())
    if leak_chunk and n_exp:
        tenant_leak[int(np.flatnonzero(exp)[n_exp // 2])] = True
    ids = rng.integers(0, 256, (size, 16), dtype=np.uint8)
    ids[:, 6] = (ids[:, 6] & 0x0F) | 0x40
    ids[:, 8] = (ids[:, 8] & 0x3F) | 0x80
    version = np.where(exp, INTERLEAVED_SCHEMA_VERSION, EVENT_SCHEMA_VERSION).astype(np.int8)
    table = pa.table({
        "schema_version": pa.array(version),
        "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
        "experiment": _dict_array(pa, np.zeros(size, dtype=np.int8), [experiment]),
        "percent": pa.array(np.full(size, percent, dtype=np.float64)),
        "arm": _dict_array(pa, exp.astype(np.int8), ["control", "experiment"]),
        "bucket": pa.array(bucket),
        "channel": _dict_array(pa, channel, ["web", "api", "mobile"]),
        "mode": _dict_array(pa, mode, ["autonomous", "supervised", "analyzer"]),
        "mutation": _dict_array(pa, mutation, ["read", "write", "delete", "export", "execute", "unknown"]),
        "candidate_count": pa.array(candidate),
        "final_tool_count": pa.array(final),
        "k": pa.array(k),
        "index_hit": pa.array(zeros),
        "fallback": pa.array(fallback),
        "fallback_reason": pa.DictionaryArray.from_arrays(
            pa.array(reason_idx.astype(np.int8), mask=~fallback),
            pa.array(["empty", "low_candidate_quality", "stale_index", "index_error", "index_inconsistency",
                      "unknown"])),
        "discovery_miss": pa.array(rng.random(size) < 0.02),
        "schema_miss": pa.array(rng.random(size) < 0.005),
        "retrieval_miss": pa.array(rng.random(size) < 0.01),
        "authorization_failure": pa.array(rng.random(size) < 0.01),
        "unauthorized_candidate": pa.array(zeros),
        "tenant_leak": pa.array(tenant_leak),
        "permission_violation": pa.array(zeros),
        "tool_execution_success": pa.array(zeros, type=pa.bool_(), mask=np.ones(size, dtype=bool)),
        "task_success": pa.array(zeros, type=pa.bool_(), mask=np.ones(size, dtype=bool)),
        "latency_ms": pa.array(latency),
        "schema_tokens": pa.array(tokens),
        "kill_switch": pa.array(zeros),
        "event_id": _uuid_text(pa, np, ids),
        "teams": teams,
        "credit": pa.DictionaryArray.from_arrays(pa.array(credit_idx.astype(np.int8), mask=credit_mask),
                                                 pa.array(list(_CREDIT))),
        "contested": pa.array(~solo, mask=~exp),
    })
    return table, n_exp


def synthesize_interleaving(out: str | os.PathLike[str], events: int, scenario: str, percent: float = 50.0,
                            seed: int = 0, experiment: str = DEFAULT_EXPERIMENT,
                            on_chunk: Callable[[int], None] | None = None) -> InterleaveSynthResult:
    """Write ``events`` synthetic rows of an interleaving experiment to ``out`` (.parquet, .jsonl, .csv)."""
    import numpy as np
    import pyarrow as pa

    from tooldisc.limits import check_count

    checked(Options(tuple(INTERLEAVING_SCENARIOS)), scenario, "--scenario", UsageError)
    check_count("events", events, "--events")
    check_count("seed", seed, "--seed")
    thr = threshold(percent)
    if not 0 < thr <= 10_000:
        raise UsageError(f"--percent must be above 0 and at most 100; got {percent}")
    check_out(out)
    leak_start = (events // 2) // CHUNK * CHUNK
    interleaved = 0

    def chunks() -> Iterator[Any]:
        nonlocal interleaved
        for start in range(0, events, CHUNK):
            size = min(CHUNK, events - start)
            table, n_exp = _chunk(pa, np, start=start, size=size, n=events, scenario=scenario, thr=thr,
                                  percent=float(percent), seed=seed, experiment=experiment,
                                  leak_chunk=scenario == "security_leak" and start == leak_start)
            interleaved += n_exp
            yield table
            if on_chunk:
                on_chunk(size)

    path = write_tables(out, chunks())
    sc = INTERLEAVING_SCENARIOS[scenario]
    return InterleaveSynthResult(path, events, interleaved, scenario, sc.verdict, sc.failing_gate)
