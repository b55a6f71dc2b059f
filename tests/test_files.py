"""Output files: written atomically, new ones with the umask's mode, existing ones keep theirs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tooldisc.files import replace_keeping_mode, write_atomic


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_a_new_file_gets_0666_less_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "out.json", "{}\n")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "out.json") == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temp file left behind


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    for mode in (0o644, 0o640, 0o600):
        target.write_text("old", encoding="utf-8")
        target.chmod(mode)
        write_atomic(target, b"new")
        assert target.read_bytes() == b"new" and _mode(target) == mode


def test_replace_keeping_mode(tmp_path: Path) -> None:
    target, tmp = tmp_path / "events.parquet", tmp_path / ".events.tmp"
    target.write_bytes(b"old")
    target.chmod(0o644)
    tmp.write_bytes(b"new")
    tmp.chmod(0o600)
    replace_keeping_mode(tmp, target)
    assert target.read_bytes() == b"new" and _mode(target) == 0o644


# --- reserved before the work (issue 25 item 6) ----------------------------------------------

def test_reserve_creates_the_temporary_file_beside_the_target_then_renames_it(tmp_path: Path) -> None:
    from tooldisc.files import reserve

    out = reserve(tmp_path / "events.parquet", "--out")
    assert out.tmp is not None and out.tmp.parent == tmp_path and out.tmp.name.endswith(".tmp.parquet")
    assert out.tmp.exists() and not (tmp_path / "events.parquet").exists()
    out.write(b"rows")
    assert [p.name for p in tmp_path.iterdir()] == ["events.parquet"]
    assert (tmp_path / "events.parquet").read_bytes() == b"rows"
    out.discard()  # after the write: nothing to undo
    assert (tmp_path / "events.parquet").exists()


def test_discard_removes_the_temporary_file_and_the_folders_it_made(tmp_path: Path) -> None:
    from tooldisc.files import reserve

    out = reserve(tmp_path / "a" / "b" / "report.html")
    assert (tmp_path / "a" / "b").is_dir()
    out.discard()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["folder", "under_a_file", "proc", "missing_parent_is_a_file"])
def test_places_no_file_can_be_written_are_refused_in_one_line(tmp_path: Path, where: str) -> None:
    from tooldisc.errors import UsageError
    from tooldisc.files import reserve

    (tmp_path / "f").write_text("x")
    path = {"folder": tmp_path, "under_a_file": tmp_path / "f" / "out.json", "proc": Path("/proc/1/out.json"),
            "missing_parent_is_a_file": tmp_path / "f" / "new" / "out.json"}[where]
    with pytest.raises(UsageError) as info:
        reserve(path, "--out")
    line = info.value.one_line()
    assert str(path) in line and "--out" in line and "\n" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_a_device_is_written_in_place(tmp_path: Path) -> None:
    from tooldisc.files import reserve

    out = reserve("/dev/null")
    assert out.tmp is None
    out.write("anything")
    assert os.path.exists("/dev/null") and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert reserve("/dev/stdout").tmp is None  # a link: written through, never replaced


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_a_regular_file_under_dev_is_replaced_like_any_other() -> None:
    import secrets

    from tooldisc.files import reserve

    target = Path("/dev/shm") / f"tooldisc-test-{secrets.token_hex(4)}.json"
    out = reserve(target)
    try:
        assert out.tmp is not None and out.tmp.parent == target.parent
        out.write("{}")
        assert target.read_text() == "{}"
    finally:
        out.discard()
        target.unlink(missing_ok=True)


def test_append_outputs_are_opened_when_reserved_and_removed_when_unused(tmp_path: Path) -> None:
    from tooldisc.files import reserve_append

    existing = tmp_path / "summary.md"
    existing.write_text("before\n")
    out = reserve_append(existing)
    out.write("after\n")
    assert existing.read_text() == "before\nafter\n"
    fresh = reserve_append(tmp_path / "new" / "summary.md")
    assert (tmp_path / "new" / "summary.md").exists()
    fresh.discard()  # created here and never written: gone again, with its folder
    assert not (tmp_path / "new").exists()
    kept = reserve_append(existing)
    kept.discard()  # a file that was there before stays
    assert existing.read_text() == "before\nafter\n"


def test_probe_folder_checks_a_database_path_without_creating_it(tmp_path: Path) -> None:
    from tooldisc.errors import UsageError
    from tooldisc.files import probe_folder

    probe_folder(tmp_path / "canary.duckdb", "--db")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UsageError, match="its folder does not exist"):
        probe_folder(tmp_path / "missing" / "canary.duckdb", "--db")
    assert list(tmp_path.iterdir()) == []


def test_a_write_the_disk_refuses_is_one_line_naming_the_file_and_leaves_the_target(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk was an OSError traceback: now a usage error naming the output, the temporary file gone and
    the file it would have replaced untouched."""
    import errno

    from tooldisc.errors import UsageError
    from tooldisc.files import reserve

    target = tmp_path / "report.json"
    target.write_text("before", encoding="utf-8")
    out = reserve(str(target), "--out")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UsageError) as refused:
        out.write("after")
    assert refused.value.one_line() == f"{target}: --out: cannot be written: No space left on device"
    assert target.read_text(encoding="utf-8") == "before" and sorted(tmp_path.iterdir()) == [target]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_device_that_refuses_the_write_is_one_line_through_the_command() -> None:
    from tests.conftest import run_cli

    done = run_cli("eval", "--k", "15", "--out", "/dev/full", "--format", "json")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == "error: /dev/full: --out: cannot be written: No space left on device"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_an_appended_summary_the_disk_refuses_names_the_file() -> None:
    from tooldisc.errors import UsageError
    from tooldisc.files import reserve_append

    out = reserve_append("/dev/full", "--summary")
    with pytest.raises(UsageError) as refused:
        out.write("## verdict\n")
    assert refused.value.one_line() == "/dev/full: --summary: cannot be written: No space left on device"


