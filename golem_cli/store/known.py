"""A turn's save in proportion to the turn: the bytes of the messages last loaded or saved are
reused when the next save's messages extend those very messages, unchanged.

A chat session saves after every turn (and tool round) the whole history plus what it added.
Encoding 150,000 messages again each time cost ~650 ms of a ~880 ms save. The store knows the
bytes it last loaded or wrote and the messages they hold; a save whose first messages are those
messages only encodes the rest (``codec.dump_appended``) and copies the known bytes.

"Unchanged" is checked, not assumed. ``Message`` and its parts are frozen, and their fields are
strings, bytes and booleans, except the lists (``parts``, ``tool_calls``, ``thinking``), which can
be changed in place. So the known prefix must be the same message objects (identity), and each
of their lists must hold what it held when the bytes were made (a tuple of its elements kept
then; the elements are frozen structs of immutable values, compared by equality, which for
them is equality of their encodings). ``test_known.py`` pins these assumptions about the
declarations. The check runs at C speed: ~30 ms at 150,000 messages.

Bytes that were loaded are reused only when the strict fast path read them (spelled as golem and
Go write): appending keeps such a file on the fast path, and it decodes to exactly the known
messages, so the saved file holds exactly the saved messages. See docs/adr/0014.

The CRC-32 the index keeps of a file's bytes (to tell a file only appended to, index.py) is
continued from the known bytes' CRC over what a save appends (``BodyCrc``): a turn's save on
a long conversation whose text the index holds no longer reads the whole file for it.
"""

from __future__ import annotations

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
