"""Opening a file the model named, safely: only a regular file is ever opened.

A named pipe (FIFO) blocks whoever opens it until something writes to it; a device can be
endless (``/dev/zero``) or have side effects when opened; a socket cannot be read at all. Any
of them can sit in a project tree (one ``mkfifo`` is enough), so the file tools check what a
path is before they open it, open it without blocking (``O_NONBLOCK``: a FIFO swapped in
after the check cannot hang the open) and without following a link planted since the path
was resolved (``O_NOFOLLOW``), and check the opened descriptor again.

Kept free of golem's other modules: the search worker (``search.py``) imports it in a
process of its own, where every millisecond of start-up counts.
"""

from __future__ import annotations

import os
import stat

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """The path exists but is not a regular file; ``kind`` says what it is."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(f"{os.fspath(path)} is {kind}, not a regular file")
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words ("a regular file" when it is one)."""
    return next(
        (word for test, word in _KINDS if test(mode)), "a regular file" if stat.S_ISREG(mode) else "a special file"
    )


def open_regular(path: str | os.PathLike[str], dir_fd: int | None = None) -> int:
    """A read-only descriptor of ``path`` (relative to the directory ``dir_fd`` when given),
    which must be a regular file; ``NotRegular`` or the ``OSError`` of the open (not found,
    permission, a link where none may be) otherwise."""
    mode = os.stat(path, dir_fd=dir_fd).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegular(path, kind_of(mode))
    fd = os.open(path, _FLAGS, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped since the check
            raise NotRegular(path, kind_of(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_head(path: str | os.PathLike[str], size: int) -> bytes:
    """At most ``size`` bytes from the start of the regular file ``path``."""
    fd = open_regular(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(size)
    finally:
        os.close(fd)


def os_reason(error: OSError) -> str:
    """An ``OSError`` as the model should read it: the OS's words and the file, shortened."""
    what = error.strerror or str(error) or type(error).__name__
    name = error.filename if isinstance(error.filename, str) else ""
    if len(name) > 120:
        name = name[:60] + "…" + name[-40:]
    return f"{what}: {name!r}" if name else what
