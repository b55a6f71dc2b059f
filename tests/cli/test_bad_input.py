"""The hostile-input corpus: every malformed file reaches the user as one line, exit 2.

Rules under test (STYLE 7–8, issue 10): each case of ``tests/data/bad/MANIFEST.tsv``
runs through the real command in a process of its own under a 1 GiB address-space
limit and a 30 s deadline, and ends with exit 2 and exactly one stderr line of at
most 300 bytes that starts with ``error: `` and names the file — or with the
documented quarantine (``catalog validate`` exit 1, a telemetry row set aside) —
never a traceback, and never an unescaped control or bidi character on the terminal.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.cli.bad_corpus import (
    ADDRESS_SPACE,
    BAD,
    MAX_LINE,
    OK_CATALOG,
    Case,
    Result,
    Runner,
    check,
    corpus_files,
    load_manifest,
)
from tests.conftest import ROOT, run_cli

CASES = load_manifest()


@pytest.fixture(scope="module")
def runner():
    r = Runner()
    yield r
    r.close()


def test_every_file_has_a_row_and_every_row_a_file() -> None:
    on_disk = corpus_files()
    listed = {c.file for c in CASES}
    assert not on_disk - listed, f"corpus files without a MANIFEST.tsv row: {sorted(on_disk - listed)}"
    assert not listed - on_disk, f"MANIFEST.tsv rows without a file: {sorted(listed - on_disk)}"
    kinds = {f.split("/")[0] for f in on_disk}
    assert {"catalogs", "contexts", "configs", "gold", "telemetry"} <= kinds
    assert len(on_disk) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_case(case: Case, runner: Runner, tmp_path: Path) -> None:
    check(case, runner.run(case.argv(tmp_path), tmp_path))


_LIMITED = ("import resource, runpy, sys; "
            f"resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE})); "
            "sys.argv = ['tooldisc', *sys.argv[1:]]; runpy.run_module('tooldisc.cli', run_name='__main__')")


@pytest.mark.parametrize("name", ["catalogs/alias_bomb.yaml", "catalogs/quarantine_bad_parameters.yaml",
                                  "contexts/duplicate_key.yaml"])
def test_a_fresh_interpreter_prints_what_the_fork_server_prints(name: str, runner: Runner, tmp_path: Path) -> None:
    """The fork server is only a faster way to start the command: same exit, same bytes."""
    import subprocess

    case = next(c for c in CASES if c.file == name)
    forked = runner.run(case.argv(tmp_path), tmp_path)
    fresh = subprocess.run([sys.executable, "-c", _LIMITED, *case.argv(tmp_path)], capture_output=True,
                           text=True, cwd=tmp_path, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (forked.exit, forked.stdout, forked.stderr)
    check(case, Result(fresh.returncode, None, False, 0.0, fresh.stdout, fresh.stderr))


def test_a_missing_file_is_one_line(runner: Runner, tmp_path: Path) -> None:
    missing = str(BAD / "catalogs" / "does_not_exist.yaml")
    result = runner.run(["discover", "x", "--catalog", missing], tmp_path)
    assert result.exit == 2 and result.stderr == f"error: {missing}: catalog not found\n"


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(runner: Runner, tmp_path: Path) -> None:
    """A sparse 257 MB catalog and a 2 MB context: refused by size, in well under the deadline."""
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(257 * 1024 * 1024)
    result = runner.run(["catalog", "stats", str(big)], tmp_path)
    assert result.exit == 2 and "over the limit of 268435456" in result.stderr, result.stderr
    ctx = tmp_path / "ctx.yaml"
    with open(ctx, "wb") as fh:
        fh.truncate(2 * 1024 * 1024)
    result = runner.run(["discover", "x", "--catalog", str(OK_CATALOG), "--context-file", str(ctx)], tmp_path)
    assert result.exit == 2 and "over the limit of 1048576" in result.stderr, result.stderr


def test_a_long_path_keeps_its_tail_and_the_line_stays_short(runner: Runner, tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*(["d" * 50] * 8))
    deep.mkdir(parents=True)
    doc = deep / "catalog_with_a_rather_long_name.yaml"
    doc.write_text("tools:\n  - name: x\n    side_effect: maybe\n", encoding="utf-8")
    result = runner.run(["catalog", "stats", str(doc)], tmp_path)
    line = result.stderr.rstrip("\n")
    assert result.exit == 2 and len(line.encode()) <= MAX_LINE
    assert line.startswith("error: …") and "catalog_with_a_rather_long_name.yaml: tools[0].side_effect" in line


def test_python_tag_is_never_constructed(tmp_path: Path) -> None:
    """A safe loader refuses the tag before anything runs (no file appears)."""
    marker = tmp_path / "pwned"
    doc = tmp_path / "evil.yaml"
    doc.write_text(f"tools:\n  - !!python/object/apply:os.system ['touch {marker}']\n", encoding="utf-8")
    proc = run_cli("discover", "x", "--catalog", str(doc))
    assert proc.returncode == 2
    assert not marker.exists()
