"""The store's last line of defence, in proportion to what changed: a save is refused unless
its bytes load back (issue 8, item 1), without decoding a long conversation whole on every turn.

A history file is a JSON array ``[e1,...,en]`` whose elements are read one by one (the array
framing is golem's own). So when bytes ``[X]`` are known to load, with at least one element,
new bytes ``[X,Y]`` load exactly when ``[Y]`` does and holds at least one element: a turn
appended is checked by decoding the turn alone. Anything else (a message changed in place, a
turn undone, other bytes) is decoded whole.

The comparison is of bytes, not of ``Message`` objects: their lists can be changed in place,
so neither their identity nor an equality test against the same objects proves an encoding
unchanged. Comparing 54 MB of bytes takes milliseconds; decoding them took half a second. The
decoding is ``load_history``, the reader ``Store.load`` uses, so a save accepted here is one
golem reads. The price is holding the last validated bytes of one conversation in memory
(see docs/adr/0014-load-back-check-by-prefix.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
