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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

MAX_DAMAGED = 1000
_START = re.compile(r'\{\s*"role"\s*:')
_SPACE = " \t\r\n"


@dataclass(frozen=True)
class Lost:
    """A stretch of the file that held no readable message: bytes ``start`` to ``end``,
    after ``after`` recovered messages; ``why`` in words."""

    start: int
    end: int
    after: int
    why: str

    def to_json(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "afterMessages": self.after, "why": self.why}


@dataclass
class Salvage:
    messages: list[Message] = field(default_factory=list)
    lost: list[Lost] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.lost


def salvage(data: bytes) -> Salvage:
    """Every complete message of ``data``, in order, and what could not be read."""
    from golem_cli.core.codec.history import load_history
    from golem_cli.core.errors import HistoryFormatError

    text = data.decode("utf-8", "surrogateescape")  # one character per undecodable byte: offsets map back
    out = Salvage()
    offsets = _Offsets(text)
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    if text.startswith("\ufeff", pos):
        pos = _skip(text, pos + 1)
    if text.startswith("[", pos):
        pos += 1
    while True:
        pos = _skip(text, pos, ",")
        # The end of the array: a "]" with no message after it (one with messages after it is
        # damage, skipped like any other: a stray "]" must not lose the rest of the file).
        if pos >= len(text) or (text.startswith("]", pos) and _START.search(text, pos + 1) is None):
            if pos >= len(text) and not text.rstrip(_SPACE).endswith("]"):
                out.lost.append(_lost(offsets, pos, len(text), out, "the file ends before the closing ]"))
            break
        start = pos
        end = -1
        if text.startswith("{", pos):
            try:
                _, end = decoder.raw_decode(text, pos)
            except (ValueError, RecursionError):
                end = -1
        if end > 0:
            piece = text[start:end].encode("utf-8", "surrogateescape")
            try:
                (message,) = load_history(b"[" + piece + b"]")
            except (HistoryFormatError, ValueError):
                out.lost.append(_lost(offsets, start, end, out, "a JSON object that is not a golem message"))
            else:
                out.messages.append(message)
            pos = end
            continue
        found = _START.search(text, pos + 1)
        stop = found.start() if found else len(text)
        why = "a damaged message" if found else "a message cut off at the end of the file"
        out.lost.append(_lost(offsets, start, stop, out, why))
        if found is None or len(out.lost) >= MAX_DAMAGED:
            break
        pos = stop
    return out


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


def _lost(offsets: _Offsets, start: int, end: int, out: Salvage, why: str) -> Lost:
    return Lost(offsets(start), offsets(end), len(out.messages), why)


def describe(lost: Lost) -> str:
    """One line for people."""
    size = lost.end - lost.start
    where = f"bytes {lost.start}-{lost.end}" if size else f"at byte {lost.start}"
    return f"lost {where} ({size} bytes) after message {lost.after}: {lost.why}"
