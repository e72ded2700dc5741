"""A JSON reader with Go ``encoding/json`` semantics, for histories the fast path declines.

The codec decodes well-formed golem files with msgspec in one pass. Anything else (case
variants of keys, unknown keys, ``null`` fields, invalid UTF-8, lone surrogate escapes,
base64 with line breaks, broken JSON) comes here, which mirrors Go's decoder: it keeps the raw
source text of values (tool-call ``args``), reports where it stopped, and never raises
anything but ``JSONSyntaxError``.
"""

from __future__ import annotations

import codecs
import re
import sys
from json.decoder import scanstring  # type: ignore[attr-defined]  # in CPython, not in typeshed
from typing import Any

from msgspec import Struct


class JSONSyntaxError(ValueError):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class Obj(Struct):
    """A JSON object as its members in source order (repeated keys kept; Go: last wins)."""

    pairs: list[tuple[str, Node]]


class Number(Struct, frozen=True):
    """A JSON number, kept as its source text. Go never converts a number it does not store
    (an unknown key's value, tool-call arguments kept raw), and no golem field is a number,
    so neither does this reader: a 5,000-digit number loads, as in Go."""

    text: str


class Node(Struct):
    value: Any  # str | Number | bool | None | list[Node] | Obj
    start: int
    end: int


def _go_replace(err: UnicodeError) -> tuple[str | bytes, int]:
    if not isinstance(err, UnicodeDecodeError):
        raise err
    # Go's decoder replaces each invalid byte with U+FFFD and moves on by one byte; Python's
    # "replace" would swallow a whole truncated sequence into one U+FFFD.
    return "\ufffd", err.start + 1


codecs.register_error("golem-go-replace", _go_replace)

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 10000  # Go's limit


def decode_text(data: bytes) -> str:
    """UTF-8 text of ``data`` with Go's per-byte replacement of invalid sequences."""
    return data.decode("utf-8", "golem-go-replace")


def describe(value: Any) -> str:
    """Go's name for a JSON value's type, as in its unmarshal errors."""
    if isinstance(value, Obj):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return "number"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.depth = 0

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def fail(self, pos: int, what: str = "") -> JSONSyntaxError:
        if pos >= len(self.text):
            return JSONSyntaxError("unexpected end of JSON input", pos)
        ch = self.text[pos]
        shown = repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
        return JSONSyntaxError(f"invalid character {shown}{what}", pos)

    def value(self, pos: int) -> Node:
        pos = self.ws(pos)
        text = self.text
        if pos >= len(text):
            raise self.fail(pos)
        ch = text[pos]
        if ch == '"':
            return self.string(pos)
        if ch == "{":
            return self.obj(pos)
        if ch == "[":
            return self.array(pos)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return Node(val, pos, pos + len(word))
        m = _NUMBER.match(text, pos)
        if m and m.end() > pos:
            return Node(Number(m.group()), pos, m.end())
        raise self.fail(pos, " looking for beginning of value")

    def string(self, pos: int) -> Node:
        try:
            s, end = scanstring(self.text, pos + 1, True)
        except ValueError as e:
            at = getattr(e, "pos", pos)
            raise JSONSyntaxError(_string_problem(getattr(e, "msg", str(e)), self.text, at), at) from None
        if _SURROGATE.search(s):
            s = _SURROGATE.sub("\ufffd", s)  # Go: an unpaired surrogate escape becomes U+FFFD
        return Node(s, pos, end)

    def nest(self, pos: int) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise JSONSyntaxError("exceeded max depth", pos)

    def obj(self, start: int) -> Node:
        self.nest(start)
        pairs: list[tuple[str, Node]] = []
        pos = self.ws(start + 1)
        if self.text.startswith("}", pos):
            self.depth -= 1
            return Node(Obj(pairs), start, pos + 1)
        while True:
            if not self.text.startswith('"', pos):
                raise self.fail(pos, " looking for beginning of object key string")
            key = self.string(pos)
            pos = self.ws(key.end)
            if not self.text.startswith(":", pos):
                raise self.fail(pos, " after object key")
            val = self.value(pos + 1)
            pairs.append((key.value, val))
            pos = self.ws(val.end)
            if self.text.startswith(",", pos):
                pos = self.ws(pos + 1)
                continue
            if self.text.startswith("}", pos):
                self.depth -= 1
                return Node(Obj(pairs), start, pos + 1)
            raise self.fail(pos, " after object key:value pair")

    def array(self, start: int) -> Node:
        self.nest(start)
        items: list[Node] = []
        pos = self.ws(start + 1)
        if self.text.startswith("]", pos):
            self.depth -= 1
            return Node(items, start, pos + 1)
        while True:
            item = self.value(pos)
            items.append(item)
            pos = self.ws(item.end)
            if self.text.startswith(",", pos):
                pos += 1
                continue
            if self.text.startswith("]", pos):
                self.depth -= 1
                return Node(items, start, pos + 1)
            raise self.fail(pos, " after array element")


def parse(text: str) -> Node:
    """Parse one JSON document; raises ``JSONSyntaxError`` with the offset where it stopped.

    Nesting is allowed up to Go's limit, 10,000 levels. The parser recurses three Python
    calls per level; CPython 3.11+ runs Python-to-Python calls without growing the C stack,
    so the recursion limit is raised for the parse alone."""
    parser = _Parser(text)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * _MAX_DEPTH + 1000))
    try:
        node = parser.value(0)
    except RecursionError:
        raise JSONSyntaxError("nested too deeply", 0) from None
    finally:
        sys.setrecursionlimit(limit)
    end = parser.ws(node.end)
    if end != len(text):
        raise parser.fail(end, " after top-level value")
    return node


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


_FOLD_TO_ASCII = {"\u017f": "S", "\u212a": "K"}


def fold_key(key: str) -> str:
    """Go's case-folding of object keys for field matching: ASCII letters upper-cased, and
    the two non-ASCII runes whose fold orbit reaches an ASCII letter (U+017F long s, U+212A
    Kelvin sign). Python's ``str.upper`` would also map e.g. dotless i to I, which Go does not."""
    if key.isascii():
        return key.upper()
    return "".join(ch.upper() if ch.isascii() else _FOLD_TO_ASCII.get(ch, ch) for ch in key)


def _string_problem(msg: str, text: str, at: int) -> str:
    """``json.scanstring``'s complaint as a whole sentence in Go's words (its own messages end
    in "at", waiting for a position that is reported separately)."""
    if msg.startswith("Invalid control character"):
        return f"invalid character {text[at : at + 1]!r} in string literal (control characters must be escaped)"
    if msg.startswith("Unterminated string"):
        return "unexpected end of JSON input: a string is never closed"
    if "escape" in msg:
        return "invalid escape in string literal"
    return "invalid string: " + msg.removesuffix(" at").lower()
