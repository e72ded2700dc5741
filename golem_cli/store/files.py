"""Reading files the store did not necessarily write, safely.

Anything can be planted in the conversations directory or named on the command line: a FIFO
(reading it blocks forever), a device (``/dev/zero`` never ends), a directory, or a file of
gigabytes. ``read_regular`` opens without blocking and without following a final symlink,
refuses anything but a regular file at once, and reads at most ``limit`` bytes whatever
``stat`` says (``/proc`` files report size 0).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Default limit for one history file (the CLI reads ``GOLEM_MAX_HISTORY_BYTES``).
MAX_HISTORY_BYTES = 1 << 30
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class UnreadableFile(OSError):
    """Not a regular file, or larger than the limit; the message says which and what to do.
    ``stat`` is the file's, when it was opened."""

    def __init__(self, message: str, st: os.stat_result | None = None) -> None:
        super().__init__(message)
        self.stat = st


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular(path: Path | str, limit: int = MAX_HISTORY_BYTES, *, follow: bool = True) -> bytes:
    """See ``read_with_stat``; just the bytes."""
    return read_with_stat(path, limit, follow=follow)[0]


def read_with_stat(
    path: Path | str, limit: int = MAX_HISTORY_BYTES, *, follow: bool = True
) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path``, at most ``limit`` of them, and its ``stat``.

    Raises ``FileNotFoundError`` when it is missing, and ``UnreadableFile`` when it is not a
    regular file (``follow=False`` also refuses a symlink) or holds more than ``limit`` bytes.
    """
    flags = _FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow and os.path.islink(path):
            raise UnreadableFile(f"{path} is a symlink, not a history file") from None
        if isinstance(e, IsADirectoryError):
            raise UnreadableFile(f"{path} is a directory, not a history file") from None
        raise e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(f"{path} is {_kind(st.st_mode)}, not a history file", st)
        if st.st_size > limit:
            raise UnreadableFile(_too_large(path, limit, st.st_size), st)
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(max(st.st_size - total + 1, 1 << 16), limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnreadableFile(_too_large(path, limit), st)
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), st
    finally:
        os.close(fd)


def _too_large(path: Path | str, limit: int, size: int | None = None) -> str:
    shown = f"{size / 2**20:,.0f} MiB" if size is not None else "it does not end"
    return (
        f"{path} is too large ({shown}; the limit is {limit / 2**20:,.0f} MiB): "
        "set GOLEM_MAX_HISTORY_BYTES higher if it really is a history"
    )
