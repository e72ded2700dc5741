"""The text a search looks at in a message, and how the index keeps it.

Shared by the index (index.py), the file scan (textscan.py) and the matching (search.py), so
a search answered from the index and one answered from the files see the same text. Imports
nothing heavy: a search that reads files must not pay for the index's imports.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

#: Between the texts of one message (content, thinking blocks, tool names and arguments): a
#: search never matches across it.
SEPARATOR = "\x1e"
#: A message's FTS rowid is (conversation rowid << MESSAGE_BITS) | message index; messages past
#: 2**24 (16.7 million) in one conversation are not searchable.
MESSAGE_BITS = 24


def message_text(message: Message) -> str:
    """What a search looks at in one message, its pieces joined by ``SEPARATOR``. For a
    message read from a file, tool-call arguments are the file's own text; the index writes a
    save through with the arguments as the file holds them (``codec.as_saved``)."""
    pieces = [message.content]
    pieces.extend(block.text for block in message.thinking)
    for call in message.tool_calls:
        pieces.append(call.name)
        pieces.append(call.args)
    return SEPARATOR.join(piece for piece in pieces if piece) if len(pieces) > 1 else message.content


def indexed_text(text: str) -> tuple[str, str | None]:
    """(what the trigram index holds, the original when that differs).

    Matching ignores case by ``str.casefold`` (``ß`` matches ``ss``, ``ſ`` matches ``s``).
    SQLite folds case one character at a time, by its own table, so for text that is not
    ASCII the index holds the text already case-folded: every substring of the folded text
    is then found, whatever SQLite's table says. The original is kept beside it for the
    line a search prints. ASCII text is held as it is (SQLite folds ASCII exactly)."""
    if text.isascii():
        return text, None
    if _SURROGATE.search(text):  # only in memory: a file holds U+FFFD there (and SQLite refuses them)
        text = _SURROGATE.sub("\ufffd", text)
    return text.casefold(), text


_SURROGATE = re.compile("[\ud800-\udfff]")
