"""Tool-call arguments: detection of cut-off arguments and the form they take on the wire.

A call's ``args`` are kept verbatim (spec §1.4). Two questions are asked of them: is this a
JSON object (if not, normalize reports the call as ``Truncated``, spec §3), and what text goes
to a provider (spec §9: a non-object is sent as ``{"truncated_args": "<verbatim>"}``).
"""

from __future__ import annotations

import msgspec

from golem_cli.core.codec.gojson import go_quote

# Go's strings.TrimSpace trims Unicode White_Space: ASCII \t \n \v \f \r space, U+0085, U+00A0
# and the Z-category spaces. Python's str.strip() also strips U+001C..U+001F, which Go keeps.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

_raw_decoder = msgspec.json.Decoder(msgspec.Raw)


def go_trim_space(text: str) -> str:
    """Go's ``strings.TrimSpace``."""
    return text.strip(_GO_SPACE)


def is_valid_json(text: str) -> bool:
    """Strict RFC 8259: exactly one value, no NaN/Infinity, nothing after it."""
    try:
        _raw_decoder.decode(text.encode("utf-8", "surrogateescape"))
    except (msgspec.DecodeError, UnicodeEncodeError):
        return False
    return True


def args_are_object(args: str) -> bool:
    """Whether call arguments are one valid JSON object (surrounding whitespace allowed)."""
    if args[:1] == "{" and args[-1:] == "}":
        return is_valid_json(args)  # the usual, already trimmed case
    trimmed = go_trim_space(args)
    return trimmed.startswith("{") and is_valid_json(trimmed)


def wire_args(args: str) -> str:
    """The argument text a provider receives (spec §9 ``args_wrapper``).

    Deterministic, so a replayed history produces the same request bytes (prompt caches hit).
    """
    trimmed = go_trim_space(args)
    if trimmed == "":
        return "{}"
    if trimmed.startswith("{") and is_valid_json(trimmed):
        return trimmed
    return truncated_wrapper(args)


def truncated_wrapper(args: str) -> str:
    """``{"truncated_args":"<verbatim>"}`` spelled exactly as Go's encoder spells it."""
    return '{"truncated_args":' + go_quote(args) + "}"


_JSON_SPACE = " \t\n\r"


def may_be_wrapped(text: str) -> bool:
    """A cheap first look for ``unwrap_truncated``: an object that mentions the key."""
    return text[:1] == "{" and "truncated_args" in text


def unwrap_truncated(text: str) -> str | None:
    """The verbatim arguments inside a ``truncated_wrapper``, in any JSON spelling, else None.

    The inverse of how the codec persists arguments that are not valid JSON: an object whose
    one key is ``truncated_args`` and whose string is not valid JSON (valid JSON is persisted
    as it is). Any spelling, because a file golem wrote may come back re-spelled by ``jq`` or
    Python's ``json.dump`` (spaces, indentation, escaped non-ASCII), and the call it holds was cut
    off all the same (ADR 0002); golem writes it back in Go's spelling.
    """
    if not text.lstrip(_JSON_SPACE)[1:].lstrip(_JSON_SPACE).startswith('"truncated_args"'):
        return None
    try:
        value = msgspec.json.decode(text.encode("utf-8", "surrogateescape"))
    except (msgspec.DecodeError, UnicodeEncodeError):
        return None
    if not isinstance(value, dict) or len(value) != 1 or text.count('"truncated_args"') != 1:
        return None  # another key, or the key twice (a decoder keeps only the last)
    inner = value.get("truncated_args")
    if not isinstance(inner, str) or inner == "" or is_valid_json(inner):
        return None
    return inner
