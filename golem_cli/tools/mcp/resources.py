"""What a tool server's resource holds, as golem takes it: the contents of a ``resources/read``
answer (here as its JSON object, so this module needs no SDK) become ``ResourceContent``\\ s,
text or bytes, within the same bounds as an attached file.

A resource is named ``@SERVER:URI`` in a prompt, in ``/attach`` and in what golem shows of a
``resource_link`` a tool returned, so a person (or the model, through ``read_resource``)
can open it. Everything here is the server's word, untrusted: sizes are bounded before
base64 is decoded, text that cannot be stored (lone surrogates) is replaced, and the CLI
shows names through ``terminal_text``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct

#: The most one resource's contents may hold (the figure of an attached file, ``cli/attach.py``).
MAX_BYTES = 20 * 1024 * 1024
#: The most content items golem takes from one answer.
MAX_ITEMS = 20
#: ``@SERVER:URI``: a server's name (as in ``[mcp_servers.NAME]``), a colon, a URI with a scheme;
#: punctuation that ends a sentence after it (``see @docs:file:///a.md.``) is not the URI's.
_END = r".,;:!?)\]'\""  # what may follow a mention in a sentence
MENTION = re.compile(
    rf"(?<![^\s(\[\"'])@([A-Za-z0-9_-]+):([A-Za-z][A-Za-z0-9+.-]*:\S*?[^\s{_END}])(?=[{_END}]*(?:\s|$))"
)


class ResourceContent(Struct, frozen=True, kw_only=True):
    """One item of a resource's contents: its text, or its bytes and their media type."""

    uri: str
    media_type: str = ""
    text: str | None = None
    data: bytes = b""


class ResourceProblem(ValueError):
    """A resource's contents golem cannot take, in words."""


def mention(server: str, uri: str) -> str:
    """How a person names a server's resource: ``@SERVER:URI``."""
    return f"@{server}:{uri}"


def contents(result: Mapping[str, Any]) -> list[ResourceContent]:
    """The contents of a ``ReadResourceResult``, each bounded; ``ResourceProblem`` when there
    are none, or they are larger than ``MAX_BYTES`` in all."""
    items = result.get("contents")
    if not isinstance(items, list) or not items:
        raise ResourceProblem("the server answered with no contents")
    found: list[ResourceContent] = []
    total = 0
    for item in items[:MAX_ITEMS]:
        if not isinstance(item, Mapping):
            continue
        content = _content(item, MAX_BYTES - total)
        total += len(content.data) + len((content.text or "").encode("utf-8", "replace"))
        found.append(content)
    if not found:
        raise ResourceProblem("the server answered with no contents golem can read")
    return found


def _content(item: Mapping[str, Any], room: int) -> ResourceContent:
    uri = _text(item.get("uri"))
    media_type = _text(item.get("mimeType")).lower()
    text = item.get("text")
    if isinstance(text, str):
        if len(text) > room:  # characters: at least as many bytes
            raise ResourceProblem(f"{uri} is larger than {MAX_BYTES // 2**20} MB")
        return ResourceContent(uri=uri, media_type=media_type, text=_storable(text))
    blob = item.get("blob")
    if not isinstance(blob, str):
        raise ResourceProblem(f"{uri} has neither text nor bytes")
    if len(blob) > (room * 4) // 3 + 4:
        raise ResourceProblem(f"{uri} is larger than {MAX_BYTES // 2**20} MB")
    try:
        data = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        raise ResourceProblem(f"{uri}: its bytes are not valid base64") from None
    return ResourceContent(uri=uri, media_type=media_type, data=data)


def as_text(found: list[ResourceContent], limit: int) -> str:
    """The contents as text for the model (``read_resource``): each text item framed with its
    URI, each binary one a line saying what it is; at most ``limit`` characters."""
    from golem_cli.tools.output import cap

    blocks = []
    for item in found:
        if item.text is not None:
            blocks.append(f"[resource: {item.uri}]\n{item.text}")
        else:
            blocks.append(f"[resource: {item.uri} ({item.media_type or 'binary'}, {len(item.data):,} bytes)]")
    return cap("\n\n".join(blocks), limit)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _storable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text
