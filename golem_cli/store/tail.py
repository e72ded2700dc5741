"""Reading only the end of a history (``Store.load_tail``, for ``ask -c``): the newest messages a
run sends, and the leading system messages, without decoding the rest (ADR 0025).

The file is read from its end a piece at a time and cut where a message starts, the way
``codec.read_history_pieces`` cuts (ADR 0016): golem and Go write each message compact with
``role`` first, so ``,{"role":`` outside a string starts a message; inside one only a tool
call's raw arguments can hold those bytes, and a cut there leaves an object open that does not
decode, so that cut is not taken. The tail is taken from a cut where it holds at least
``want`` messages and starts with one that opens a request (what ``message_window`` and repair
need). A file with no such cut within ``MAX_TAIL_BYTES`` (not compact, not golem's spelling,
one huge message) is not read this way: the caller reads it whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from golem_cli.store.files import pread

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

_NEXT_MESSAGE = b',{"role":'
_FIRST_SYSTEM = b'[{"role":"system"'
_PIECE = 1 << 18
#: A tail (or a head) that needs more bytes than this is read with the whole file instead.
MAX_TAIL_BYTES = 1 << 25
_TRIES = 64  # cuts tried in one buffer before reading further back


class Tail(NamedTuple):
    """The messages read: the leading system ones, the newest ones (from ``cut``, the offset of
    the comma before the first of them), and where the head ends (the offset of the comma after
    its last message; 1 when there is none)."""

    head: list[Message]
    messages: list[Message]
    cut: int
    head_end: int


def read_tail(fd: int, close: int, want: int) -> Tail | None:
    """The newest messages of the history open on ``fd`` (its closing bracket at ``close``):
    at least ``want`` of them, the first one able to open a request, and the leading system
    messages. None when the file cannot be cut so (the caller reads it whole)."""
    head = _head(fd, close)
    if head is None:
        return None
    messages, cut = _tail(fd, close, want, head[1])
    if messages is None:
        return None
    return Tail(head[0], messages, cut, head[1])


def _tail(fd: int, close: int, want: int, floor: int) -> tuple[list[Message] | None, int]:
    """The newest messages from a cut after ``floor`` (the head's end), and the cut."""
    pos = close
    buf = b""
    while pos > floor and len(buf) < MAX_TAIL_BYTES:
        start = max(floor, pos - max(_PIECE, len(buf)))
        buf = pread(fd, pos - start, start) + buf
        pos = start
        cuts = _cuts(buf)
        found = _from_cuts(buf, cuts, want)
        if found is not None:
            return found[0], pos + found[1]
    return None, 0


def _cuts(buf: bytes) -> list[int]:
    """Where ``,{"role":`` occurs in ``buf``, newest first."""
    cuts: list[int] = []
    at = len(buf)
    while True:
        at = buf.rfind(_NEXT_MESSAGE, 0, at)
        if at < 0:
            return cuts
        cuts.append(at)


def _from_cuts(buf: bytes, cuts: list[int], want: int) -> tuple[list[Message], int] | None:
    """The messages after the newest cut that gives ``want`` of them starting with an opener."""
    from golem_cli.core.messages import opens_request

    tried = 0
    for index in range(want - 1, len(cuts)):
        cut = cuts[index]
        messages = _decode(buf[cut + 1 :])
        if messages is None:
            tried += 1
            if tried > _TRIES:
                return None
            continue
        if len(messages) >= want and opens_request(messages[0]):
            return messages, cut
    return None


def _decode(items: bytes) -> list[Message] | None:
    """``[items]`` on the strict fast path, or None (a wrong cut, foreign spellings)."""
    from golem_cli.core.codec.history import read_history_pieces

    read = read_history_pieces([b"[" + items + b"]"])
    return read[0] if read is not None and read[0] else None


def _head(fd: int, close: int) -> tuple[list[Message], int] | None:
    """The leading system messages and the offset just after them (1: none), or None when the
    file does not start as golem writes it."""
    from golem_cli.core.messages import SYSTEM

    first = pread(fd, len(_FIRST_SYSTEM), 0)
    if not first.startswith(b"[{"):
        return None
    if first != _FIRST_SYSTEM:
        return [], 1
    size = _PIECE
    while size <= MAX_TAIL_BYTES:
        buf = pread(fd, min(size, close), 0)
        at = 1
        head: list[Message] = []
        while True:
            cut = buf.find(_NEXT_MESSAGE, at)
            if cut < 0:
                break
            messages = _decode(buf[at:cut])
            if messages is None:  # a cut inside raw arguments: the next one
                next_cut = buf.find(_NEXT_MESSAGE, cut + 1)
                if next_cut < 0:
                    break
                messages = _decode(buf[at:next_cut])
                cut = next_cut
                if messages is None:
                    break
            if any(m.role != SYSTEM for m in messages):
                return head, at if head else 1
            head += messages
            at = cut + 1
        if len(buf) >= close:
            return None  # the whole file is its head: read it whole
        size *= 4
    return None
