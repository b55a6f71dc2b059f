"""Every synthetic scenario yields its expected verdict, with the expected gate failing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.canary.synth import SCENARIOS, synthesize
from tooldisc.canary.verdict import run_verdict

EXPECTED = {  # written out, not read from SCENARIOS
    "healthy": ("PROMOTE", None),
    "too_few": ("HOLD", "data"),
    "srm": ("HOLD", "sample_ratio"),
    "security_leak": ("ROLLBACK", "security"),
    "task_regression": ("ROLLBACK", "task"),
    "high_fallback": ("HOLD", "fallback"),
    "slow": ("HOLD", "latency"),
    "kill_switch": ("HOLD", "kill_switch"),
    "corrupt_rows": ("HOLD", "quarantine"),
}


def test_every_scenario_is_listed() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_scenario_verdict(tmp_path: Path, scenario: str) -> None:
    out = tmp_path / f"{scenario}.parquet"
    synthesize(out, 20_000, scenario, percent=10, seed=3)
    verdict, report = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(out))
    want, gate = EXPECTED[scenario]
    assert verdict.verdict == want
    failing = {g.name for g in verdict.gates if g.status == "fail"}
    if gate is None:
        assert failing == set()
    else:
        assert gate in failing
        if scenario != "too_few":  # too few requests also leaves gate B unjudged
            assert failing == {gate}
    assert report["verdict"] == want


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_text_formats_give_the_same_numbers_as_parquet(tmp_path: Path, suffix: str) -> None:
    pq, txt = tmp_path / "a.parquet", tmp_path / f"a{suffix}"
    synthesize(pq, 3_000, "corrupt_rows", percent=25, seed=1)
    synthesize(txt, 3_000, "corrupt_rows", percent=25, seed=1)
    _, a = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(pq))
    _, b = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(txt))
    assert a["arms"] == b["arms"]
    assert a["quarantined"] == b["quarantined"] > 0


def test_synth_is_deterministic(tmp_path: Path) -> None:
    synthesize(tmp_path / "a.parquet", 5_000, "slow", seed=9)
    synthesize(tmp_path / "b.parquet", 5_000, "slow", seed=9)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
