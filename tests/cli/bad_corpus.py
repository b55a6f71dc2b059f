"""The hostile-input corpus under ``tests/data/bad/``: its manifest and a bounded runner.

``MANIFEST.tsv`` has one row per case: the file (relative to the corpus), the exit
code the command must end with, the command (``{file}``, ``{ok_catalog}``, ``{tmp}``
and ``{bad}``, the corpus folder, are filled in), and a fragment that the one error line (exit 2) or stdout
(exit 0/1: a documented quarantine) must hold. Every file on disk needs a row.

Each case runs in a process of its own under a 1 GiB address-space limit and a
30 s deadline, so a regression (an alias bomb expanding, a recursion, a hang)
fails its case instead of the CI machine. ``corpus_server.py`` forks those
processes from an interpreter that imported the CLI once (~0.7 s saved per case).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

BAD = ROOT / "tests" / "data" / "bad"
MANIFEST = BAD / "MANIFEST.tsv"
OK_CATALOG = ROOT / "tests" / "cli" / "data" / "ok_catalog.yaml"
SERVER = ROOT / "tests" / "cli" / "corpus_server.py"
ADDRESS_SPACE = 1 << 30  # bytes
TIMEOUT = 30.0  # seconds
MAX_LINE = 300  # bytes, "error: " and the file name included
NOT_CASES = {"MANIFEST.tsv", "README.md", ".gitkeep"}
# What must never reach a terminal raw: ESC, other C0/C1 controls, bidi overrides/isolates.
RAW_CONTROL = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0),
                                *range(0x202A, 0x202F), *range(0x2066, 0x206A))]


@dataclass(frozen=True)
class Case:
    file: str
    exit: int
    command: str
    fragment: str

    @property
    def id(self) -> str:
        return f"{self.file}:{self.command.split()[0]}{'-' + self.command.split()[1] if ' ' in self.command else ''}"

    def argv(self, tmp: Path) -> list[str]:
        fill = {"file": str(BAD / self.file), "ok_catalog": str(OK_CATALOG), "tmp": str(tmp), "bad": str(BAD)}
        return [word.format(**fill) for word in shlex.split(self.command)]


def load_manifest() -> list[Case]:
    cases = []
    for n, line in enumerate(MANIFEST.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        assert len(parts) == 4, f"MANIFEST.tsv line {n}: expected 4 tab-separated columns, got {len(parts)}"
        cases.append(Case(parts[0], int(parts[1]), parts[2], parts[3]))
    return cases


def corpus_files() -> set[str]:
    """Every case on disk, relative to the corpus: files, and directories named like files
    (``catalogs/a_directory.yaml``); folders without a suffix only group cases."""
    out = set()
    for p in BAD.rglob("*"):
        rel = p.relative_to(BAD)
        if p.name in NOT_CASES or any(Path(*rel.parts[:i]).suffix for i in range(1, len(rel.parts))):
            continue  # the manifest, or something inside a directory case
        if p.is_file() or p.suffix:
            out.add(rel.as_posix())
    return out


@dataclass(frozen=True)
class Result:
    exit: int | None
    signal: int | None
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str


class Runner:
    """One fork server per test process; ``run`` is safe to call from one thread at a time."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, cwd=ROOT)
        self._lock = threading.Lock()

    def run(self, argv: list[str], tmp: Path, *, umask: int | None = None) -> Result:
        """``tooldisc ARGV`` in a forked child, in ``tmp`` (which also holds its stdout and stderr)."""
        out, err = tmp / "stdout.txt", tmp / "stderr.txt"
        request = {"argv": argv, "stdout": str(out), "stderr": str(err), "cwd": str(tmp),
                   "timeout": TIMEOUT, "address_space": ADDRESS_SPACE, "umask": umask}
        with self._lock:
            assert self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            reply = json.loads(self._proc.stdout.readline())
        read = lambda p: p.read_bytes().decode("utf-8", "replace") if p.exists() else ""  # noqa: E731
        return Result(reply["exit"], reply["signal"], reply["timed_out"], reply["seconds"], read(out), read(err))

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def check(case: Case, result: Result) -> None:
    """The rules every case must meet (issue 10, "Done when")."""
    path = str(BAD / case.file)
    both = result.stdout + result.stderr
    assert not result.timed_out, f"{case.file}: still running after {TIMEOUT:.0f} s"
    assert result.signal is None, f"{case.file}: killed by signal {result.signal} (1 GiB address-space limit?)"
    assert "Traceback" not in both, result.stderr[-2000:]
    assert result.exit == case.exit, f"exit {result.exit}, expected {case.exit}: {result.stderr[-600:]}"
    raw = sorted({f"U+{ord(c):04X}" for c in both if c in RAW_CONTROL})
    assert not raw, f"unescaped control or bidi characters reached the terminal: {raw}"
    for line in result.stderr.splitlines():
        assert len(line.encode("utf-8")) <= MAX_LINE, f"a stderr line of {len(line.encode())} bytes: {line[:120]}…"
    if case.exit == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}: {result.stderr[:600]}"
        assert lines[0].startswith("error: "), lines[0]
        assert path in lines[0], f"the line does not name {path}: {lines[0]}"
        assert case.fragment in lines[0], f"{case.fragment!r} not in: {lines[0]}"
    else:
        assert case.fragment in result.stdout, f"{case.fragment!r} not in stdout: {result.stdout[-800:]}"
