"""Realistic synthetic telemetry with a known verdict, for tests, demos and benchmarks.

Each scenario changes one thing about a healthy canary, so the gate that should fire
is the only one that does. Generation is vectorised (numpy → Arrow, one million rows
per chunk, each chunk seeded from ``(seed, chunk)``), so the output depends only on
the arguments and 10M events take seconds. Buckets are drawn uniformly, which is what
SHA-256 bucketing of many users looks like; no ids are generated at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldisc.canary.assignment import threshold
from tooldisc.canary.events import EVENT_SCHEMA_VERSION, FALLBACK_REASONS
from tooldisc.errors import UsageError
from tooldisc.files import replace_keeping_mode
from tooldisc.params import Options, checked

CHUNK = 1_000_000
START_US = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z
SPAN_US = 24 * 3600 * 1_000_000
OTHER_EXPERIMENT = "other-experiment"


@dataclass(frozen=True)
class Scenario:
    """A named deviation from a healthy canary and the verdict it must produce."""

    name: str
    verdict: str
    failing_gate: str | None
    description: str


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("healthy", "PROMOTE", None,
                 "both arms alike, nothing wrong (PROMOTE needs enough requests: "
                 ">= 100,000 events at 10%, or 40,000 at 50%)"),
        Scenario("too_few", "HOLD", "data",
                 "most traffic belongs to another experiment; < 500 requests per arm"),
        Scenario("srm", "HOLD", "sample_ratio",
                 "a fifth of experiment users are served (and logged) as control"),
        Scenario("security_leak", "ROLLBACK", "security",
                 "exactly one experiment request shows a tenant leak"),
        Scenario("task_regression", "ROLLBACK", "task",
                 "experiment task success 0.70 vs control 0.85"),
        Scenario("high_fallback", "HOLD", "fallback", "experiment falls back on 70% of requests"),
        Scenario("slow", "HOLD", "latency", "experiment latency four times control's"),
        Scenario("kill_switch", "HOLD", "kill_switch",
                 "the kill switch is engaged for the last 2% of the window"),
        Scenario("corrupt_rows", "HOLD", "quarantine",
                 "2% of rows break the schema (bad enum, negative latency, …)"),
        Scenario("unknown_security", "HOLD", "security",
                 "0.2% of rows lack the tenant_leak flag (quarantined; security unknown)"),
        Scenario("duplicated", "PROMOTE", None,
                 "healthy, but every event is written twice (same event_id): counted once"),
        Scenario("small_drop", "HOLD", "task",
                 "true effect: experiment task success 0.80 vs 0.85 (-5 points); at 1,250 "
                 "requests and 50% the honest answer is HOLD, never PROMOTE"),
        Scenario("margin_regression", "HOLD", "task",
                 "true effect: task success -2 points (0.83 vs 0.85), exactly the margin; "
                 "must not PROMOTE (calibration: <= 5% over 10 looks)"),
        Scenario("segment_regression", "ROLLBACK", "task",
                 "true effect: task success -20 points for mutation=unknown (5% of "
                 "requests), -1 point overall; a segment shown worse"),
    )
}
CALIBRATION_SCENARIOS = ("healthy", "margin_regression", "segment_regression")


@dataclass(frozen=True)
class SynthResult:
    path: str
    events: int
    scenario: str
    expected_verdict: str


def _dict_array(pa: Any, indices: Any, values: list[str]) -> Any:
    return pa.DictionaryArray.from_arrays(pa.array(indices, type=pa.int8()), pa.array(values))


def _uuid_text(pa: Any, np: Any, ids: Any) -> Any:
    """16 random bytes per row as canonical UUID text (8-4-4-4-12, lower case).

    Text, not Parquet's UUID logical type: the schema says a UUID string, every engine
    reads text (Spark 4 cannot read the UUID type), and DuckDB parses it as a UUID.
    """
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    hexed = np.empty((len(ids), 32), dtype=np.uint8)
    hexed[:, 0::2] = digits[ids >> 4]
    hexed[:, 1::2] = digits[ids & 0x0F]
    text = np.full((len(ids), 36), ord("-"), dtype=np.uint8)
    for src, dst in ((0, 0), (8, 9), (12, 14), (16, 19), (20, 24)):
        width = {0: 8, 20: 12}.get(src, 4)
        text[:, dst:dst + width] = hexed[:, src:src + width]
    offsets = np.arange(0, 36 * (len(ids) + 1), 36, dtype=np.int32)
    return pa.StringArray.from_buffers(len(ids), pa.py_buffer(offsets.tobytes()),
                                       pa.py_buffer(text.tobytes()))


def _chunk(pa: Any, np: Any, *, start: int, size: int, n: int, scenario: str, thr: int,
           percent: float, seed: int, experiment: str, too_few_rows: int, leak_chunk: bool) -> Any:
    rng = np.random.default_rng([seed, start // CHUNK])
    idx = np.arange(start, start + size, dtype=np.int64)
    lo = START_US + (SPAN_US * start) // n
    hi = START_US + (SPAN_US * (start + size)) // n
    ts = np.sort(rng.integers(lo, max(hi, lo + 1), size))
    bucket = rng.integers(0, 10_000, size).astype(np.int32)
    if scenario == "srm":
        moved = (bucket < thr) & (rng.random(size) < 0.2)
        if thr < 10_000:
            bucket[moved] = rng.integers(thr, 10_000, int(moved.sum()))
    exp = bucket < thr
    n_exp = int(exp.sum())
    mode = rng.choice(3, size, p=[0.6, 0.3, 0.1])
    channel = rng.choice(3, size, p=[0.6, 0.3, 0.1])
    mutation = rng.choice(6, size, p=[0.7, 0.15, 0.03, 0.04, 0.03, 0.05])
    authorized = rng.poisson(120, size).astype(np.int32) + 1
    candidate = np.where(exp, np.minimum(authorized, 100), authorized).astype(np.int32)
    k = rng.choice(np.array([10, 15, 20], dtype=np.int32), size, p=[0.2, 0.6, 0.2])
    final = np.minimum(k, candidate).astype(np.int32)
    fb_rate = np.where(exp & (scenario == "high_fallback"), 0.70, 0.01)
    fallback = rng.random(size) < fb_rate
    reason_idx = rng.choice(len(FALLBACK_REASONS), size, p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    index_hit = exp & ~fallback
    task_p = np.full(size, 0.85)
    drop = {"task_regression": 0.15, "small_drop": 0.05, "margin_regression": 0.02}.get(scenario)
    if drop is not None:
        task_p = np.where(exp, 0.85 - drop, task_p)
    if scenario == "segment_regression":
        task_p = np.where(exp & (mutation == 5), 0.65, task_p)
    task = rng.random(size) < task_p
    task_null = rng.random(size) < 0.10
    exec_ok = rng.random(size) < 0.95
    exec_null = rng.random(size) < 0.05
    latency = np.round(np.exp(rng.normal(np.log(120.0), 0.5, size)), 1)
    if scenario == "slow":
        latency = np.where(exp, latency * 4, latency)
    tokens = (final * rng.integers(150, 220, size)).astype(np.int32)
    zeros = np.zeros(size, dtype=bool)
    tenant_leak = zeros.copy()
    if leak_chunk and n_exp:
        tenant_leak[int(np.flatnonzero(exp)[n_exp // 2])] = True
    kill = (idx >= n - max(1, n // 50)) if scenario == "kill_switch" else zeros
    exp_name = np.zeros(size, dtype=np.int8)
    if scenario == "too_few":
        exp_name[idx >= too_few_rows] = 1
    arm_idx = exp.astype(np.int8)
    pct = np.full(size, percent, dtype=np.float64)
    fb_reason_mask = ~fallback
    if scenario == "corrupt_rows":
        bad = rng.random(size) < 0.02
        kind = rng.integers(0, 4, size)
        arm_idx[bad & (kind == 0)] = 2
        latency = np.where(bad & (kind == 1), -1.0, latency)
        pct = np.where(bad & (kind == 2), 150.0, pct)
        fb_reason_mask = fb_reason_mask | (bad & (kind == 3))
        fallback = fallback | (bad & (kind == 3))
    ids = rng.integers(0, 256, (size, 16), dtype=np.uint8)
    ids[:, 6] = (ids[:, 6] & 0x0F) | 0x40  # a version-4 (random) UUID
    ids[:, 8] = (ids[:, 8] & 0x3F) | 0x80
    event_id = _uuid_text(pa, np, ids)
    leak_mask = None
    if scenario == "unknown_security":
        leak_mask = rng.random(size) < 0.002
    table = pa.table({
        "schema_version": pa.array(np.full(size, EVENT_SCHEMA_VERSION, dtype=np.int8)),
        "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
        "experiment": _dict_array(pa, exp_name, [experiment, OTHER_EXPERIMENT]),
        "percent": pa.array(pct),
        "arm": _dict_array(pa, arm_idx, ["control", "experiment", "treatment"]),
        "bucket": pa.array(bucket),
        "channel": _dict_array(pa, channel, ["web", "api", "mobile"]),
        "mode": _dict_array(pa, mode, ["autonomous", "supervised", "analyzer"]),
        "mutation": _dict_array(pa, mutation,
                                ["read", "write", "delete", "export", "execute", "unknown"]),
        "candidate_count": pa.array(candidate),
        "final_tool_count": pa.array(final),
        "k": pa.array(k),
        "index_hit": pa.array(index_hit),
        "fallback": pa.array(fallback),
        "fallback_reason": pa.DictionaryArray.from_arrays(
            pa.array(reason_idx.astype(np.int8), mask=fb_reason_mask), pa.array(list(FALLBACK_REASONS))),
        "discovery_miss": pa.array(rng.random(size) < 0.02),
        "schema_miss": pa.array(rng.random(size) < 0.005),
        "retrieval_miss": pa.array(rng.random(size) < np.where(exp, 0.012, 0.01)),
        "authorization_failure": pa.array(rng.random(size) < 0.01),
        "unauthorized_candidate": pa.array(zeros),
        "tenant_leak": pa.array(tenant_leak, mask=leak_mask),
        "permission_violation": pa.array(zeros),
        "tool_execution_success": pa.array(exec_ok, mask=exec_null),
        "task_success": pa.array(task, mask=task_null),
        "latency_ms": pa.array(latency),
        "schema_tokens": pa.array(tokens),
        "kill_switch": pa.array(kill),
        "event_id": event_id,
    })
    return pa.concat_tables([table, table]) if scenario == "duplicated" else table


def check_out(out: str | os.PathLike[str]) -> str:
    """The output format from ``out``'s extension; refused before any row is generated."""
    suffix = Path(out).suffix.lower()
    if suffix not in {".parquet", ".jsonl", ".csv"}:
        raise UsageError(f"--out must end in .parquet, .jsonl or .csv; got {str(out)!r}")
    return suffix


