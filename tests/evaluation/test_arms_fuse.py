"""Arm syntax of ``compare``, ``default`` as a config name, and ``tooldisc fuse`` against ranx."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tooldisc
from tests.conftest import ROOT, invoke_cli, run_cli
from tests.oracles import oracle
from tooldisc.errors import UsageError
from tooldisc.evaluation.arms import (
    ArmSpec,
    parse_arm,
    parse_run_option,
    unique_labels,
    with_learned,
)
from tooldisc.evaluation.fuse import fuse
from tooldisc.gold.trec import read_scored_run

# Three runs with distinct scores within each query (ranx orders ties its own way), one query
# ranked by a single run, and a one-tool query (CombMNZ's min-max gives it 0, as ranx does).
RUNS = [
    {"q1": [("a", 3.0), ("b", 2.5), ("c", 1.0), ("e f", 0.5)], "q2": [("x", 1.0), ("y", 0.5)], "q3": [("z", 4.0)]},
    {"q1": [("b", 0.9), ("d", 0.8), ("a", 0.1)], "q2": [("y", 2.0)], "q3": [("z", 1.0), ("w", 0.7)]},
    {"q1": [("c", 7.0), ("a", 6.0), ("d", 2.0), ("b", 1.0)], "q2": [("x", 9.0), ("w", 3.0), ("y", 1.0)],
     "q3": [("w", 2.0), ("z", 1.5)]},
]


def _write(runs: list[dict], d: Path) -> list[Path]:
    from tooldisc.gold.trec import run_text

    paths = []
    for i, run in enumerate(runs):
        p = d / f"r{i}.trec"
        p.write_text(run_text({q: tuple(t for t, _ in r) for q, r in run.items()}, f"r{i}",
                              scores={q: tuple(s for _, s in r) for q, r in run.items()}), encoding="utf-8")
        paths.append(p)
    return paths


def test_arm_syntax(tmp_path: Path) -> None:
    cfg = tmp_path / "bm25.yaml"
    cfg.write_text("k: 5\n")
    learned = tmp_path / "learned.json"
    learned.write_text('{\n "catalog_hash": "x",\n "format": "tooldisc-learned"\n}\n')  # sniffed only
    run = tmp_path / "emb.txt"
    run.write_text("q1 Q0 a 1 0.9 emb\n")
    odd = tmp_path / "a=b+c.yaml"  # an existing path is always that path, '=' and '+' included
    odd.write_text("k: 5\n")
    assert parse_arm("default") == ArmSpec("default", config="default")
    assert parse_arm(str(cfg)) == ArmSpec("bm25", config=str(cfg))
    assert parse_arm(f"base={cfg}") == ArmSpec("base", config=str(cfg), named=True)
    assert parse_arm(f"default+{learned}") == ArmSpec("default+learned", config="default", learned=str(learned))
    assert parse_arm(f"{cfg}+{learned}") == ArmSpec("bm25+learned", config=str(cfg), learned=str(learned))
    assert parse_arm(str(learned)) == ArmSpec("learned", config="default", learned=str(learned))
    assert parse_arm(str(run)) == ArmSpec("emb", run=str(run))
    assert parse_arm(str(odd)) == ArmSpec("a=b+c", config=str(odd))
    assert parse_run_option(f"mine={cfg}") == ArmSpec("mine", run=str(cfg), named=True)  # --run: a run, whatever it holds
    with pytest.raises(UsageError, match="no such file"):
        parse_arm(str(tmp_path / "nope.yaml"))
    with pytest.raises(UsageError, match="no config"):
        parse_arm(f"{tmp_path / 'nope.yaml'}+{learned}")
    specs = unique_labels([parse_arm("default"), parse_arm("default"), parse_arm(str(cfg))])
    assert [s.name for s in specs] == ["default", "default-2", "bm25"]
    specs = with_learned([parse_arm("default"), parse_arm("default"), parse_arm(str(run))], every=None,
                         second=str(learned))
    assert [(s.name, s.learned) for s in specs] == [("default", None), ("default+learned", str(learned)),
                                                   ("emb", None)]
    with pytest.raises(UsageError, match="--learned-a is for a config arm"):
        with_learned([parse_arm(str(run)), parse_arm("default")], first=str(learned))


def test_default_names_the_shipped_config_everywhere(tiny_files) -> None:
    cat, gold = tiny_files
    assert tooldisc.load_config("default") == tooldisc.load_config()
    named = tooldisc.evaluate(cat, gold, config="default", k=3)
    assert named.metrics == tooldisc.evaluate(cat, gold, k=3).metrics
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--config", "default", "--k", "3", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["metrics"] == named.metrics
    r = invoke_cli("compare", str(ROOT / "configs/bm25.yaml"), "default", "--catalog", str(cat), "--gold", str(gold),
                "--json")
    assert r.returncode == 0, r.stderr  # was "config not found"
    assert [a["name"] for a in json.loads(r.stdout)["arms"]] == ["bm25", "default"]


def test_rrf_and_combmnz_by_hand() -> None:
    """An oracle independent of ranx: the definitions computed by hand on two tiny runs."""
    a = {"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]}
    b = {"q": [("b", 0.9), ("d", 0.8), ("a", 0.1)]}
    rrf = dict(fuse([a, b], "rrf")["q"])
    assert rrf == pytest.approx({"a": 1 / 61 + 1 / 63, "b": 1 / 62 + 1 / 61, "c": 1 / 63, "d": 1 / 62})
    assert [t for t, _ in fuse([a, b], "rrf")["q"]] == ["b", "a", "d", "c"]
    mnz = dict(fuse([a, b], "combmnz")["q"])
    assert mnz == pytest.approx({"a": (1.0 + 0.0) * 2, "b": (0.5 + 1.0) * 2, "c": 0.0, "d": 0.875})
    tie = fuse([{"q": [("y", 1.0)]}, {"q": [("x", 1.0)]}], "rrf")["q"]
    assert [t for t, _ in tie] == ["x", "y"]  # equal fused scores: by tool name
    assert fuse([a, b], "rrf", depth=2)["q"] == fuse([a, b], "rrf")["q"][:2]
    with pytest.raises(UsageError, match="--method"):
        fuse([a, b], "borda")
    with pytest.raises(UsageError, match="at least two"):
        fuse([a], "rrf")


_RANX = """
import json, sys
from ranx import Run, fuse
runs = [Run.from_file(p, kind="trec") for p in sys.argv[2:]]
print(json.dumps(fuse(runs, norm="min-max", method=sys.argv[1]).to_dict()))
"""


@pytest.mark.parametrize(("ours", "theirs"), [("rrf", "rrf"), ("combmnz", "mnz")])
def test_fuse_equals_ranx(tmp_path: Path, ours: str, theirs: str) -> None:
    """Parity with ranx.fuse on the same files. ranx's own code runs as plain Python
    (NUMBA_DISABLE_JIT): compiling its numba kernels costs ~40 s of CPU, the fixture needs none."""
    oracle("ranx")
    paths = _write(RUNS[:2] if ours == "combmnz" else RUNS, tmp_path)
    ranx_out = subprocess.run([sys.executable, "-c", _RANX, theirs, *map(str, paths)], capture_output=True, text=True,
                              env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, timeout=120, check=True)
    expected = json.loads(ranx_out.stdout)
    read = [read_scored_run(p) for p in paths]
    fused = fuse(read, ours)
    # ranx keeps the queries of its first run and reads names as written (ours decodes "e%20f")
    got = {q: {t.replace(" ", "%20"): s for t, s in r} for q, r in fused.items()}
    assert got.keys() == expected.keys()
    for q in expected:
        assert got[q] == pytest.approx(expected[q], abs=1e-12), q
        ranx_order = sorted(expected[q], key=lambda t: (-expected[q][t], t))  # ranx's scores, ties by name
        assert [t.replace(" ", "%20") for t, _ in fused[q]] == ranx_order
    out = tmp_path / "fused.trec"
    r = run_cli("fuse", "--method", ours, *map(str, paths), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["queries"] == len(expected) and summary["method"] == ours
    written = read_scored_run(out)
    for q, ranked in fused.items():
        assert [t for t, _ in written[q]] == [t for t, _ in ranked]  # the order survives 6-decimal rounding
        assert [s for _, s in written[q]] == pytest.approx([s for _, s in ranked], abs=2e-6)


def test_fuse_bad_input_is_exit_2(tmp_path: Path) -> None:
    paths = _write(RUNS[:2], tmp_path)
    r = run_cli("fuse", "--method", "borda", *map(str, paths), "--out", str(tmp_path / "f.trec"))
    assert r.returncode == 2 and "--method" in r.stderr and not (tmp_path / "f.trec").exists()
    bad = tmp_path / "bad.trec"
    bad.write_text("q Q0 a 1 high t\n")
    r = run_cli("fuse", str(paths[0]), str(bad), "--out", str(tmp_path / "f.trec"))
    assert r.returncode == 2 and "bad.trec" in r.stderr and "line 1" in r.stderr