def test_fill_turns_a_library_s_refused_write_into_the_output_s_one_line(tmp_path: Path) -> None:
    """DuckDB and pyarrow fill the temporary file themselves; their I/O errors (DuckDB's is not an OSError)
    were tracebacks. ``fill`` words them as the output's refusal, in the system's words, and discards."""
    import errno

    from tooldisc.errors import UsageError
    from tooldisc.files import reserve

    class LibraryIOError(Exception):
        pass

    target = tmp_path / "rows.jsonl"

    def refused(tmp: Path) -> None:
        tmp.write_text("half")
        raise LibraryIOError('IO Error: Could not write file "/x/.rows.jsonl.tmp": No space left on device')

    with pytest.raises(UsageError) as one:
        reserve(str(target), "--out").fill(refused, also=(LibraryIOError,))
    assert one.value.one_line() == f"{target}: --out: cannot be written: No space left on device"

    def too_large(tmp: Path) -> None:
        raise OSError(errno.EFBIG, "Error writing bytes to file. Detail: [errno 27] File too large")

    with pytest.raises(UsageError, match=r"cannot be written: File too large$"):
        reserve(str(target), "--out").fill(too_large)

    def bug(tmp: Path) -> None:
        raise LibraryIOError("not an I/O error this output words")

    with pytest.raises(LibraryIOError):
        reserve(str(target), "--out").fill(bug)  # not declared in ``also``: raised as it is
    assert list(tmp_path.iterdir()) == []  # every temporary file discarded, no target made
    assert reserve(str(target), "--out").fill(lambda tmp: tmp.write_text("ok") and 7) == 7
    assert target.read_text() == "ok" and sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_canary_synth_past_a_file_size_limit_is_one_line_and_leaves_nothing(tmp_path: Path, suffix: str) -> None:
    import resource
    import subprocess
    import sys

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    out = tmp_path / f"events{suffix}"
    done = subprocess.run([sys.executable, "-m", "tooldisc.cli", "canary", "synth", "--events", "50000", "--scenario",
                           "healthy", "--out", str(out)], capture_output=True, text=True, timeout=300,
                          preexec_fn=capped, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.stderr.splitlines()[-1] == f"error: {out}: --out: cannot be written: File too large"
    assert list(tmp_path.iterdir()) == []
