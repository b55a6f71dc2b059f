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
