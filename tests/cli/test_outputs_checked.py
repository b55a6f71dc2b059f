"""Every output of every command is checked before the command does any work (issue 25 item 6).

A folder, a path under a regular file or a place no file can be created in (``/proc/1``:
``os.access`` says yes there as root) is one error line naming the option and the path,
exit 2. Each command below is also given an input that does not exist: had it read its
inputs first, the error would name that input instead — so the output was checked first.
Nothing is left behind: no temporary file, no folder the reservation made.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.cli.bad_corpus import OK_CATALOG, Runner
from tests.conftest import invoke_cli, run_cli

# (argv with {out} and {missing}, the option that names {out})
OUTPUTS = [
    ("eval --catalog {missing} --out {out}", "--out"),
    ("eval --catalog {missing} --per-query-out {out}", "--per-query-out"),
    ("eval --catalog {missing} --run-out {out}", "--run-out"),
    ("sweep --catalog {missing} --out {out}", "--out"),
    ("compare {missing} {missing} --out {out}", "--out"),
    ("gate --from {missing} --junit {out}", "--junit"),
    ("gate --from {missing} --summary {out}", "--summary"),
    ("tune --catalog {missing} --gold {missing} --out {out}", "--out"),
    ("learn --catalog {missing} --from {missing} --out {out}", "--out"),
    ("bench --catalog {missing} --out {out}", "--out"),
    ("catalog convert {missing} --to mcp --out {out}", "--out"),
    ("gold split {missing} --out-dir {out}", "--out-dir"),
    ("gold qrels {missing} --out {out}", "--out"),
    ("gold qrels {missing} --out - --topics-out {out}", "--topics-out"),
    ("canary synth --events 100000 --scenario healthy --out {out}", "--out"),
    ("canary ingest {missing} --db {out}", "--db"),
    ("canary verdict --events {missing} --experiment e --format md --out {out}", "--out"),
    ("canary verdict --events {missing} --experiment e --summary {out}", "--summary"),
    ("serve --catalog {missing} --tenant t --events {out}", "--events"),
]
PLACES = ("folder", "under_a_file", "proc")
GOLD_LINES = ('{"id": "q1", "query": "list the invoices", "relevant": ["list_invoices"]}\n'
              '{"id": "q2", "query": "make an invoice", "relevant": ["create_invoice"]}\n')


def _small_eval(tmp_path: Path) -> list[str]:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(GOLD_LINES, encoding="utf-8")
    return ["eval", "--catalog", str(OK_CATALOG), "--gold", str(gold), "--k", "3"]


@pytest.fixture(scope="module")
def runner():
    r = Runner()
    yield r
    r.close()


def _place(kind: str, work: Path, option: str) -> str:
    if kind == "folder":
        target = work / ("a_file" if option == "--out-dir" else "a_folder")  # --out-dir: a file is the wrong kind
        return str(target)
    if kind == "under_a_file":
        return str(work / "a_file" / "out.json")
    return "/proc/1/out.json"


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(("kind", "case"), [
    *((kind, OUTPUTS[0]) for kind in PLACES),  # every kind of bad place on one option
    *((PLACES[i % 3], case) for i, case in enumerate(OUTPUTS[1:])),  # every option, the kinds in turn
], ids=lambda v: v if isinstance(v, str) else v[0].split(" {")[0].replace(" ", "-") + v[1])
def test_a_bad_output_place_is_one_line_before_any_work(kind: str, case: tuple[str, str], runner: Runner,
                                                        tmp_path: Path) -> None:
    argv_text, option = case
    work = tmp_path / "work"
    work.mkdir()
    (work / "a_folder").mkdir()
    (work / "a_file").write_text("x")
    before = _listing(work)
    out = _place(kind, work, option)
    missing = str(work / "no_such_input.json")
    argv = [w.format(out=out, missing=missing) for w in argv_text.split()]
    result = runner.run(argv, tmp_path)
    assert result.exit == 2, (argv, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert option in lines[0] and out in lines[0], lines[0]  # the output, not the missing input
    assert "Traceback" not in result.stderr and "no_such_input" not in lines[0]
    assert _listing(work) == before  # no temporary file, no folder left behind


def test_two_outputs_naming_one_file_are_refused(runner: Runner, tmp_path: Path) -> None:
    same = str(tmp_path / "r.json")
    result = runner.run(["eval", "--out", same, "--run-out", same], tmp_path)
    assert result.exit == 2 and "--run-out names the same file as --out" in result.stderr
    assert not Path(same).exists()


def test_outputs_are_written_and_nothing_else_is_left(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper"  # missing folders are made
    proc = invoke_cli(*_small_eval(tmp_path), "--out", str(out / "r.json"), "--run-out", str(out / "run.trec"),
                      "--per-query-out", str(out / "pq.csv"))
    assert proc.returncode == 0, proc.stderr
    assert _listing(out) == ["pq.csv", "r.json", "run.trec"]


def test_a_refused_command_removes_the_folders_its_outputs_made(runner: Runner, tmp_path: Path) -> None:
    """The output is reserved (its folders made), then a later check fails: all of it goes again."""
    result = runner.run(["eval", "--out", str(tmp_path / "made" / "r.txt")], tmp_path)
    assert result.exit == 2 and "say --format" in result.stderr
    assert not (tmp_path / "made").exists()


def test_dev_null_and_dev_stdout_are_written_in_place(tmp_path: Path) -> None:
    """Outputs under /dev are written to, never replaced (as root, a rename would replace /dev/null)."""
    proc = run_cli(*_small_eval(tmp_path), "--format", "json", "--out", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    assert '"metrics"' in proc.stdout
    null = os.stat("/dev/null")
    proc = run_cli("gold", "qrels", str(tmp_path / "gold.jsonl"), "--out", "/dev/null")
    assert proc.returncode == 0, proc.stderr
    assert os.stat("/dev/null").st_rdev == null.st_rdev and os.path.exists("/dev/null")


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_an_interrupted_command_leaves_no_temporary_file(tmp_path: Path) -> None:
    """SIGTERM while the work runs: the reserved output's temporary file is removed on the way out."""
    import subprocess
    import sys
    import time

    out = tmp_path / "bench.json"
    proc = subprocess.Popen([sys.executable, "-m", "tooldisc.cli", "bench", "--tools", "100000", "--queries", "20",
                             "--no-baselines", "--out", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.endswith(".tmp.json") for p in tmp_path.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(p.name.endswith(".tmp.json") for p in tmp_path.iterdir()), "the output was never reserved"
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(tmp_path.iterdir()) == []
