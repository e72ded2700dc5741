"""The pieces of Go's ``encoding/json`` output that Python's encoders spell differently.

Go escapes ``<`` ``>`` ``&`` and U+2028/U+2029 in every string (HTML-safe), writes ``\\b`` and
``\\f`` short, other control characters as lowercase ``\\u00xx``, replaces invalid UTF-8 with
U+FFFD, and compacts raw JSON values (tool-call ``args``) without touching their spelling.
"""

from __future__ import annotations

import re
from typing import TypeVar

import msgspec

_Text = TypeVar("_Text", str, bytes)

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
for _code in range(0x20):
    _ESCAPES.setdefault(chr(_code), f"\\u{_code:04x}")
# Lone surrogates cannot be UTF-8; Go would have replaced the invalid bytes with U+FFFD.
for _code in range(0xD800, 0xE000):
    _ESCAPES[chr(_code)] = "\ufffd"

_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]')

# HTML-safe escaping applied to already-encoded JSON bytes. The five characters can only occur
# inside string literals in valid JSON, so a plain byte replacement is exact.
HTML_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))
_LINE_SEPARATORS = re.compile(b"\xe2\x80[\xa8\xa9]")


def go_quote(text: str) -> str:
    """A JSON string literal exactly as Go's ``json.Marshal`` writes ``text``."""
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group()], text) + '"'


def html_escape_json(encoded: bytes) -> bytes:
    """Apply Go's HTML-safe escapes to valid JSON bytes produced by another encoder.

    Single-byte membership tests are memchr-fast; the search for U+2028/U+2029 (UTF-8
    ``e2 80 a8``/``a9``) only runs when their first and last bytes occur at all: ``a9`` alone
    is in every "é" and "©", and a search for the three bytes is slower than the regex.
    """
    for raw, escaped in HTML_ESCAPES:
        if raw in encoded:
            encoded = encoded.replace(raw, escaped)
    if b"\xe2" in encoded and (b"\xa8" in encoded or b"\xa9" in encoded):
        encoded = _LINE_SEPARATORS.sub(lambda m: b"\\u2028" if m.group() == b"\xe2\x80\xa8" else b"\\u2029", encoded)
    return encoded


def compact_json(raw: _Text) -> _Text | None:
    """Go's ``json.Compact`` of one JSON value: insignificant whitespace dropped, every
    spelling (numbers, escapes, key order, duplicate keys) kept; None if not valid JSON.
    Text in, text out; bytes in, bytes out."""
    try:
        return msgspec.json.format(raw, indent=-1)
    except msgspec.DecodeError:
        return None


_SHORT_ESCAPES: dict[str, str] = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def go_quote_q(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``): double quotes, backslash escapes for ``"`` and ``\\``,
    short escapes for control characters, ``\\xNN``/``\\uNNNN``/``\\UNNNNNNNN`` for anything
    not printable; printable non-ASCII stays raw. Bytes smuggled in as surrogate escapes
    (undecodable UTF-8) print as ``\\xNN`` like Go's invalid bytes."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # cannot be UTF-8: Go sees three invalid bytes
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
