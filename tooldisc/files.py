"""Output files: reserved before the work starts, written atomically, with the permissions a user expects.

Every output of a command is **reserved** before the command does any work
(:func:`reserve`): its temporary file is created beside the target, which proves the
place is writable where ``os.access`` cannot (as root it says yes for ``/proc/1``). A
directory, a path under a regular file or an unwritable place is then one error line,
exit 2, before any input is read — never a traceback after minutes of work, and never
one output lost because another one failed. After the work, :meth:`Output.write` fills
the temporary file and renames it over the target, so a reader never sees half a file;
:meth:`Output.discard` removes it (and any folder the reservation made) when the
command fails or is interrupted.

The temporary file is created the way any new file is (mode 0666 less the umask), not
0600 as ``tempfile.mkstemp`` would make it, and a file being replaced keeps its mode:
CI artifacts and served HTML stay readable (issue 10 item 17). Its name ends in the
target's suffix (``.events.parquet.3f…a1.tmp.parquet``), so a writer that picks its
format by extension (DuckDB, pyarrow) can write it in place.

Targets that are not files to replace are written in place instead: an existing
character device or FIFO (``/dev/null``, a named pipe), a link under ``/dev``
(``/dev/stdout``) and anything under ``/proc``, which must already exist. Appended outputs (a CI step
summary) are opened for appending when reserved (:func:`reserve_append`).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tooldisc.errors import UsageError

T = TypeVar("T")


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


def _refused(path: str, what: str | None, reason: str) -> UsageError:
    return UsageError(f"cannot be written: {reason}", file=path, where=what)


def _write_synced(tmp: Path, raw: bytes) -> None:
    with open(tmp, "r+b") as fh:
        fh.truncate()
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())


def _write_reason(exc: BaseException) -> str:
    """Why a library's write failed, in the system's words where its message holds them (DuckDB and pyarrow
    wrap the errno's text in their own, temporary paths included)."""
    text = " ".join(str(exc).split())
    for code in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO):
        if (isinstance(exc, OSError) and exc.errno == code) or os.strerror(code) in text:
            return os.strerror(code)
    if isinstance(exc, OSError) and exc.strerror:
        return _reason(exc)
    return text[:200] or type(exc).__name__


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a regular file, not a folder"
    if exc.errno == errno.EISDIR:
        return "it is a folder"
    return exc.strerror or str(exc)


def _make_parents(folder: Path, path: str, what: str | None) -> list[Path]:
    """Create the missing folders up to ``folder``; the ones created, deepest first (for cleanup)."""
    missing: list[Path] = []
    at = folder
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    made: list[Path] = []
    try:
        for d in reversed(missing):
            d.mkdir()
            made.append(d)
    except OSError as exc:
        _remove_folders(list(reversed(made)))
        raise _refused(path, what, _reason(exc)) from None
    return list(reversed(made))


def _remove_folders(folders: list[Path]) -> None:
    for d in folders:  # deepest first; a folder something else has written into stays
        try:
            d.rmdir()
        except OSError:
            return


def _in_place(target: Path) -> bool:
    """True for what must be written to, never replaced: anything under /proc, a link under /dev
    (``/dev/stdout``: renaming over it would replace the link, as root), an existing device or FIFO.

    A regular file under /dev (``/dev/shm/report.json``) is replaced atomically like any other.
    """
    path = os.path.abspath(target)
    if path.startswith("/proc/"):
        return True
    try:
        if path.startswith("/dev/") and stat.S_ISLNK(os.lstat(target).st_mode):
            return True
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


