"""``tooldisc bench`` through the real CLI, on tiny sizes so it stays fast."""

from __future__ import annotations

import json

from tests.conftest import invoke_cli, run_cli


def test_bench_json_has_every_figure(tmp_path) -> None:
    out = tmp_path / "bench.json"
    proc = invoke_cli("bench", "--tools", "50,200", "--queries", "10", "--repeats", "1", "--no-baselines",
                   "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert json.loads(out.read_text("utf-8")) == doc
    assert {"config", "environment", "sizes", "wall_s", "hit_at_k_what"} <= doc.keys()
    assert "targets" not in doc and all("targets" not in size for size in doc["sizes"])
    assert {"python", "cpu_count", "versions", "git"} <= doc["environment"].keys()
    assert doc["config"]["sizes"] == [50, 200]
    assert [s["n_tools"] for s in doc["sizes"]] == [50, 200]
    for size in doc["sizes"]:
        assert size["n_queries"] == 10
        own = size["engines"]["tooldisc"]
        assert own["available"] is True
        assert own["kernels"] == "numpy"  # auto: 50 and 200 tools are below retrieval.min_tools
        assert {"p50", "p95", "p99", "mean", "per_repeat"} <= own["latency_ms"].keys()
        assert 0 < own["latency_ms"]["p50"] <= own["latency_ms"]["p95"] <= own["latency_ms"]["p99"]
        assert own["build_s"]["median"] > 0
        assert {"process_peak"} <= own["rss_mb"].keys()
        first = own["first_query"]  # cold, on its own: with numba it loads the compiled loops
        assert first["ms"] > 0 and first["cpu_ms"] >= 0 and first["process_peak_mb"] > 0
        rss = own["rss_mb"]
        if "build_peak" in rss:  # /proc writable: process_peak covers the build and the first query
            assert rss["process_peak"] >= max(rss["build_peak"], first["process_peak_mb"])
        assert {"authorize", "retrieve", "rank", "cut", "total"} <= own["steps_mean_ms"].keys()
        for name in ("rank_bm25", "bm25s"):
            assert size["engines"][name] == {"available": False, "skipped": "--no-baselines"}
        assert size["ratios"] == {}
        # the same catalog from a file: in-process, and whole one-shot processes (cold and warm index cache)
        f = size["from_file"]
        assert f["in_process_json"]["catalog_hash_matches"] is True
        assert f["same_offer_cold_and_warm"] is True and f["offer_hash"]
        for name in ("in_process_json", "discover_cold", "discover_warm", "validate"):
            assert f[name]["peak_mb"] > 0 and f[name]["ratio_to_in_memory_build"] > 0, name
        assert f["in_process_json"]["total_s"] >= f["in_process_json"]["load_s"] > 0
        assert "in_process_yaml" not in f  # YAML is written at 10,000 tools


def test_bench_table_and_baselines_compare_like_with_like(tmp_path) -> None:
    out = tmp_path / "bench.json"
    proc = invoke_cli("bench", "--tools", "60", "--queries", "12", "--repeats", "1", "--no-from-file", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "tooldisc discover" in proc.stdout
    assert "rank_bm25" in proc.stdout and "bm25s" in proc.stdout
    assert "MISSED" not in proc.stdout and "target" not in proc.stdout.lower()
    assert "hit@15: share of the judged queries" in proc.stdout and "authorized" in proc.stdout
    assert "Query loops (kernels): numpy at" in proc.stdout  # which form ran is always said
    assert "First query of the process" in proc.stdout
    size = json.loads(out.read_text("utf-8"))["sizes"][0]
    for name in ("rank_bm25", "bm25s"):  # the keys outside scripts read keep their names
        eng = size["engines"][name]
        assert eng["available"] is True
        assert {"median"} <= eng["build_s"].keys() and "process_peak" in eng["rss_mb"] and "p95" in eng["latency_ms"]
        # masked to the authorized set, a baseline can only lose hits it had over every tool
        assert 0 <= eng["hit_at_k"] <= eng["hit_at_k_all_tools"] <= 1
    assert 0 <= size["refused_by_security"] <= 1


def test_bench_rejects_bad_sizes() -> None:
    proc = run_cli("bench", "--tools", "10,abc")
    assert proc.returncode == 2
    assert "--tools" in proc.stderr


def test_run_bench_check_names_every_target_and_misses() -> None:
    """The developer targets live in benchmarks/run_bench.py --check, not in the user's output."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "run_bench.py"
    spec = importlib.util.spec_from_file_location("run_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    own = {"latency_ms": {"p95": 6.0}, "build_s": {"median": 2.5}, "rss_mb": {"process_peak": 280.0}, "hit_at_k": 0.6}
    doc = {"sizes": [{"n_tools": 100_000, "engines": {"tooldisc": own, "bm25s": {"available": True, "hit_at_k": 0.61}}}]}
    checks = {what: met for what, _value, _target, met in module.check_targets(doc)}
    assert checks == {"p95 ms at 100,000 tools": False, "build s at 100,000 tools": True,
                      "peak MB at 100,000 tools": True, "hit@K below bm25s at 100,000 tools": True}


def test_peak_watch_keeps_a_peak_a_later_reset_would_hide() -> None:
    """process_peak is the whole process's: a phase's peak survives the next phase's reset."""
    import mmap

    import pytest

    from tooldisc.evaluation.bench.measure import PeakWatch, whole_process_peak

    watch = PeakWatch()
    start = watch.start("build")
    if start is None:
        pytest.skip("/proc/self/clear_refs is not writable here")
    rss = {"before": start, "process_peak": start + 1.0}
    watch.start("first_query")
    # 48 MB made resident, then freed: fresh pages of its own mapping, so the peak rises whatever free
    # memory the heap of a long-lived test worker holds (an allocator may place a block there instead)
    block = mmap.mmap(-1, 48 * 2**20)
    block.write(b"\x01" * len(block))
    block.close()
    watch.start("diagnostic")  # the next phase: VmHWM restarts below the block's peak
    watch.stop()
    whole_process_peak(rss, watch)
    assert rss["phase_peaks"]["first_query"] >= start + 40
    assert rss["process_peak"] == rss["phase_peaks"]["first_query"] and rss["build_peak"] == start + 1.0
    assert rss["diagnostic_peak"] < rss["process_peak"]  # the bench's own checks stay outside it


def test_distinct_schemas_gives_every_tool_a_schema_of_its_own(tmp_path) -> None:
    """benchmarks/distinct_schemas.py, run as a script on a small synthetic catalog: the copy loads, keeps
    its tools and their policy, and no two tools share a schema."""
    import subprocess
    import sys
    from pathlib import Path

    from tooldisc.discovery.catalog import written_key
    from tooldisc.discovery.catalog.io import load_catalog

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "distinct_schemas.py"
    out = tmp_path / "distinct.json"
    subprocess.run([sys.executable, str(script), str(out), "--tools", "400"], check=True, capture_output=True)
    from dataclasses import replace

    from tooldisc.evaluation.bench.synthetic import synthetic_catalog

    catalog = load_catalog(out)
    assert len({written_key(t.parameters) for t in catalog.tools}) == len(catalog) == 400
    source = synthetic_catalog(load_catalog(script.parent.parent / "gold" / "data" / "catalog.yaml"), 400, 0)
    assert [replace(t, parameters=None) for t in catalog.tools] == [replace(t, parameters=None) for t in source.tools]


def test_cli_outputs_hostile_runs_the_calls_with_failing_streams_and_finds_none() -> None:
    """benchmarks/cli_outputs.py hostile on its first calls (the script, kept from rotting; the whole list of 169
    calls under four kinds of failing stdout is a minutes-long run)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "cli_outputs.py"), "hostile",
                           "--venv", str(Path(sys.executable).parent.parent), "--calls", "4"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "no traceback"
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["ascii", "latin-1", "full", "closed"]
