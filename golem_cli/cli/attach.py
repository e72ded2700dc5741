"""Attachments: files and URLs turned into message parts for the next prompt.

A local file is sent inline (its bytes, base64 in the history file); an http(s) URL is sent as
a URL for the provider to fetch. The kind comes from the media type: images, PDF documents,
audio and video. Which kinds a provider accepts is the adapter's business (spec §9): an
unsupported one fails that turn with a clear error, and the prompt is still saved.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING

from golem_cli.cli.errors import InputError

if TYPE_CHECKING:
    from golem_cli.core.messages import Part

MAX_BYTES = 20 * 1024 * 1024  # larger than any provider accepts inline

_KINDS = {"image": "image", "audio": "audio", "video": "video"}


def kind_of(media_type: str) -> str | None:
    if media_type == "application/pdf":
        return "document"
    return _KINDS.get(media_type.partition("/")[0])


def part_from(source: str) -> Part:
    """The part for a path or an http(s) URL; ``InputError`` says what is wrong with it."""
    from golem_cli.core.messages import Part

    media_type = mimetypes.guess_type(source)[0] or ""
    if source.startswith(("http://", "https://")):
        return Part(kind_of(media_type) or "image", url=source)
    path = Path(source).expanduser()
    kind = kind_of(media_type)
    if kind is None:
        raise InputError(f"{source}: cannot attach {media_type or 'a file of unknown type'}; "
                         "attach images, PDF documents, audio or video")  # fmt: skip
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise InputError(f"{source}: {size // 2**20} MB is too large to attach (at most {MAX_BYTES // 2**20} MB)")
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{source}: is a directory") from None
    except PermissionError:
        raise InputError(f"{source}: permission denied") from None
    return Part(kind, data=data, media_type=media_type)


def describe(part: Part) -> str:
    """``cat.png (image/png, 34 KB)`` for people."""
    if part.url:
        return f"{part.url} ({part.kind} by URL)"
    return f"{part.kind} ({part.media_type}, {max(1, len(part.data) // 1024)} KB)"
