"""Crash-safe file writes and private directories.

A write goes to a temporary file in the same directory, is flushed and fsynced, then renamed
over the target, and the directory is fsynced so the rename itself survives a power cut. A
process killed at any instant therefore leaves the old file or the new one, never a torn one;
at worst a stray temporary file, which ``remove_stale_temp_files`` clears later.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
TEMP_SUFFIX = ".tmp"
STALE_TEMP_SECONDS = 3600


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) with mode 0700; tighten it if it exists.

    The umask could only remove bits, so the mode is set explicitly after creation.
    """
    if path.is_dir():
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, PRIVATE_DIR)
        return
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    os.chmod(path, PRIVATE_DIR)


def temp_name(target: Path) -> Path:
    """A temporary sibling of ``target``: hidden, unique per process and attempt."""
    return target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}")


def write_atomic(
    target: Path,
    data: bytes | Iterable[bytes],
    *,
    mode: int = PRIVATE_FILE,
    durable: bool = True,
    before_rename: Callable[[int], None] | None = None,
) -> None:
    """Replace ``target`` with ``data`` atomically.

    ``data`` may come in pieces (``codec.history_chunks``): each is written as it is made, so
    a long history is never held as one block of bytes. If making a piece fails, the
    temporary file is removed and ``target`` is as it was.

    ``durable=False`` skips the fsyncs, for caches that can be rebuilt (the listing index):
    the rename is still atomic, only a power cut may lose the newest version.

    ``before_rename`` is called with the written file's descriptor just before the rename: an
    exception from it (a check that ``target`` is still the file the caller read) leaves
    ``target`` as it was.
    """
    chunks = (data,) if isinstance(data, bytes | bytearray | memoryview) else data
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        try:
            if os.fstat(fd).st_mode & 0o777 != mode:
                os.fchmod(fd, mode)  # O_CREAT's mode is filtered by the umask
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            if durable:
                os.fsync(fd)
            if before_rename is not None:
                before_rename(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(target.parent)


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable (a no-op where directories cannot be
    opened, such as Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_temp_file(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def remove_stale_temp_files(directory: Path, names: list[str]) -> None:
    """Delete temporary files a killed writer left behind (older than an hour, so a slow
    writer that is still running is never disturbed)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    for name in names:
        path = directory / name
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            pass


def remove_files(directory: Path, names: list[str]) -> None:
    """Best-effort removal of leftovers (already gone is fine)."""
    for name in names:
        try:
            (directory / name).unlink()
        except OSError:
            pass
