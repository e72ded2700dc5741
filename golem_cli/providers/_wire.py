"""What both wire mappings share: request bytes spelled as Go spells them, and reply fields read
the same way whatever the protocol."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from golem_cli.core.gojson import html_escape_json

_encoder = msgspec.json.Encoder()
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_json(body: Any) -> bytes:
    """Request bytes as Go's encoder writes them: compact, HTML-safe, keys in build order.

    The same history always gives the same bytes, so provider prompt caches hit.
    """
    try:
        encoded = _encoder.encode(body)
    except UnicodeEncodeError:
        encoded = _encoder.encode(_without_surrogates(body))
    return html_escape_json(encoded)


def raw_json(text: str) -> msgspec.Raw:
    """Embed already-valid JSON text as a value (tool arguments), spelling untouched."""
    return msgspec.Raw(_SURROGATE.sub("\ufffd", text).encode())


def _without_surrogates(value: Any) -> Any:
    # Go replaces invalid UTF-8 with U+FFFD; a lone surrogate is Python's form of it.
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def finish_reason(reason: object, vocabulary: Mapping[str, str]) -> str:
    """A provider's finish or stop reason in golem's vocabulary (``stop``, ``length``,
    ``tool_call``, ``content_filter``); anything undocumented is ``other``, nothing is ``""``."""
    if not reason:
        return ""
    return vocabulary.get(str(reason), "other")


def count(value: object) -> int:
    """A token count from a usage object; anything but a whole number counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
