"""``tooldisc bench`` through the real CLI, on tiny sizes so it stays fast."""

from __future__ import annotations

import json

from tests.conftest import run_cli


def test_bench_json_has_every_figure(tmp_path) -> None:
    out = tmp_path / "bench.json"
    proc = run_cli("bench", "--tools", "50,200", "--queries", "10", "--repeats", "1", "--no-baselines",
                   "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert json.loads(out.read_text("utf-8")) == doc
    assert {"config", "environment", "targets", "sizes", "wall_s"} <= doc.keys()
    assert {"python", "cpu_count", "versions", "git"} <= doc["environment"].keys()
    assert doc["config"]["sizes"] == [50, 200]
    assert [s["n_tools"] for s in doc["sizes"]] == [50, 200]
    for size in doc["sizes"]:
        assert size["n_queries"] == 10
        own = size["engines"]["tooldisc"]
        assert own["available"] is True
        assert {"p50", "p95", "p99", "mean", "per_repeat"} <= own["latency_ms"].keys()
        assert 0 < own["latency_ms"]["p50"] <= own["latency_ms"]["p95"] <= own["latency_ms"]["p99"]
        assert own["build_s"]["median"] > 0
        assert {"process_peak"} <= own["rss_mb"].keys()
        assert {"authorize", "retrieve", "rank", "cut", "total"} <= own["steps_mean_ms"].keys()
        for name in ("rank_bm25", "bm25s"):
            assert size["engines"][name] == {"available": False, "skipped": "--no-baselines"}
        assert size["ratios"] == {}


def test_bench_table_and_baselines(tmp_path) -> None:
    proc = run_cli("bench", "--tools", "40", "--queries", "5", "--repeats", "1")
    assert proc.returncode == 0, proc.stderr
    assert "tooldisc discover" in proc.stdout
    assert "rank_bm25" in proc.stdout and "bm25s" in proc.stdout


def test_bench_rejects_bad_sizes() -> None:
    proc = run_cli("bench", "--tools", "10,abc")
    assert proc.returncode == 2
    assert "--tools" in proc.stderr
