"""The scheme of a URL exactly as Go's ``net/url.Parse`` (Go 1.26) sees it.

Sanitize keeps a URL part only when its scheme is http or https, and the reference decides
the scheme with ``url.Parse``: a URL that Parse rejects has no scheme, even when it begins
with ``https://``. Python's ``urllib.parse`` accepts far more, so the parts of Parse that can
fail are re-implemented here, and nothing else.
"""

from __future__ import annotations

import ipaddress
import re
import string

_USERINFO_OK = string.ascii_letters + string.digits + "-._:~!$&'()*+,;=%@"
_HOST_OK = string.ascii_letters + string.digits + "-._~!$&'()*+,;=:[]<>\""

# Every check is one pass of C code over the text, never a Python loop per character: a URL of
# any length is input too.
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# In a host only non-ASCII bytes may be percent-encoded (and %25 in a zone) ...
_BAD_HOST_ESCAPE = re.compile(r"%(?!25)[0-7][0-9A-Fa-f]")
# ... and ASCII other than these (and "%") may not appear (a class of the ASCII left out: one
# that excludes every non-ASCII range costs several milliseconds to compile).
_BAD_HOST_CHAR = re.compile("[" + re.escape("".join(chr(c) for c in range(128) if chr(c) not in _HOST_OK + "%")) + "]")
_BAD_USERINFO = re.compile("[^" + re.escape(_USERINFO_OK) + "]")
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_SCHEME_CHARS = re.compile(r"[A-Za-z0-9+.\-]*")


_CONTROL_BYTES = bytes([*range(0x20), 0x7F])


def _has_control(text: str) -> bool:
    """Whether ``text`` holds an ASCII control character: for ASCII text, deleting them with
    ``bytes.translate`` (about 1 ns a byte) and comparing lengths beats any scan in Python."""
    if text.isascii():
        data = text.encode("ascii")
        return len(data.translate(None, _CONTROL_BYTES)) != len(data)
    return _CONTROL.search(text) is not None


def _escape_classes() -> bytes:
    """Each byte as the percent-escape check sees it: "%" itself, "H" for a hex digit, "." else."""
    table = bytearray(b"." * 256)
    for ch in string.hexdigits:
        table[ord(ch)] = ord("H")
    table[ord("%")] = ord("%")
    return bytes(table)


_ESCAPE_CLASSES = _escape_classes()


def _has_bad_escape(text: str, start: int = 0) -> bool:
    """Whether ``text[start:]`` holds a "%" not followed by two hex digits. With the bytes
    classified (``_ESCAPE_CLASSES``), a valid escape reads "%HH", and the text is valid when
    there are as many of those as there are "%": two counts at ``memchr`` speed, where the
    regular expression stops at every "%"."""
    first = text.find("%", start)
    if first < 0:
        return False
    if not text.isascii():  # byte offsets differ from character offsets
        return _BAD_ESCAPE.search(text, first) is not None
    classes = text.encode("ascii").translate(_ESCAPE_CLASSES)
    return classes.count(b"%", first) != classes.count(b"%HH", first)


class _Invalid(Exception):
    pass


def _unescape(text: str, *, host: bool = False, start: int = 0) -> None:
    """Go's ``unescape`` validity checks of ``text[start:]`` (the decoded value itself is not
    needed)."""
    if _has_bad_escape(text, start):
        raise _Invalid
    if host and (_BAD_HOST_CHAR.search(text, start) or ("%" in text and _BAD_HOST_ESCAPE.search(text, start))):
        raise _Invalid


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and port[1:].isascii() and (port[1:] == "" or port[1:].isdigit()))


def _parse_host(host: str) -> None:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0 or not _valid_optional_port(host[end + 1 :]):
            raise _Invalid
        literal = host[1:end]
        zone = literal.find("%25")
        if zone >= 0:
            _unescape(host[: zone + 1], host=True)
            _unescape(literal[zone:], host=True)
            literal = literal[:zone]
        try:
            ipaddress.IPv6Address(literal)
        except ValueError:
            raise _Invalid from None
        return
    colon = host.find(":")
    if colon >= 0 and not _valid_optional_port(host[colon:]):
        raise _Invalid
    _unescape(host, host=True)


def _parse_authority(authority: str) -> None:
    at = authority.rfind("@")
    _parse_host(authority[at + 1 :] if at >= 0 else authority)
    if at >= 0:
        userinfo = authority[:at]
        if _BAD_USERINFO.search(userinfo):
            raise _Invalid
        _unescape(userinfo)


def _split_scheme(raw: str) -> tuple[str, str]:
    """Go's ``getScheme``: letters, then letters, digits, "+", "-" or "." up to a colon."""
    if not raw or not (raw[0].isascii() and raw[0].isalpha()):
        if raw.startswith(":"):
            raise _Invalid  # "missing protocol scheme"
        return "", raw
    end = _SCHEME_CHARS.match(raw).end()  # type: ignore[union-attr]  # matches the empty string at least
    if raw.startswith(":", end):
        return raw[:end], raw[end + 1 :]
    return "", raw


def _parse(raw: str) -> str:
    raw, _, fragment = raw.partition("#")
    if _has_control(raw):
        raise _Invalid
    if raw == "*":
        return ""
    scheme, rest = _split_scheme(raw)
    scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            _unescape(fragment)
            return scheme  # opaque: "https:opaque", "mailto:a@b", "data:..."
        if ":" in rest.partition("/")[0]:
            raise _Invalid  # "first path segment in URL cannot contain colon"
    path = 0  # where the path starts in rest (offsets, not slices: rest can be 50 MB)
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        path = rest.find("/", 2)
        if path < 0:
            path = len(rest)
        _parse_authority(rest[2:path])
    _unescape(rest, start=path)
    _unescape(fragment)
    return scheme


def url_scheme(url: str) -> str:
    """The lower-cased scheme Go's ``url.Parse`` finds, or ``""`` when there is none or the
    URL does not parse."""
    try:
        return _parse(url)
    except _Invalid:
        return ""
