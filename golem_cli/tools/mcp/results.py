"""What a tool server answered, as the tool result golem records.

A ``CallToolResult`` (here as its JSON object, so this module needs no SDK) becomes:

* its text blocks (and the text of embedded text resources), joined by newlines: the result
  text, capped at the tool output limit like every tool's output;
* its images (PNG, JPEG, GIF, WebP, at most ``MAX_IMAGE_BYTES`` each and ``MAX_IMAGES`` in
  all): ``Part``\\ s of the tool message, which both providers send with the result;
* a ``resource_link``: a line naming it ``@SERVER:URI``, the way a person attaches it and the
  model reads it (``read_resource``);
* anything else (audio, binary resources, an image too large or of another type, a block
  of an unknown type): a line saying what was left out, so the model knows it exists;
* ``structuredContent``: its JSON text, when the server sent no text block (a server that
  sends both repeats the structure as text, which the spec asks of it);
* ``isError: true``: a ``failed`` result (``ToolFailed``) with the text.

Everything here is the server's word, untrusted: sizes are bounded, text that cannot be
stored (lone surrogates) is replaced, and the CLI strips terminal escapes when it prints.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from golem_cli.core.messages import Part
from golem_cli.core.tools import ToolFailed, ToolResult
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT, cap

#: Image types both providers accept inline.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: The largest image sent to the model (Anthropic's limit for one image).
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES = 8


def tool_result(result: Mapping[str, Any], *, limit: int = DEFAULT_OUTPUT_LIMIT, server: str = "") -> ToolResult:
    """The ``ToolResult`` for ``server``'s answer; ``ToolFailed`` when it says ``isError``."""
    found = _Contents(server=server)
    content = result.get("content")
    for block in content if isinstance(content, list) else ():
        found.add(block)
    structured = result.get("structuredContent")
    if not found.texts and structured is not None:
        found.texts.append(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    text = cap(_storable("\n".join(found.texts + found.notes)), limit)
    if result.get("isError") is True:
        raise ToolFailed(text or "the tool reported an error without saying what it was")
    return ToolResult(text=text, parts=tuple(found.parts))


class _Contents(Struct, kw_only=True):
    """What an answer's content blocks give: texts, images, and notes of what was left out."""

    server: str = ""
    texts: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, block: object) -> None:
        if not isinstance(block, Mapping):
            self.notes.append("[golem: the server sent a content block that is not an object; left out]")
            return
        kind = block.get("type")
        if kind == "text":
            self.texts.append(_text(block.get("text")))
        elif kind == "image":
            self.image(block.get("data"), block.get("mimeType"))
        elif kind == "resource":
            self.resource(block.get("resource"))
        elif kind == "resource_link":
            self.texts.append(self.link(block))
        elif kind == "audio":
            self.notes.append(f"[golem: audio ({_size(block.get('data'))}, {_text(block.get('mimeType'))}) left out: "
                              "golem sends only images from tool servers]")  # fmt: skip
        else:
            self.notes.append(f"[golem: content of type {_text(kind)!r} left out]")

    def link(self, block: Mapping[str, Any]) -> str:
        """A ``resource_link`` as a line naming it ``@SERVER:URI``: how it is opened (``/attach``
        by a person, ``read_resource`` by the model)."""
        label = " ".join(_text(block.get(k)) for k in ("name", "title", "mimeType") if block.get(k))
        uri = _text(block.get("uri"))
        where = f"@{self.server}:{uri}" if self.server else uri
        return f"[resource link: {where}{f' ({label})' if label else ''}]"

    def image(self, data: object, mime: object) -> None:
        problem = self._image_problem(data, mime)
        if problem:
            self.notes.append(f"[golem: {problem}]")
            return
        try:
            raw = base64.b64decode(_text(data), validate=True)
        except (binascii.Error, ValueError):
            self.notes.append("[golem: an image left out: its data is not valid base64]")
            return
        if not raw:
            self.notes.append("[golem: an empty image left out]")
            return
        self.parts.append(Part(kind="image", data=raw, media_type=_text(mime).lower()))

    def _image_problem(self, data: object, mime: object) -> str:
        if _text(mime).lower() not in IMAGE_TYPES:
            return f"an image of type {_text(mime)!r} left out: providers take PNG, JPEG, GIF and WebP"
        if not isinstance(data, str) or len(data) > (MAX_IMAGE_BYTES * 4) // 3 + 4:
            return f"an image ({_size(data)}) left out: larger than {MAX_IMAGE_BYTES:,} bytes"
        if len(self.parts) >= MAX_IMAGES:
            return f"an image left out: at most {MAX_IMAGES} images are sent per result"
        return ""

    def resource(self, resource: object) -> None:
        if not isinstance(resource, Mapping):
            self.notes.append("[golem: an embedded resource without contents left out]")
            return
        uri = _text(resource.get("uri"))
        if isinstance(resource.get("text"), str):
            self.texts.append(f"[resource: {uri}]\n{resource['text']}")
        elif _text(resource.get("mimeType")).lower() in IMAGE_TYPES:
            self.image(resource.get("blob"), resource.get("mimeType"))
        else:
            self.notes.append(f"[golem: resource {uri} ({_size(resource.get('blob'))}, "
                              f"{_text(resource.get('mimeType')) or 'binary'}) left out]")  # fmt: skip


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _storable(text: str) -> str:
    """``text`` with what UTF-8 cannot hold (lone surrogates) replaced, so it can be saved."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _size(data: object) -> str:
    length = len(data) * 3 // 4 if isinstance(data, str) else 0
    return f"about {length:,} bytes"
