"""The verdict report's `quarantine` block: count and per-reason counts, for both profiles."""

from __future__ import annotations

import json
from pathlib import Path

from tests.canary.helpers import arm, evidence, healthy
from tests.conftest import invoke_cli
from tooldisc.canary.document import verdict_dict
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.canary.gates import judge
from tooldisc.canary.synthetic.events import synthesize
from tooldisc.canary.synthetic.shadow import synthesize_shadow
from tooldisc.canary.verdict import run_verdict
from tooldisc.reports import render

REASON = "arm: must be one of control, experiment"


def test_quarantine_block_from_evidence() -> None:
    d = verdict_dict(judge(evidence(arm(9000), arm(1000), quarantined=40)))
    assert d["quarantine"] == {"count": 40, "reasons": {REASON: 40}}
    assert d["quarantined"] == 40  # the old field stays, as the count
    clean = verdict_dict(judge(healthy()))
    assert clean["quarantine"] == {"count": 0, "reasons": {}}
    assert "Quarantined rows by reason" not in render(clean, "verdict", "md")


def test_canary_profile_reasons_add_up(tmp_path: Path) -> None:
    out = tmp_path / "c.parquet"
    synthesize(out, 5_000, "corrupt_rows", percent=25, seed=2)
    _, d = run_verdict(EVENT_SCHEMA, "indexed-retrieval-v1", events=str(out))
    q = d["quarantine"]
    assert q["count"] == d["quarantined"] == sum(q["reasons"].values()) > 0
    assert set(q["reasons"]) <= {REASON, "latency_ms: must be a finite number >= 0 and <= 86400000",
                                 "percent: must be in [0, 100] in steps of 0.01",
                                 "fallback_reason: required when fallback is true"}
    gate = next(g for g in d["gates"] if g["name"] == "quarantine")
    assert gate["numbers"]["reasons"] == q["reasons"]
    md, html = render(d, "verdict", "md"), render(d, "verdict", "html")
    assert "## Quarantined rows by reason" in md and f"| {REASON} | {q['reasons'][REASON]} |" in md
    assert '<h2 dir="auto">Quarantined rows by reason</h2>' in html


def test_reports_with_reasons_are_byte_identical_and_carry_no_paths(tmp_path: Path) -> None:
    data = tmp_path / "shadow.jsonl"
    synthesize_shadow(data, 400, "corrupt_rows", seed=1)
    outs = []
    for i, fmt in enumerate(("md", "md", "html", "html", "json", "json")):
        out = tmp_path / f"r{i}.{fmt}"
        res = invoke_cli("canary", "verdict", "--profile", "shadow", "--events", str(data),
                      "--experiment", "capability-planner-v1", "--format", fmt, "--out", str(out))
        assert res.returncode == 10, res.stderr
        outs.append(out.read_text())
    assert outs[0] == outs[1] and outs[2] == outs[3] and outs[4] == outs[5]
    for text in outs[::2]:
        assert "schema_version: must be 1" in text
        assert str(tmp_path) not in text and "user" not in text.lower()
    assert json.loads(outs[4])["quarantine"]["reasons"]["schema_version: must be 1"] == 3
