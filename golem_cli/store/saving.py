"""A save in proportion to what it adds: the store remembers the file it last loaded or saved,
so the next save encodes (``KnownMessages``) and checks (``LoadBackCheck``) only what is new.

**Encoding only what was appended.** A chat session saves after every turn (and tool round)
the whole history plus what it added. Encoding 150,000 messages again each time cost most of a
save. The store knows the bytes it last loaded or wrote and the messages they hold; a save whose
first messages are those messages only encodes the rest (``codec.dump_appended``) and copies the
known bytes.

"Unchanged" is checked, not assumed. ``Message`` and its parts are frozen, and their fields are
strings, bytes and booleans, except the lists (``parts``, ``tool_calls``, ``thinking``), which can
be changed in place. So the known prefix must be the same message objects (identity), and each
of their lists must hold what it held when the bytes were made (a tuple of its elements kept
then; the elements are frozen structs of immutable values, compared by equality, which for
them is equality of their encodings). ``tests/store/test_known.py`` pins these assumptions about the
declarations. The check runs at C speed.

Bytes that were loaded are reused only when the strict fast path read them (spelled as golem and
Go write): appending keeps such a file on the fast path, and it decodes to exactly the known
messages, so the saved file holds exactly the saved messages. See docs/adr/0014.

The CRC-32 the index keeps of a file's bytes (to tell a file only appended to, index.py) is
continued from the known bytes' CRC over what a save appends (``BodyCrc``): a turn's save on
a long conversation whose text the index holds does not read the whole file for it.

**The load-back check.** The store's last line of defence (issue 8, item 1): a save is refused
unless its bytes load back, without decoding a long conversation whole on every turn. A history
file is a JSON array ``[e1,...,en]`` whose elements are read one by one (the array framing is
golem's own). So when bytes ``[X]`` are known to load, with at least one element, new bytes
``[X,Y]`` load exactly when ``[Y]`` does and holds at least one element: a turn appended is
checked by decoding the turn alone. Anything else (a message changed in place, a turn undone,
other bytes) is decoded whole. The comparison is of bytes, not of ``Message`` objects: their
lists can be changed in place, so neither their identity nor an equality test against the same
objects proves an encoding unchanged. The decoding is ``load_history``, the reader
``Store.load`` uses, so a save accepted here is one golem reads. The price is holding the last
validated bytes of one conversation in memory.
"""

from __future__ import annotations

import re
import zlib
from itertools import chain
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any, NamedTuple

from golem_cli.core.messages import Message

if TYPE_CHECKING:
    from collections.abc import Sequence

#: the fields of ``Message`` that can change in place (every other one is immutable)
LIST_FIELDS = tuple(f for f in Message.__struct_fields__ if str(Message.__annotations__[f]).startswith("list["))
_lists = attrgetter(*LIST_FIELDS)


def _contents(messages: Sequence[Message]) -> list[tuple[Any, ...]]:
    """What every list of every message holds, in order (C-level loops: no Python per message)."""
    return list(map(tuple, chain.from_iterable(map(_lists, messages))))


def body_crc(data: bytes | memoryview, start: int = 0, crc: int = 0) -> int:
    """CRC-32 of a history file's bytes without its closing bracket, continued from ``crc``
    over ``data[start:-1]``: a file whose messages were only appended to starts with the old
    file minus its bracket."""
    return zlib.crc32(memoryview(data)[start:-1], crc)


class BodyCrc:
    """``body_crc`` of a save's bytes and of their prefixes, each computed when first asked
    (by the index, and only when it holds the conversation's text) and continued from the
    furthest prefix already known: the CRC of the bytes a save extends is known from the save
    before, so a turn's save reads only the turn for it."""

    __slots__ = ("_at", "_body", "_data")

    def __init__(self, data: bytes, at: tuple[int, int] | None = None) -> None:
        self._data = data
        self._at = at  # (length, body_crc(data[:length])) of a prefix whose CRC is known
        self._body: int | None = None

    def of_prefix(self, length: int) -> int:
        """``body_crc(data[:length])``: the CRC the file of that length had, if ``data``
        appends to it."""
        if self._at is None or self._at[0] != length:
            self._at = (length, body_crc(memoryview(self._data)[:length]))
        return self._at[1]

    def body(self) -> int:
        """``body_crc(data)``."""
        if self._body is None:
            at = self._at
            self._body = body_crc(self._data, at[0] - 1, at[1]) if at is not None else body_crc(self._data)
        return self._body

    def computed(self) -> int | None:
        """``body()`` if it was asked for (else None: nothing needed it)."""
        return self._body


class Encoding(NamedTuple):
    """A save's bytes and what ``KnownMessages.adopt`` needs to know them next time."""

    data: bytes
    messages: list[Message]
    contents: list[tuple[Any, ...]]
    encoded: int  # how many messages at the end were encoded now (all, unless known bytes were reused)
    batches: list[tuple[int, int]]  # where a whole encoding's batches lie in ``data``, for the load-back check
    crc: BodyCrc


