"""Writing output files atomically, with the permissions a user expects.

Reports, run files and JUnit results are written to a temporary file beside the
target and renamed, so a reader never sees half a file. The temporary file is
created the way any new file is (mode 0666 less the umask), not 0600 as
``tempfile.mkstemp`` would make it, and a file being replaced keeps its mode: CI
artifacts and served HTML stay readable (issue 10 item 17).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


def existing_mode(path: str | os.PathLike[str]) -> int | None:
    """Permission bits of the file at ``path`` (following a symlink), or None if absent."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def replace_keeping_mode(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """``os.replace(tmp, target)``, giving ``tmp`` the mode of the file it replaces first."""
    mode = existing_mode(target)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, target)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temp file and a rename.

    A new file gets 0666 less the umask; an existing file keeps its mode.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    mode = existing_mode(target)
    tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the kernel applies the umask
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
