"""The store's one lock helper: an advisory, per-file, exclusive OS lock.

Two kinds of lock use it:

- ``acquire(path)``: one writer per conversation. Non-blocking; the lock file
  (``locks/<id>.lock``) exists only while a process holds the lock and holds a small JSON
  record (pid, host, since when, the command), so a refusal can name the holder.
- ``exclusive(path)``: a short critical section that waits its turn (the index's writes).

The operating system releases these locks when their process dies, however it dies, so a lock
left by a dead process is simply free: the next process takes it and overwrites the record.
There is no timeout and no pid guessing.

The primitive is ``fcntl.flock`` on POSIX and ``msvcrt.locking`` on Windows, both in the
standard library. The cross-platform packages (portalocker, filelock) cost more to import than
``golem list`` may spend altogether, and filelock truncates the lock file on open, which would
erase the holder record (docs/adr/0006-store-lock-helper.md). On Windows the
lock covers one byte far past the record, because Windows byte-range locks are mandatory: a
lock over the record would stop other processes from reading who holds it.

Removing the lock file on release races with a process that opened it just before. On POSIX
the file is removed while still locked, and after acquiring, a process checks that the path
still names the file it locked, and retries if not. Windows cannot remove an open file, so
there the lock is released and the file closed first; the removal then fails harmlessly if
another process has opened it meanwhile.

Lock files are opened with ``O_NOFOLLOW``: a symlink planted at a lock's path is refused
instead of followed (golem would otherwise write the record into its target).

Locks are per process and re-entrant: the registry below counts nested acquisitions, because
``flock`` on a second descriptor of the same file would conflict with the process itself.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from msgspec import Struct

from golem_cli.store.atomic import PRIVATE_FILE

RECORD_BYTES = 4096
#: Windows: the byte that is locked, far past any record.
LOCKED_BYTE = 1 << 30
_SAFE_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class LockBusy(Exception):
    """Internal: the lock is held by another process (``holder`` may be None)."""

    def __init__(self, holder: LockHolder | None) -> None:
        super().__init__("busy")
        self.holder = holder


class LockFileUnsafe(OSError):
    """Internal: the lock path is not a plain file (a planted symlink, a FIFO, a directory)."""


# --- the primitive -------------------------------------------------------------------------------


def open_lock_file(path: Path, *, create: bool = True) -> int:
    """A descriptor of the lock file at ``path``: read-write and created (0600) if missing,
    or read-only with ``create=False``.

    Anything but a regular file at ``path`` (a symlink, a FIFO, a directory, a device) is
    refused with ``LockFileUnsafe`` without being followed or waited on (``O_NOFOLLOW``,
    ``O_NONBLOCK``).
    """
    flags = _SAFE_FLAGS | (os.O_RDWR | os.O_CREAT if create else os.O_RDONLY)
    try:
        fd = os.open(path, flags, PRIVATE_FILE)
    except OSError as e:
        if os.path.islink(path) or os.path.isdir(path):
            raise LockFileUnsafe(f"{path} is a symlink or a directory, not a lock file") from None
        raise e
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LockFileUnsafe(f"{path} is a special file, not a lock file")
    return fd


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def lock_fd(fd: int, *, blocking: bool) -> bool:
        """Lock ``fd`` exclusively; False when another process holds it and ``blocking`` is
        False (Windows: the lock covers ``LOCKED_BYTE``)."""
        while True:
            os.lseek(fd, LOCKED_BYTE, os.SEEK_SET)
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                return True
            except OSError:
                if not blocking:
                    return False
            time.sleep(0.01)

    def unlock_fd(fd: int) -> None:
        os.lseek(fd, LOCKED_BYTE, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            pass

else:
    import fcntl

    def lock_fd(fd: int, *, blocking: bool) -> bool:
        """Lock ``fd`` exclusively; False when another process holds it and ``blocking`` is
        False."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def unlock_fd(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _read_at_start(fd: int, size: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, size)


