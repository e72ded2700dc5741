"""Attachments: files and URLs for the next prompt.

A local image, PDF, audio or video file is sent inline (its bytes, base64 in the history file);
an http(s) URL is sent as a URL when the chosen provider can fetch that kind itself, and
otherwise downloaded by golem first (``fetch_for``, at most ``MAX_BYTES``) and sent inline. A
text file (source code, notes, JSON…) is not a media part at all: its text goes into the prompt,
framed with its name (``with_files``). What a provider cannot carry even inline (video on
OpenAI) fails that turn with a clear error, and the prompt is still saved.
"""

from __future__ import annotations

import mimetypes
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Union

from msgspec import Struct

from golem_cli.cli.errors import InputError

if TYPE_CHECKING:
    from golem_cli.core.messages import Part

MAX_BYTES = 20 * 1024 * 1024  # larger than any provider accepts inline
_OTHER_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")  # ftp://, file://, s3://: a URL, not a file name

_KINDS = {"image": "image", "audio": "audio", "video": "video"}
#: Media types that are text although not ``text/*``.
_TEXT_TYPES = {
    "application/json", "application/xml", "application/javascript", "application/x-sh", "application/toml",
    "application/x-yaml", "application/yaml", "application/sql", "application/x-python", "application/ld+json",
}  # fmt: skip


class TextFile(Struct, frozen=True):
    """A text attachment: it travels inside the prompt, with its name."""

    name: str
    text: str


Attachment = Union["Part", TextFile]


def kind_of(media_type: str) -> str | None:
    if media_type == "application/pdf":
        return "document"
    return _KINDS.get(media_type.partition("/")[0])


def _is_text_type(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type in _TEXT_TYPES or media_type.endswith(("+json", "+xml"))


def part_from(source: str) -> Attachment:
    """The attachment for a path or an http(s) URL; ``InputError`` says what is wrong with it."""
    from golem_cli.core.messages import Part

    media_type = mimetypes.guess_type(source)[0] or ""
    if source.startswith(("http://", "https://")):
        by_url = "document" if _is_text_type(media_type) else kind_of(media_type) or "image"
        return Part(by_url, url=source, media_type=media_type)
    path = Path(source).expanduser()
    if _OTHER_URL.match(source) and not os.path.lexists(path):  # not "no such file"
        raise InputError(f"{source}: only http(s) URLs can be attached; download it and attach the file")
    data = _read(source, path)
    kind = kind_of(media_type)
    if kind is None:
        text = text_of(data, media_type)
        if text is None:
            raise InputError(f"{source}: cannot attach {media_type or 'a binary file of unknown type'}; "
                             "attach text files, images, PDF documents, audio or video")  # fmt: skip
        return TextFile(path.name, text)
    return Part(kind, data=data, media_type=media_type)


def _read(source: str, path: Path) -> bytes:
    """The file's bytes: a regular file once links are resolved, at most ``MAX_BYTES`` of them
    whatever ``stat`` says. A device (a link to ``/dev/zero`` never ends), a FIFO (reading it
    waits forever), a socket, a directory and the files of ``/proc`` and ``/sys`` (which
    look regular; ``/proc/self/environ`` holds the API keys) are refused at once."""
    from golem_cli.store.files import UnreadableFile, read_with_stat

    try:
        return read_with_stat(path, MAX_BYTES, what="a file golem attaches")[0]
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except PermissionError:
        raise InputError(f"{source}: permission denied") from None
    except UnreadableFile as e:
        if e.too_large:
            size = e.stat.st_size if e.stat is not None and e.stat.st_size > MAX_BYTES else None
            shown = f"{size / 2**20:,.1f} MB" if size is not None else f"more than {MAX_BYTES // 2**20} MB"
            raise InputError(f"{source}: {shown} is too large to attach (at most {MAX_BYTES // 2**20} MB)") from None
        raise InputError(f"{e}{_link_note(path)}") from None
    except OSError as e:
        raise InputError(f"{source}: cannot read it: {e.strerror or e}") from None


def _link_note(path: Path) -> str:
    """`` (a link to /dev/zero)`` when ``path`` is a symlink: what it really names."""
    if not path.is_symlink():
        return ""
    import os

    return f" (a link to {os.path.realpath(path)})"


def text_of(data: bytes, media_type: str) -> str | None:
    """The text of a file that is text: a text media type, or (type unknown) UTF-8 without NULs."""
    if media_type and not _is_text_type(media_type):
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def fetch_for(model: object, attachments: list[Attachment]) -> list[Attachment]:
    """``attachments`` as ``model`` can take them: a URL part of a kind it cannot fetch itself
    is downloaded (at most ``MAX_BYTES``) and becomes inline bytes, or a ``TextFile``."""
    from golem_cli.core.messages import Part

    accepts = getattr(model, "accepts_url", None)
    out: list[Attachment] = []
    for item in attachments:
        if isinstance(item, Part) and item.url and accepts is not None and not accepts(item.kind, item.media_type):
            out.append(_downloaded(item.url))
        else:
            out.append(item)
    return out


def _downloaded(url: str) -> Attachment:
    from golem_cli.core.messages import Part
    from golem_cli.providers.download import download

    got = download(url, MAX_BYTES)
    media_type = got.media_type or mimetypes.guess_type(got.name)[0] or ""
    kind = kind_of(media_type)
    if kind is not None:
        return Part(kind, data=got.data, media_type=media_type)
    text = text_of(got.data, media_type)
    if text is None:
        raise InputError(f"{url}: cannot attach {media_type or 'a binary file of unknown type'}")
    return TextFile(got.name, text)


def split(attachments: list[Attachment]) -> tuple[list[Part], list[TextFile]]:
    """(media parts, text files)."""
    files = [a for a in attachments if isinstance(a, TextFile)]
    return [a for a in attachments if not isinstance(a, TextFile)], files


def with_files(prompt: str, files: list[TextFile]) -> str:
    """The prompt followed by each text file, framed with its name so the model can tell the
    files from the question and from each other."""
    blocks = [f'<file name="{f.name}">\n{f.text.rstrip(chr(10))}\n</file>' for f in files]
    return "\n\n".join([prompt, *blocks] if prompt else blocks)


def describe(item: Attachment) -> str:
    """``cat.png (image/png, 34 KB)`` for people."""
    if isinstance(item, TextFile):
        return f"{item.name} (text, {size_words(len(item.text.encode()))})"
    if item.url:
        return f"{item.url} ({item.kind} by URL)"
    return f"{item.kind} ({item.media_type}, {size_words(len(item.data))})"


def size_words(size: int) -> str:
    """A size as people say it: ``38 bytes``, ``12 KB``, ``3.4 MB`` (a 38-byte file is not 1 KB)."""
    if size < 1024:
        return f"{size} byte" if size == 1 else f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size // 1024} KB"
    return f"{size / (1024 * 1024):.1f} MB"
