"""The per-character implementation golem used before issue 8 (kept as the oracle of
test_urlscheme.py: the regular-expression version must agree with it on every input).

The scheme of a URL exactly as Go's ``net/url.Parse`` (Go 1.26) sees it.

Sanitize keeps a URL part only when its scheme is http or https, and the reference decides
the scheme with ``url.Parse``: a URL that Parse rejects has no scheme, even when it begins
with ``https://``. Python's ``urllib.parse`` accepts far more, so the parts of Parse that can
fail are re-implemented here, and nothing else.
"""

from __future__ import annotations

import ipaddress
import string

_HEX = set(string.hexdigits)
_USERINFO_OK = set(string.ascii_letters + string.digits + "-._:~!$&'()*+,;=%@")
_HOST_OK = set(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:[]<>\"")


class _Invalid(Exception):
    pass


def _unescape(text: str, *, host: bool = False) -> None:
    """Go's ``unescape`` validity checks (the decoded value itself is not needed)."""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) < 2 or not set(pair) <= _HEX:
                raise _Invalid
            # In a host only non-ASCII bytes may be percent-encoded (and %25 in a zone).
            if host and int(pair[0], 16) < 8 and text[i : i + 3] != "%25":
                raise _Invalid
            i += 3
            continue
        if host and ch < "\x80" and ch not in _HOST_OK:
            raise _Invalid
        i += 1


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
        if not set(userinfo) <= _USERINFO_OK:
            raise _Invalid
        _unescape(userinfo)


def _split_scheme(raw: str) -> tuple[str, str]:
    for i, ch in enumerate(raw):
        if ch.isascii() and ch.isalpha():
            continue
        if ch.isascii() and (ch.isdigit() or ch in "+-."):
            if i == 0:
                return "", raw
            continue
        if ch == ":":
            if i == 0:
                raise _Invalid  # "missing protocol scheme"
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _parse(raw: str) -> str:
    raw, _, fragment = raw.partition("#")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in raw):
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
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        _parse_authority(authority)
        rest = slash + path
    _unescape(rest)
    _unescape(fragment)
    return scheme


def url_scheme(url: str) -> str:
    """The lower-cased scheme Go's ``url.Parse`` finds, or ``""`` when there is none or the
    URL does not parse."""
    try:
        return _parse(url)
    except _Invalid:
        return ""