class Output:
    """An output reserved before the work: a temporary file beside the target, renamed over it at the end.

    Build it with :func:`reserve`. ``path`` is the target as given; ``tmp`` the
    temporary file (None for a target written in place). Exactly one of
    :meth:`write`, :meth:`commit` or :meth:`discard` takes effect; later calls do nothing.
    """

    def __init__(self, path: str | os.PathLike[str], what: str | None = None, *, make_parents: bool = True):
        self.path = os.fspath(path)
        self.what = what
        self._target = Path(self.path)
        self._fd: int | None = None  # in place: the target opened for writing
        self._made: list[Path] = []
        self._done = False
        self.tmp: Path | None = None
        if self._target.is_dir():
            raise _refused(self.path, what, "it is a folder")
        if _in_place(self._target):
            try:
                self._fd = os.open(self._target, os.O_WRONLY | os.O_APPEND)
            except OSError as exc:
                raise _refused(self.path, what, _reason(exc)) from None
            if stat.S_ISDIR(os.fstat(self._fd).st_mode):  # pragma: no cover - is_dir() above saw it first
                os.close(self._fd)
                raise _refused(self.path, what, "it is a folder")
            return
        if self._target.exists() and not self._target.is_file():
            raise _refused(self.path, what, "it exists and is not a regular file")
        folder = self._target.parent
        if make_parents:
            self._made = _make_parents(folder, self.path, what)
        elif not folder.is_dir():
            raise _refused(self.path, what, "its folder does not exist" if not folder.exists()
                           else "a part of the path is a regular file, not a folder")
        tmp = folder / f".{self._target.name}.{secrets.token_hex(6)}.tmp{self._target.suffix}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the kernel applies the umask
        except OSError as exc:
            _remove_folders(self._made)
            raise _refused(self.path, what, _reason(exc)) from None
        self.tmp = tmp

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"Output({self.path!r}, what={self.what!r})"

    def write(self, data: str | bytes) -> None:
        """Write ``data`` (text as UTF-8) to the target: through the temporary file and a rename."""
        if self._done:
            raise UsageError(f"{self.path}: this output was already written or discarded")
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if self._fd is not None:
            try:
                view = memoryview(raw)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError as exc:  # a full disk, a device that refuses: the file named, one line
                raise _refused(self.path, self.what, _reason(exc)) from None
            finally:
                self._close()
            return
        self.fill(lambda tmp: _write_synced(tmp, raw))

    def fill(self, write: Callable[[Path], T], *, also: tuple[type[BaseException], ...] = ()) -> T:
        """``write(tmp)`` fills the temporary file (DuckDB, pyarrow…), which is then renamed over the target;
        its result. A write the disk refuses — an ``OSError``, or one of ``also`` (a library's own I/O error,
        DuckDB's ``IOException``) — is this output's one-line error: the temporary file removed, the target
        untouched. It was a traceback."""
        if self.tmp is None:
            raise _refused(self.path, self.what, "it is a device or a pipe; this writer needs a regular file")
        try:
            result = write(self.tmp)
        except (OSError, *also) as exc:
            self.discard()
            raise _refused(self.path, self.what, _write_reason(exc)) from None
        except BaseException:
            self.discard()
            raise
        self.commit()
        return result

    def commit(self) -> None:
        """Rename the temporary file, already filled (by :meth:`write`, DuckDB, pyarrow…), over the target.

        A file being replaced keeps its mode.
        """
        if self._done:
            return
        if self.tmp is None:
            self._close()
            return
        try:
            replace_keeping_mode(self.tmp, self._target)
        except BaseException:
            self.discard()
            raise
        self._done = True

    def discard(self) -> None:
        """Remove the temporary file and the folders the reservation made; the target is untouched."""
        if self._done:
            return
        self._done = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
        _remove_folders(self._made)

    def _close(self) -> None:
        self._done = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class AppendOutput:
    """A file reserved for appending (a CI step summary): opened, and created if absent, when reserved."""

    def __init__(self, path: str | os.PathLike[str], what: str | None = None):
        self.path = os.fspath(path)
        self.what = what
        target = Path(self.path)
        if target.is_dir():
            raise _refused(self.path, what, "it is a folder")
        self._created = not target.exists()
        self._made = _make_parents(target.parent, self.path, what) if self._created else []
        try:
            self._fd: int | None = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as exc:
            _remove_folders(self._made)
            raise _refused(self.path, what, _reason(exc)) from None

    def __str__(self) -> str:
        return self.path

    def write(self, text: str) -> None:
        """Append ``text`` in one write (CI summaries are appended to by several steps) and close."""
        if self._fd is None:
            raise UsageError(f"{self.path}: this output was already written or discarded")
        try:
            os.write(self._fd, text.encode("utf-8"))
        except OSError as exc:  # a full disk: the file named, one line
            raise _refused(self.path, self.what, _reason(exc)) from None
        finally:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        """Let go of the file without writing (another writer appends to it by name from now on)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        """Close; a file this reservation created and nothing wrote to is removed again."""
        if self._fd is None:
            return
        empty = os.fstat(self._fd).st_size == 0
        os.close(self._fd)
        self._fd = None
        if self._created and empty:
            Path(self.path).unlink(missing_ok=True)
            _remove_folders(self._made)


def reserve(path: str | os.PathLike[str], what: str | None = None) -> Output:
    """Reserve the output ``path`` before any work (``what``, e.g. ``--out``, names it in errors).

    Raises :class:`~tooldisc.errors.UsageError` (one line, exit 2) for a folder, a path
    under a regular file or a place where no file can be created.
    """
    return Output(path, what)


def reserve_append(path: str | os.PathLike[str], what: str | None = None) -> AppendOutput:
    """Reserve ``path`` for appending: opened (created if absent) now, so a bad place fails before the work."""
    return AppendOutput(path, what)


def probe_folder(path: str | os.PathLike[str], what: str | None = None) -> None:
    """Check that a file can be created beside ``path`` (a database another library creates).

    A temporary file is created beside it and removed at once; an existing ``path``
    must be a regular file that can be opened for writing. No folder is made.
    """
    spot = Output(path, what, make_parents=False)
    target = Path(spot.path)
    spot.discard()
    if target.exists():
        try:
            os.close(os.open(target, os.O_RDWR))
        except OSError as exc:
            raise _refused(spot.path, what, _reason(exc)) from None


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temp file and a rename.

    A new file gets 0666 less the umask; an existing file keeps its mode.
    """
    reserve(path).write(data)
