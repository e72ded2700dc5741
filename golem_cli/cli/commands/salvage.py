"""Salvage: the complete messages of a damaged history file (``golem normalize --salvage``).

A history that a crash, a full disk or an editor cut short, or whose bytes were damaged in
the middle, is refused whole by the reader (rightly: it is not a JSON array). Most of it is
usually intact, so the file is walked message by message: each ``{...}`` that parses as JSON
and reads as a golem message is kept; a damaged stretch is skipped up to the next place a
message starts (``{"role"``, as golem and Go write messages; inside a JSON string the quotes
would be escaped, so text that merely mentions it is never taken for a start). What was
skipped is reported with its byte range, so the person knows what was lost.

The walk is linear in the file (each message is parsed once; a damaged stretch is searched
once), and gives up after ``MAX_DAMAGED`` damaged stretches.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from msgspec import Struct, field

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

MAX_DAMAGED = 1000
_START = re.compile(r'\{\s*"role"\s*:')
_SPACE = " \t\r\n"


class Lost(Struct, frozen=True):
    """A stretch of the file that held no readable message: bytes ``start`` to ``end``,
    after ``after`` recovered messages; ``why`` in words."""

    start: int
    end: int
    after: int
    why: str

    def to_json(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "afterMessages": self.after, "why": self.why}


class Salvage(Struct):
    messages: list[Message] = field(default_factory=list)
    lost: list[Lost] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.lost


def salvage(data: bytes) -> Salvage:
    """Every complete message of ``data``, in order, and what could not be read."""
    walk = _Walk(data.decode("utf-8", "surrogateescape"))  # one character per undecodable byte: offsets map back
    pos: int | None = walk.first()
    while pos is not None:
        pos = walk.step(pos)
    return walk.out


class _Walk:
    """One pass over a damaged file's text, keeping what it reads in ``out``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out = Salvage()
        self.offsets = _Offsets(text)
        self.decoder = json.JSONDecoder()

    def first(self) -> int:
        """Where the first message may start: after a byte order mark and the ``[``."""
        pos = _skip(self.text, 0)
        if self.text.startswith("\ufeff", pos):
            pos = _skip(self.text, pos + 1)
        return pos + 1 if self.text.startswith("[", pos) else pos

    def step(self, pos: int) -> int | None:
        """From ``pos``: one message read, or one damaged stretch skipped; where the next may
        start, or None at the end of the array (or after ``MAX_DAMAGED`` damaged stretches)."""
        pos = _skip(self.text, pos, ",")
        if self._ended(pos):
            return None
        end = self._object_end(pos)
        if end > 0:
            self._keep(pos, end)
            return end
        found = _START.search(self.text, pos + 1)
        stop = found.start() if found else len(self.text)
        self._lose(pos, stop, "a damaged message" if found else "a message cut off at the end of the file")
        return None if found is None or len(self.out.lost) >= MAX_DAMAGED else stop

    def _ended(self, pos: int) -> bool:
        """The end of the array: a "]" with no message after it (one with messages after it is
        damage, skipped like any other: a stray "]" must not lose the rest of the file), or the
        end of the file (without its "]": lost, in words)."""
        text = self.text
        if pos < len(text):
            return text.startswith("]", pos) and _START.search(text, pos + 1) is None
        if not text.rstrip(_SPACE).endswith("]"):
            self._lose(pos, len(text), "the file ends before the closing ]")
        return True

    def _object_end(self, pos: int) -> int:
        """Where the JSON object at ``pos`` ends, or -1 when none starts there whole."""
        if not self.text.startswith("{", pos):
            return -1
        try:
            return self.decoder.raw_decode(self.text, pos)[1]
        except (ValueError, RecursionError):
            return -1

    def _keep(self, start: int, end: int) -> None:
        """The object from ``start`` to ``end`` as a message, or as lost when it is not one."""
        from golem_cli.core.codec.history import load_history
        from golem_cli.core.errors import HistoryFormatError

        piece = self.text[start:end].encode("utf-8", "surrogateescape")
        try:
            (message,) = load_history(b"[" + piece + b"]")
        except (HistoryFormatError, ValueError):
            self._lose(start, end, "a JSON object that is not a golem message")
        else:
            self.out.messages.append(message)

    def _lose(self, start: int, end: int, why: str) -> None:
        self.out.lost.append(Lost(self.offsets(start), self.offsets(end), len(self.out.messages), why))


def _skip(text: str, pos: int, also: str = "") -> int:
    while pos < len(text) and (text[pos] in _SPACE or text[pos] in also):
        pos += 1
    return pos


class _Offsets:
    """Character positions to byte offsets, for positions that only grow (one pass in all)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.char = 0
        self.byte = 0

    def __call__(self, i: int) -> int:
        self.byte += len(self.text[self.char : i].encode("utf-8", "surrogateescape"))
        self.char = i
        return self.byte


def describe(lost: Lost) -> str:
    """One line for people."""
    size = lost.end - lost.start
    where = f"bytes {lost.start}-{lost.end}" if size else f"at byte {lost.start}"
    return f"lost {where} ({size} bytes) after message {lost.after}: {lost.why}"
