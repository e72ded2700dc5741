"""Reading files the store did not necessarily write, safely.

Anything can be planted in the conversations directory or named on the command line: a FIFO
(reading it blocks forever), a device (``/dev/zero`` never ends), a directory, or a file of
gigabytes. ``read_regular`` opens without blocking and without following a final symlink,
refuses anything but a regular file at once, and reads at most ``limit`` bytes whatever
``stat`` says.

The files of ``/proc`` and ``/sys`` look regular but the kernel makes them up as they are read
(``/proc/self/environ`` holds the API keys): they are refused by their file system, and any
other "regular" file that says it is empty but is not is refused as one of them.

The names of the store's files are here too (``store.py`` shows the layout): this module imports
nothing but the standard library, so a command finds them without the store's machinery.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

MESSAGES_SUFFIX = ".json"
META_SUFFIX = ".meta.json"
INDEX_NAME = "index.sqlite"
CONVERSATIONS_DIR = "conversations"  # under the store's root: the messages files and sidecars
#: A messages file's name: a conversation ID (canonical lowercase UUID) and ``.json``.
MESSAGES_NAME_LENGTH = 36 + len(MESSAGES_SUFFIX)
MESSAGES_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json\Z")

#: Default limit for one history file (the CLI reads ``GOLEM_MAX_HISTORY_BYTES``).
MAX_HISTORY_BYTES = 1 << 30
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
#: How the quick readers of many files (a search without the index, the index's rebuild) open
#: each one: never blocking, never following a symlink. Anything odd they find is then read
#: again by ``read_regular``.
QUICK_FLAGS = _FLAGS | getattr(os, "O_NOFOLLOW", 0)


class UnreadableFile(OSError):
    """Not a regular file, or larger than the limit (``too_large``); the message says which
    and what to do. ``stat`` is the file's, when it was opened."""

    def __init__(self, message: str, st: os.stat_result | None = None, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.stat = st
        self.too_large = too_large


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


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def refuse_special(path: Path | str, what: str = "a history file", *, follow: bool = False) -> None:
    """Raise ``UnreadableFile`` unless ``path`` (a final symlink followed only if ``follow``)
    is a regular file, without opening it: before moving a file golem did not necessarily
    write (``restore``), or replacing one the user named (``-o``: a rename would put a file
    where a FIFO or a device was). ``FileNotFoundError`` when it is missing."""
    mode = os.stat(path).st_mode if follow else os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        raise UnreadableFile(f"{path} is a symlink, not {what}")
    if not stat.S_ISREG(mode):
        raise UnreadableFile(f"{path} is {_kind(mode)}, not {what}")


@functools.cache  # looked at once per process: every read of a file asks
def _made_up_devices() -> frozenset[int]:
    """The devices of the file systems whose files the kernel makes up (Linux): ``/proc`` and
    ``/sys`` when they are mounted (not merely directories of the root file system)."""
    root = _device("/")
    return frozenset(d for d in (_device("/proc"), _device("/sys")) if d is not None and d != root)


def read_regular(
    path: Path | str, limit: int = MAX_HISTORY_BYTES, *, follow: bool = True, what: str = "a history file"
) -> bytes:
    """See ``read_with_stat``; just the bytes."""
    return read_with_stat(path, limit, follow=follow, what=what)[0]


def read_with_stat(
    path: Path | str, limit: int = MAX_HISTORY_BYTES, *, follow: bool = True, what: str = "a history file"
) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path``, at most ``limit`` of them, and its ``stat``.

    Raises ``FileNotFoundError`` when it is missing, and ``UnreadableFile`` when it is not a
    regular file (``follow=False`` also refuses a symlink), a file of ``/proc`` or ``/sys``,
    or holds more than ``limit`` bytes. ``what`` names what the file should have been, for
    the message ("not a history file").
    """
    fd, st = _open_regular(path, limit, follow, what)
    try:
        chunks = list(_chunks(fd, st, path, limit, what, None))
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), st
    finally:
        os.close(fd)


def read_pieces(
    path: Path | str,
    limit: int = MAX_HISTORY_BYTES,
    *,
    follow: bool = True,
    what: str = "a history file",
    piece: int = 1 << 21,
) -> Generator[bytes, None, None]:
    """``read_regular`` in pieces of at most ``piece`` bytes, each as it is read: a reader
    that is done with a piece can free it before the next (``codec.read_history_pieces``).
    Same checks, same errors, raised from the first piece on; the file stays open until the
    iterator is exhausted or closed."""
    fd, st = _open_regular(path, limit, follow, what)
    try:
        yield from _chunks(fd, st, path, limit, what, piece)
    finally:
        os.close(fd)


def open_regular(
    path: Path | str, limit: int = MAX_HISTORY_BYTES, *, follow: bool = True, what: str = "a history file"
) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at ``path`` and its ``stat``, with every check
    ``read_regular`` makes before reading (the caller closes it; ``pieces_of`` reads it)."""
    return _open_regular(path, limit, follow, what)


def pieces_of(
    fd: int, st: os.stat_result, path: Path | str, limit: int = MAX_HISTORY_BYTES, piece: int | None = 1 << 21
) -> Iterator[bytes]:
    """The bytes of a descriptor from ``open_regular``, from its position on, in pieces of at
    most ``piece`` bytes (None: as one read), never more than ``limit``: ``read_pieces``'s
    reading of a descriptor the caller keeps."""
    return _chunks(fd, st, path, limit, "a history file", piece)


def _open_regular(path: Path | str, limit: int, follow: bool, what: str) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at ``path`` and its ``stat``, after every check
    that can be made before reading it."""
    flags = _FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow and os.path.islink(path):
            raise UnreadableFile(f"{path} is a symlink, not {what}") from None
        if isinstance(e, IsADirectoryError):
            raise UnreadableFile(f"{path} is a directory, not {what}") from None
        if e.errno == errno.ENXIO:  # a socket (or a device with nothing behind it)
            try:
                kind = _kind(os.stat(path).st_mode)
            except OSError:
                raise e from None
            raise UnreadableFile(f"{path} is {kind}, not {what}") from None
        raise e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(f"{path} is {_kind(st.st_mode)}, not {what}", st)
        if st.st_dev in _made_up_devices():
            raise _made_up(path, what, st)
        if st.st_size > limit:
            raise UnreadableFile(_too_large(path, limit, st.st_size), st, too_large=True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _chunks(fd: int, st: os.stat_result, path: Path | str, limit: int, what: str, piece: int | None) -> Iterator[bytes]:
    """The bytes of ``fd``, never more than ``limit`` of them whatever ``stat`` said: all that
    ``stat`` announces in one read (``piece`` None), else pieces of at most ``piece``."""
    total = 0
    while True:
        size = max(st.st_size - total + 1, 1 << 16) if piece is None else piece
        chunk = os.read(fd, min(size, limit + 1 - total))
        if not chunk:
            break
        if st.st_size == 0:  # says it is empty, yet it has bytes: made up as it is read
            raise _made_up(path, what, st)
        total += len(chunk)
        if total > limit:
            raise UnreadableFile(_too_large(path, limit), st, too_large=True)
        yield chunk


def _made_up(path: Path | str, what: str, st: os.stat_result) -> UnreadableFile:
    return UnreadableFile(f"{path} is a file the system makes up (/proc, /sys), not {what}", st)


def _too_large(path: Path | str, limit: int, size: int | None = None) -> str:
    shown = f"{size / 2**20:,.0f} MiB" if size is not None else "it does not end"
    return (
        f"{path} is too large ({shown}; the limit is {limit / 2**20:,.0f} MiB): "
        "set GOLEM_MAX_HISTORY_BYTES higher if it really is a history"
    )


def pread(fd: int, n: int, at: int) -> bytes:
    """``os.pread`` where the platform has it (not Windows: there, a seek and a read, which move
    the descriptor's position, a position no reader of the store relies on)."""
    if hasattr(os, "pread"):
        return os.pread(fd, n, at)
    os.lseek(fd, at, os.SEEK_SET)
    return os.read(fd, n)


def opener(directory: str) -> tuple[Callable[[str], int], Callable[[], None]]:
    """A function opening a name in ``directory`` with ``QUICK_FLAGS`` (relative to one
    directory descriptor where the platform has them: no path to build and resolve per file),
    and its cleanup."""
    if os.open in os.supports_dir_fd:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return (lambda name: os.open(name, QUICK_FLAGS, dir_fd=dfd)), (lambda: os.close(dfd))
    prefix = directory + os.sep
    return (lambda name: os.open(prefix + name, QUICK_FLAGS)), (lambda: None)
