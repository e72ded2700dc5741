"""One writer per conversation: an advisory ``flock`` plus a record of who holds it.

The lock file (``locks/<id>.lock``) exists only while a process holds the lock, and holds a
small JSON record: pid, host, since when, and the command. The kernel releases a ``flock`` when
its process dies, however it dies, so a lock left by a dead process is simply free: the next
process takes it and overwrites the record. There is no timeout and no pid guessing.

Removing the file on release races with a process that opened it just before: after
acquiring, a process checks that the path still names the file it locked, and retries if not.

Locks are per process and re-entrant: the registry below counts nested acquisitions, because
``flock`` on a second descriptor of the same file would conflict with the process itself.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from golem_cli.store.atomic import PRIVATE_FILE

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, one writer is trusted
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class LockHolder:
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
    """The record in a lock file, or None (no file, empty, or not a record)."""
    try:
        return _parse_holder(path.read_bytes()[:4096])
    except OSError:
        return None


class LockBusy(Exception):
    """Internal: the lock is held by another process (``holder`` may be None)."""

    def __init__(self, holder: LockHolder | None) -> None:
        super().__init__("busy")
        self.holder = holder


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
        try:
            os.unlink(self.path)  # while still locked: see the module docstring
        except OSError:
            pass
        os.close(self._fd)
        self._fd = -1

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
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise LockBusy(_parse_holder(os.pread(fd, 4096, 0))) from None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # released and removed between our open and our flock: retry
                os.close(fd)
                continue
            previous = _parse_holder(os.pread(fd, 4096, 0))
            _write_record(fd)
        except BaseException:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
            raise
        lock = FileLock(path, fd, previous)
        _HELD[str(path)] = lock
        return lock


def _write_record(fd: int) -> None:
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": time.time(),
        "command": " ".join(["golem", *sys.argv[1:]])[:200],
    }
    data = json.dumps(record).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