class KnownMessages:
    """The bytes last loaded or saved and the messages they hold (one conversation at a time: a
    chat session works on one; the bytes are those of the messages, whatever the conversation)."""

    def __init__(self) -> None:
        self._data = b""
        self._messages: list[Message] = []
        self._contents: list[tuple[Any, ...]] = []
        self._crc: BodyCrc | None = None  # of self._data, when it was saved (loaded bytes: not yet asked)

    def remember(self, data: bytes, messages: Sequence[Message]) -> None:
        """Record that ``data`` is a JSON array holding exactly ``messages`` (golem's bytes for
        them, or bytes the fast path read them from)."""
        self.adopt(Encoding(data, list(messages), _contents(messages), len(messages), [], BodyCrc(data)))

    def adopt(self, encoding: Encoding) -> None:
        """Know ``encoding`` (made by ``encode``, then saved) for the next save. Only an array
        from the first byte to the last, with a message, can be extended."""
        data, messages = encoding.data, encoding.messages
        if messages and data.startswith(b"[") and data.endswith(b"]"):
            self._data, self._messages, self._contents = data, messages, encoding.contents
            self._crc = encoding.crc
        else:
            self.forget()

    def forget(self) -> None:
        self._data, self._messages, self._contents, self._crc = b"", [], [], None

    def encode(self, messages: Sequence[Message]) -> Encoding:
        """``dump_history(messages)``, encoding only the messages after the known ones when
        ``messages`` starts with them, unchanged."""
        from golem_cli.core.codec.history import dump_appended, dump_with_batches

        messages = list(messages)
        n = len(self._messages)
        if self.extended_by(messages):
            more = messages[n:]  # the known ones were just found unchanged: only these are new
            old = self._data
            data = dump_appended(old, more)
            known = self._crc.computed() if self._crc is not None else None
            crc = BodyCrc(data, (len(old), known) if known is not None else None)
            return Encoding(data, messages, self._contents + _contents(more), len(more), [], crc)
        data, batches = dump_with_batches(messages)
        return Encoding(data, messages, _contents(messages), len(messages), batches, BodyCrc(data))

    def extended_by(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` starts with the known messages, the same objects holding what
        they held when their bytes were made."""
        known = self._messages
        return (
            bool(known)
            and len(messages) >= len(known)
            and all(map(is_, messages, known))  # stops at the end of the known ones
            and _contents(known) == self._contents
        )


# --- the load-back check ------------------------------------------------------------------------

_EMPTY_ARRAY = re.compile(rb"\[[ \t\r\n]*\]\Z")  # stops at the first element: no scan of the rest


class LoadBackCheck:
    """Remembers the last bytes known to load back (a chat session works on one conversation;
    the bytes of another simply replace them: the check is about bytes, not conversations)."""

    def __init__(self) -> None:
        self._known = b""  # bytes known to load, b"[X]" with at least one element in X

    def remember(self, data: bytes) -> None:
        """Record that ``data`` loads back (it was just loaded or checked). Only an array that
        runs from the first byte to the last, with an element, can be extended by its bytes."""
        if data.startswith(b"[") and data.endswith(b"]") and not _EMPTY_ARRAY.match(data):
            self._known = data
        else:
            self._known = b""

    def check(self, data: bytes, batches: Sequence[tuple[int, int]] = ()) -> None:
        """Raise ``HistoryFormatError`` unless ``data`` loads back, decoding only the elements
        appended to the bytes last known to load, else each of ``batches`` alone, else all of
        ``data``; then remember it.

        ``batches`` (from ``codec.dump_with_batches``) are where ``data``, ``[`` batch ``,``
        batch ... ``]``, holds its elements: by the argument above, each loading alone with an
        element proves the whole, and only a batch of messages is decoded at a time (a whole
        decode held a second copy of every message). Offsets that do not tile ``data`` so are
        not used."""
        from golem_cli.core.codec.history import load_history
        from golem_cli.core.errors import HistoryFormatError

        tail = self._appended(data)
        try:
            if tail is not None:
                proven = bool(load_history(tail))  # an empty tail could hide a stray comma
            else:
                proven = _tiles(data, batches) and all(load_history(b"[" + data[s:e] + b"]") for s, e in batches)
        except HistoryFormatError:
            proven = False  # decode it whole after all: the error then names the file's own position
        if not proven:
            load_history(data)
        self.remember(data)

    def _appended(self, data: bytes) -> bytes | None:
        """``[Y]`` when ``data`` is ``[X,Y]`` and ``[X]`` is known to load, else None."""
        known = self._known
        body = len(known) - 1  # the known array without its closing bracket
        if known and data[body : body + 1] == b"," and data.startswith(memoryview(known)[:body]):  # no copy
            return b"[" + data[body + 1 :]
        return None


def _tiles(data: bytes, batches: Sequence[tuple[int, int]]) -> bool:
    """Whether ``batches`` cut ``data`` into ``[`` batch ``,`` batch ... ``]`` exactly."""
    if not batches or data[:1] != b"[" or data[-1:] != b"]" or batches[0][0] != 1 or batches[-1][1] != len(data) - 1:
        return False
    ends = (end for _, end in batches)
    return all(s < e for s, e in batches) and all(
        start == end + 1 and data[end : end + 1] == b"," for (start, _), end in zip(batches[1:], ends, strict=False)
    )
