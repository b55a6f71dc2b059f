"""Bounds everywhere (issue 25 item 8) and one-line usage errors (item 10).

Every count argument has a documented maximum (``tooldisc.limits.COUNTS``, shown in
``--help``); a value above it — or a seed below zero, or a number too long for any
machine — is one error line and exit 2 before any work. A request's text is capped at
``MAX_QUERY_CHARS`` wherever it enters. click's own usage errors (an unknown option, a
missing argument or value, a value of the wrong type) are one ``error:`` line too, with
no usage box.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.bad_corpus import OK_CATALOG, Runner
from tests.conftest import ROOT
from tests.fuzzing import examples
from tooldisc.limits import COUNTS, MAX_QUERY_CHARS

CONFIG = str(ROOT / "configs" / "bm25.yaml")
TOO_BIG = "99999999999999999999999"


@pytest.fixture(scope="module")
def runner():
    r = Runner()
    yield r
    r.close()


def _one_line(result, *fragments: str) -> str:
    assert result.exit == 2, (result.exit, result.stderr, result.stdout[-300:])
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and "Usage:" not in result.stderr and "╭" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


COUNT_CASES = [
    ["canary", "simulate", "--ids", TOO_BIG, "--salt", "s", "--percent", "5"],
    ["canary", "simulate", "--ids", str(COUNTS["ids"].high + 1), "--salt", "s", "--percent", "5"],
    ["canary", "synth", "--events", str(COUNTS["events"].high + 1), "--scenario", "healthy", "--out", "{tmp}/e.parquet"],
    ["canary", "synth", "--events", "1000", "--scenario", "healthy", "--seed", "-1", "--out", "{tmp}/e.parquet"],
    ["bench", "--tools", "1000000000"],
    ["bench", "--tools", f"180,{TOO_BIG}"],
    ["bench", "--queries", str(COUNTS["bench_queries"].high + 1)],
    ["bench", "--repeats", str(COUNTS["repeats"].high + 1)],
    ["bench", "--k", "1001"],
    ["bench", "--seed", "-1"],
    ["tune", "--folds", "101"],
    ["tune", "--n-iter", str(COUNTS["n_iter"].high + 1)],
    ["tune", "--k", "1001"],
    ["learn", "--folds", "101", "--out", "{tmp}/l.json"],
    ["learn", "--sample", str(COUNTS["sample"].high + 1), "--out", "{tmp}/l.json"],
    ["learn", "--min-requests", str(COUNTS["min_requests"].high + 1), "--out", "{tmp}/l.json"],
    ["learn", "--max-phrases", str(COUNTS["max_phrases"].high + 1), "--out", "{tmp}/l.json"],
    ["learn", "--seed", "-1", "--out", "{tmp}/l.json"],
    ["compare", CONFIG, CONFIG, "--permutations", str(COUNTS["permutations"].high + 1)],
    ["compare", CONFIG, CONFIG, "--changed", str(COUNTS["listed"].high + 1)],
    ["compare", CONFIG, CONFIG, "--seed", "-1"],
    ["compare", CONFIG, CONFIG, "--resamples", str(COUNTS["resamples"].high + 1)],
    ["compare", CONFIG, CONFIG, "--resamples", str(COUNTS["resamples"].low - 1)],
    ["eval", "--misses", str(COUNTS["listed"].high + 1)],
    ["eval", "--k", "1001"],
    ["eval", "--k", TOO_BIG],
    ["sweep", "--k", "5,1001"],
    ["discover", "x", "--k", "1001"],
    ["gold", "split", str(ROOT / "gold" / "data" / "gold.json"), "--out-dir", "{tmp}/s", "--seed", "-1"],
]


@pytest.mark.parametrize("argv", COUNT_CASES, ids=lambda a: " ".join(a[:4])[:60])
def test_a_count_over_its_maximum_is_one_line_before_any_work(argv: list[str], runner: Runner,
                                                               tmp_path: Path) -> None:
    result = runner.run([a.format(tmp=tmp_path) for a in argv], tmp_path)
    _one_line(result)
    assert result.seconds < 10  # refused while the options are read, not after minutes of work
    assert not (tmp_path / "e.parquet").exists() and not (tmp_path / "l.json").exists()
    assert not (tmp_path / "s").exists()


def test_help_documents_each_maximum(runner: Runner, tmp_path: Path) -> None:
    result = runner.run(["canary", "simulate", "--help"], tmp_path)
    assert result.exit == 0 and f"1<=x<={COUNTS['ids'].high}" in result.stdout


def test_an_over_long_request_is_one_line(runner: Runner, tmp_path: Path) -> None:
    text = "invoice " * (MAX_QUERY_CHARS // 8) + "x"
    assert len(text) == MAX_QUERY_CHARS + 1
    line = _one_line(runner.run(["discover", text, "--catalog", str(OK_CATALOG)], tmp_path))
    assert f"{MAX_QUERY_CHARS + 1:,} characters" in line and f"{MAX_QUERY_CHARS:,}" in line
    ok = runner.run(["discover", text[:MAX_QUERY_CHARS], "--catalog", str(OK_CATALOG), "--json"], tmp_path)
    assert ok.exit == 0, ok.stderr
    assert json.loads(ok.stdout)["candidates"]


def test_an_over_long_earlier_turn_is_one_line(runner: Runner, tmp_path: Path) -> None:
    line = _one_line(runner.run(["discover", "list invoices", "--catalog", str(OK_CATALOG),
                                 "--history", "x" * (MAX_QUERY_CHARS + 1)], tmp_path))
    assert "history turn 0" in line


USAGE_CASES = [
    (["--bogus"], "No such option: --bogus"),
    (["eval", "--k"], "Option '--k' requires an argument"),
    (["eval", "--bogus"], "No such option: --bogus"),
    (["compare"], "compare needs at least two arms"),
    (["discover"], "Missing argument 'query'"),
    (["canary", "simulate", "--ids", "abc", "--salt", "s", "--percent", "5"], "'--ids'"),
    (["canary", "nope"], "No such command 'nope'"),
    (["eval", "--format", "bogus"], "--format must be one of"),
]


@pytest.mark.parametrize(("argv", "fragment"), USAGE_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_usage_errors_are_one_line_with_no_usage_box(argv: list[str], fragment: str, runner: Runner,
                                                     tmp_path: Path) -> None:
    _one_line(runner.run(argv, tmp_path), fragment)


def test_a_bare_command_still_prints_its_help(runner: Runner, tmp_path: Path) -> None:
    result = runner.run(["gold"], tmp_path)
    assert result.exit == 2 and "Commands:" in result.stderr + result.stdout


def test_the_python_api_has_the_same_bounds() -> None:
    from tooldisc import UsageError, load_catalog
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.bench import BenchOptions

    engine = Discoverer(load_catalog(str(OK_CATALOG)))
    assert len(engine.discover("list invoices", k=10**18).candidates) <= len(engine.catalog)  # a depth, clipped
    with pytest.raises(ValueError, match="at most 10,000 are read"):
        engine.discover("x" * (MAX_QUERY_CHARS + 1))
    with pytest.raises(ValueError, match="history turn 1"):
        engine.discover("list invoices", history=["ok", "y" * (MAX_QUERY_CHARS + 1)])
    assert engine.discover("x" * MAX_QUERY_CHARS).k == 15
    with pytest.raises(UsageError, match="1000000"):
        BenchOptions(sizes=(10**9,))
    with pytest.raises(UsageError, match="'seed'"):
        BenchOptions(seed=-1)


# --------------------------------------------------------------------------- inputs that never end

@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("args,fragment", [
    (("discover", "x", "--catalog", "/dev/zero"), "catalog is over the limit of 1000000 bytes"),
    (("discover", "x", "--context-file", "/dev/zero"), "context file is over the limit"),
    (("discover", "x", "--config", "/dev/zero"), "over the limit"),
    (("eval", "--k", "5", "--gold", "/dev/zero"), "file is over the limit of 67108864 bytes"),
    (("eval", "--k", "5", "--qrels", "/dev/zero", "--topics", "/dev/zero"), "over the limit of 268435456 bytes"),
    (("canary", "verdict", "--experiment", "x", "--events", "/dev/null", "--gates", "/dev/zero"), "larger than"),
])
def test_an_input_that_never_ends_is_read_up_to_its_limit_then_refused(args: tuple[str, ...], fragment: str) -> None:
    """``/dev/zero`` (or a pipe that never closes) as a catalog was read whole: the kernel killed the process
    for its memory (exit 137). Every file input now reads at most its limit plus one byte."""
    import os
    import resource
    import subprocess
    import sys

    def capped() -> None:  # should this come back, the child fails on its own 3 GB, not the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run([sys.executable, "-m", "tooldisc.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TOOLDISC_MAX_CATALOG_BYTES": "1000000"}, preexec_fn=capped, check=False)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    line = done.stderr.splitlines()[-1]
    assert line.startswith("error: /dev/zero: ") and fragment in line and "Traceback" not in done.stderr, line


def test_read_at_most_reads_files_pipes_and_devices_up_to_the_limit(tmp_path: Path) -> None:

    from tooldisc.documents import read_at_most

    f = tmp_path / "f.bin"
    f.write_bytes(b"abcdef")
    assert read_at_most(f, 100) == b"abcdef" and read_at_most(f, 4) == b"abcd" and read_at_most(f, 0) == b""
    assert _read_from_pipe(itertools.repeat(b"x" * 65536), 300_001) == b"x" * 300_001  # a writer that never stops
    if Path("/dev/zero").exists():
        assert read_at_most("/dev/zero", 5) == b"\0" * 5


@settings(max_examples=examples(300, local=60), deadline=None)
@given(content=st.binary(max_size=70_000), limit=st.integers(0, 80_000), through_pipe=st.booleans())
def test_read_at_most_is_a_prefix_of_the_bytes_and_never_longer_than_the_limit(content: bytes, limit: int,
                                                                               through_pipe: bool) -> None:
    """The oracle is slicing: whatever the source (a regular file read in one go, a pipe a chunk at a time,
    its writer blocked past the pipe's buffer), ``read_at_most`` gives ``content[:limit]``."""
    import os
    import tempfile

    from tooldisc.documents import read_at_most

    if through_pipe:
        assert _read_from_pipe([content], limit) == content[:limit]
        return
    with tempfile.NamedTemporaryFile(delete=False) as fh:
        fh.write(content)
    try:
        assert read_at_most(fh.name, limit) == content[:limit]
    finally:
        os.unlink(fh.name)


def _read_from_pipe(pieces: Iterable[bytes], limit: int) -> bytes:
    """``read_at_most`` of a pipe a thread writes ``pieces`` into (it stops when the reader has closed)."""
    import os
    import threading

    from tooldisc.documents import read_at_most

    read, write = os.pipe()

    def writer() -> None:
        try:
            for piece in pieces:
                view = memoryview(piece)
                while view:
                    view = view[os.write(write, view):]
        except OSError:  # the reader stopped at its limit and closed its end
            pass
        finally:
            os.close(write)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        return read_at_most(f"/proc/self/fd/{read}", limit)
    finally:
        os.close(read)
        thread.join(timeout=10)