def _same_file(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (it was not removed and re-created
    between our open and our lock)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _close_and_remove(path: Path, fd: int) -> None:
    """Release a lock file: on POSIX remove it while still locked (see the module docstring),
    on Windows unlock and close first, since an open file cannot be removed there."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        unlock_fd(fd)
        os.close(fd)
        try:
            os.unlink(path)
        except OSError:
            pass  # another process opened it meanwhile: it is theirs now
        return
    try:
        os.unlink(path)
    except OSError:
        pass
    os.close(fd)  # closing releases the lock


def _lock_path(path: Path, *, blocking: bool) -> int:
    """Open and lock ``path``, retrying when the file was removed between open and lock;
    raises ``LockBusy`` (non-blocking only) with the holder's record."""
    while True:
        fd = open_lock_file(path)
        try:
            if not lock_fd(fd, blocking=blocking):
                raise LockBusy(_parse_holder(_read_at_start(fd, RECORD_BYTES)))
            if _same_file(path, fd):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # released and removed between our open and our lock: retry


@contextmanager
def exclusive(path: Path, *, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the lock on ``path`` for the ``with`` block, waiting for other processes (the
    index's writes, its refreshes); ``waiting()`` is called first when one holds it."""
    try:
        fd = _lock_path(path, blocking=False)
    except LockBusy:
        if waiting is not None:
            waiting()
        fd = _lock_path(path, blocking=True)
    try:
        yield
    finally:
        _close_and_remove(path, fd)


# --- conversation locks, with the holder record ----------------------------------------------------


class LockHolder(Struct, frozen=True):
    """Who holds (or last held) a conversation lock."""

    pid: int
    host: str
    since: float
    command: str = ""

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} on {self.host}, since {when}"

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "host": self.host, "since": self.since, "command": self.command}


def _parse_holder(data: bytes) -> LockHolder | None:
    try:
        obj = json.loads(data.decode("utf-8"))
        return LockHolder(int(obj["pid"]), str(obj["host"]), float(obj["since"]), str(obj.get("command", "")))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def read_holder(path: Path) -> LockHolder | None:
    """The record in a lock file, or None (no file, empty, not a record, not a plain file)."""
    try:
        fd = open_lock_file(path, create=False)
    except OSError:
        return None
    try:
        return _parse_holder(_read_at_start(fd, RECORD_BYTES))
    except OSError:
        return None
    finally:
        os.close(fd)


class FileLock:
    """An acquired exclusive lock on ``path``; ``release()`` (or the context) frees it."""

    def __init__(self, path: Path, fd: int, previous: LockHolder | None) -> None:
        self.path = path
        self._fd = fd
        self._count = 1
        #: the record a previous holder left behind (it died without releasing), if any
        self.took_over: LockHolder | None = previous

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        """Drop one acquisition; the lock is freed when the outermost one is released."""
        if self._fd < 0:
            return
        self._count -= 1
        if self._count > 0:
            return
        _HELD.pop(str(self.path), None)
        fd, self._fd = self._fd, -1
        _close_and_remove(self.path, fd)

    def __enter__(self) -> FileLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_HELD: dict[str, FileLock] = {}


def held_lock(path: Path) -> FileLock | None:
    """This process's lock on ``path``, if it holds one."""
    lock = _HELD.get(str(path))
    return lock if lock is not None and lock.held else None


def acquire(path: Path) -> FileLock:
    """Take the lock on ``path`` without waiting, or raise ``LockBusy`` naming the holder.

    Re-entrant within a process. The lock directory must exist.
    """
    mine = held_lock(path)
    if mine is not None:
        mine._count += 1
        return mine
    fd = _lock_path(path, blocking=False)
    try:
        previous = _parse_holder(_read_at_start(fd, RECORD_BYTES))
        _write_record(fd)
    except BaseException:
        _close_and_remove(path, fd)
        raise
    lock = FileLock(path, fd, previous)
    _HELD[str(path)] = lock
    return lock


def _write_record(fd: int) -> None:
    record = {
        "pid": os.getpid(),
        "host": _hostname(),
        "since": time.time(),
        "command": " ".join(["golem", *sys.argv[1:]])[:200],
    }
    data = json.dumps(record).encode()
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)


def _hostname() -> str:
    import socket  # only when a conversation is locked: a search never needs it

    return socket.gethostname()