def write_tables(out: str | os.PathLike[str], tables: Iterable[Any]) -> str:
    """Stream Arrow tables (one schema) to ``out`` (.parquet, .jsonl or .csv) atomically.

    Rows go to a temp file beside ``out`` that is renamed at the end, so a reader never
    sees half a file. Text formats go through DuckDB: timestamps as ISO 8601 with ``Z``,
    dictionary columns as strings. Shared by every synthetic generator so all write
    the same bytes for the same rows.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    suffix = check_out(out)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp{suffix}")
    writer = None
    con = None
    try:
        for table in tables:
            if suffix == ".parquet":
                if writer is None:
                    writer = pq.ParquetWriter(str(tmp), table.schema, compression="zstd")
                writer.write_table(table)
                continue
            if con is None:
                con = _text_writer()
                as_text = [f"strftime({f.name}, '%Y-%m-%dT%H:%M:%S.%fZ') AS {f.name}"
                           if pa.types.is_timestamp(f.type) else f"{f.name}::VARCHAR AS {f.name}"
                           for f in table.schema
                           if pa.types.is_timestamp(f.type) or pa.types.is_dictionary(f.type)
                           or isinstance(f.type, pa.ExtensionType)]
                select = (f"SELECT * REPLACE ({', '.join(as_text)}) FROM chunk" if as_text
                          else "SELECT * FROM chunk")
            con.register("chunk", table)
            con.execute(f"CREATE TABLE IF NOT EXISTS out_rows AS {select} LIMIT 0")
            con.execute(f"INSERT INTO out_rows {select}")
            con.unregister("chunk")
        if writer is not None:
            writer.close()
            writer = None
        if con is not None:
            fmt = "json" if suffix == ".jsonl" else "csv, HEADER"
            con.execute(f"COPY out_rows TO '{str(tmp).replace(chr(39), chr(39) * 2)}' (FORMAT {fmt})")
            con.close()
            con = None
        replace_keeping_mode(tmp, target)  # a file being replaced keeps its permissions
    finally:
        if writer is not None:
            writer.close()
        if con is not None:
            con.close()
        tmp.unlink(missing_ok=True)
    return str(target)


def synthesize(out: str | os.PathLike[str], events: int, scenario: str, percent: float = 10.0,
               seed: int = 0, experiment: str = "indexed-retrieval-v1",
               on_chunk: Callable[[int], None] | None = None) -> SynthResult:
    """Write ``events`` synthetic rows to ``out`` (.parquet, .jsonl or .csv by extension)."""
    import numpy as np
    import pyarrow as pa

    checked(Options(tuple(SCENARIOS)), scenario, "--scenario", UsageError)
    from tooldisc.limits import check_count

    check_count("events", events, "--events")
    check_count("seed", seed, "--seed")
    thr = threshold(percent)
    if not 0 < thr < 10_000:
        raise UsageError(f"--percent must be strictly between 0 and 100; got {percent}")
    check_out(out)
    too_few_rows = min(events, int(450 / (thr / 10_000)))
    leak_start = (events // 2) // CHUNK * CHUNK

    def chunks() -> Iterator[Any]:
        for start in range(0, events, CHUNK):
            size = min(CHUNK, events - start)
            yield _chunk(pa, np, start=start, size=size, n=events, scenario=scenario, thr=thr,
                         percent=float(percent), seed=seed, experiment=experiment,
                         too_few_rows=too_few_rows,
                         leak_chunk=scenario == "security_leak" and start == leak_start)
            if on_chunk:
                on_chunk(size)

    path = write_tables(out, chunks())
    return SynthResult(path=path, events=events, scenario=scenario,
                       expected_verdict=SCENARIOS[scenario].verdict)


def _text_writer() -> Any:
    from tooldisc.canary.duckdb.ingest import connect

    return connect()
