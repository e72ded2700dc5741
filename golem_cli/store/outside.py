"""When a conversation's file changed on disk behind this process (issue 25 item 1): does the
file on disk now hold what this process knows plus more messages?

Another program (a sync tool bringing a turn from another machine, Go golem, an editor) replaced
the file this process loaded or last saved. The store then reads theirs (bounded, regular files
only) and asks ``extension``: when their file starts with the very bytes this process knows (read
from its held descriptor, a piece at a time) and goes on with a comma, their extra messages are
decoded from what follows; when the bytes differ (another encoder, an editor), their file is
decoded whole and its first messages compared with the ones this process holds. The caller then
merges (their messages, then ours) when that forms a valid history, else saves this process's
turn as a fork (store.py, ADR 0025).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from golem_cli.store.files import open_regular, pieces_of, pread
from golem_cli.store.saving import Persisted, closing_bracket
from golem_cli.store.sidecars import FileSig

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

_PIECE = 1 << 20
_WHITESPACE = b" \t\r\n"


class Extension(NamedTuple):
    """Their file (its descriptor now the caller's) and the messages it holds after ours."""

    theirs: Persisted
    extra: list[Message]


def extension(path: Path, known: Persisted, ours: Sequence[Message] | None, limit: int) -> Extension | None:
    """Whether the file now at ``path`` holds the ``known.count`` messages this process knows
    (``ours``, when it holds them all: else only the bytes can tell) and then more; None when
    not, when it is unreadable, or is no longer there."""
    from golem_cli.core.codec.history import read_history
    from golem_cli.core.errors import HistoryFormatError

    try:
        fd, st = open_regular(path, limit, follow=False)
    except OSError:
        return None
    try:
        close = closing_bracket(fd, st.st_size)
        extra: list[Message] | None = None
        if close is not None and known.close is not None and known.count:
            start = _continues(known, fd, close)
            if start is not None:
                extra = read_history(b"[" + pread(fd, close - start, start) + b"]")[0]
        if extra is None and ours is not None and close is not None:
            os.lseek(fd, 0, os.SEEK_SET)
            decoded = read_history(b"".join(pieces_of(fd, st, path, limit, None)))[0]
            if decoded[: known.count] == list(ours[: known.count]):
                extra = decoded[known.count :]
    except (OSError, HistoryFormatError):
        extra = None
    if extra is None or close is None:
        os.close(fd)
        return None
    theirs = Persisted(fd=fd, sig=FileSig.of(st), close=close, count=known.count + len(extra),
                       skipped=known.skipped, head=known.head, cut=known.cut)  # fmt: skip
    return Extension(theirs, extra)


def _continues(known: Persisted, fd: int, close: int) -> int | None:
    """Where their next message starts, when their file begins with the known bytes up to the
    known file's closing bracket and continues with a comma; else None."""
    assert known.close is not None
    end = known.close
    if close <= end:
        return None
    at = 0
    while at < end:
        n = min(_PIECE, end - at)
        if pread(known.fd, n, at) != pread(fd, n, at):
            return None
        at += n
    after = pread(fd, min(4096, close - end), end).lstrip(_WHITESPACE)
    if not after.startswith(b","):
        return None
    skipped = min(4096, close - end) - len(after)
    return end + skipped + 1
