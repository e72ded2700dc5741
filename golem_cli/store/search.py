"""Finding conversations by what was said in them.

Conversation files are golem JSON, so a query is first looked for in the raw bytes, spelled
as the file spells it (Go escapes ``<`` ``>`` ``&`` and quotes; non-ASCII is raw UTF-8):
most files are ruled out without being decoded. Files that may match are decoded and their
messages' text searched case-insensitively, so a hit is always a real one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.core.messages import Message
    from golem_cli.store.meta import ConversationMeta
    from golem_cli.store.store import Store

SNIPPET = 70


@dataclass(frozen=True)
class Hit:
    meta: ConversationMeta
    message_index: int
    role: str
    snippet: str

    def to_json(self) -> dict[str, object]:
        return {"id": self.meta.id, "title": self.meta.display_title, "updated": self.meta.updated,
                "message_index": self.message_index, "role": self.role, "snippet": self.snippet}  # fmt: skip


def _prefilter(query: str) -> bytes | None:
    """The query as a golem file spells it (Go's escapes), ASCII-lowercased to match
    ``bytes.lower()`` of the file; None for a non-ASCII query, whose case can only be folded
    after decoding."""
    from golem_cli.core.gojson import go_quote

    if not query.isascii():
        return None
    return go_quote(query)[1:-1].lower().encode()


def _texts(message: Message) -> Iterator[str]:
    yield message.content
    for block in message.thinking:
        yield block.text
    for call in message.tool_calls:
        yield call.name
        yield call.args


def _snippet(text: str, at: int, length: int) -> str:
    start = max(0, at - SNIPPET // 2)
    piece = " ".join(text[start : start + SNIPPET + length].split())
    return ("…" if start else "") + piece + ("…" if start + SNIPPET + length < len(text) else "")


def search(store: Store, query: str, limit: int | None = None) -> list[Hit]:
    """The first matching message of each conversation, most recently updated first."""
    from golem_cli.core.codec import load_history
    from golem_cli.core.errors import HistoryFormatError

    needle = query.casefold()
    spelled = _prefilter(query)
    hits: list[Hit] = []
    for info in store.list():
        if limit is not None and len(hits) >= limit:
            break
        try:
            data = store.messages_path(info.id).read_bytes()
        except OSError:
            continue
        if spelled is not None and spelled not in data.lower():
            continue
        try:
            messages = load_history(data)
        except HistoryFormatError:
            continue
        hit = _first_hit(info.meta, messages, needle, len(query))
        if hit is not None:
            hits.append(hit)
    return hits


def _first_hit(meta: ConversationMeta, messages: Sequence[Message], needle: str, length: int) -> Hit | None:
    for index, message in enumerate(messages):
        for text in _texts(message):
            at = text.casefold().find(needle)
            if at >= 0:
                return Hit(meta, index, message.role, _snippet(text, at, length))
    return None
