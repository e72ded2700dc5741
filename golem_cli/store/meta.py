"""What the store knows about a conversation beyond its messages.

The metadata lives in a sidecar, ``<id>.meta.json``, beside the messages file and is written
after it on every save. The messages file is the truth: the sidecar records the size of the
messages file it describes, so a sidecar left stale by a crash between the two writes (or lost
altogether) is detected and the metadata is derived again from the messages alone:

- message count, and the summary (the first line of the first user message);
- created: the time inside the UUIDv7 ID; updated: the file's modification time;
- fork lineage: copied messages keep the parent's ``conversationId`` stamps, so the parent is
  the last foreign conversation ID before the first message stamped with this conversation's
  own ID, and the fork point is the index of that first own message.

Only what a user chose and no message records cannot be derived: an explicit title and the
model. Those survive in the sidecar, which is kept even when its counts are stale.
"""

from __future__ import annotations

import msgspec

from golem_cli.core.history.numbering import numbered
from golem_cli.core.ids import id_time_ms
from golem_cli.core.messages import USER, Message

SUMMARY_LENGTH = 80


class ConversationMeta(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The sidecar's content. Times are Unix seconds; ``fork_at`` is -1 when not a fork."""

    id: str
    title: str = ""
    model: str = ""
    created: float = 0.0
    updated: float = 0.0
    parent: str = ""
    fork_at: int = -1
    messages: int = 0
    size: int = -1  # bytes of the messages file this metadata describes
    summary: str = ""

    @property
    def display_title(self) -> str:
        """The user's title, else the start of the first prompt."""
        return self.title or self.summary


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ConversationMeta)


def encode_meta(meta: ConversationMeta) -> bytes:
    return _encoder.encode(meta)


def decode_meta(data: bytes) -> ConversationMeta | None:
    """The sidecar's metadata, or None when it is not a readable sidecar."""
    try:
        return _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def summarize(messages: list[Message]) -> str:
    """The first line of the first non-empty user message, shortened for a listing."""
    for m in messages:
        if m.role == USER and m.content.strip():
            line = m.content.strip().splitlines()[0].strip()
            return line if len(line) <= SUMMARY_LENGTH else line[: SUMMARY_LENGTH - 1] + "…"
    return ""


def derive_lineage(cid: str, messages: list[Message]) -> tuple[str, int]:
    """(parent ID, fork point) read from the messages' conversation stamps, or ("", -1). The
    fork point counts the copied messages as ``golem show`` numbers them, as ``Store.fork``."""
    parent, index = _lineage(cid, messages)
    return (parent, numbered(messages[:index])) if parent else (parent, index)


def _lineage(cid: str, messages: list[Message]) -> tuple[str, int]:
    parent = ""
    for index, m in enumerate(messages):
        stamp = m.conversation_id
        if stamp == cid:
            return (parent, index) if parent else ("", -1)
        if stamp:
            parent = stamp
    return (parent, len(messages)) if parent else ("", -1)


def created_time(cid: str, fallback: float) -> float:
    millis = id_time_ms(cid)
    return millis / 1000 if millis is not None else fallback


def derive_meta(cid: str, messages: list[Message], *, size: int, mtime: float) -> ConversationMeta:
    """Metadata from the messages file alone (no title, no model: nothing records them)."""
    parent, fork_at = derive_lineage(cid, messages)
    return ConversationMeta(
        id=cid,
        created=created_time(cid, mtime),
        updated=mtime,
        parent=parent,
        fork_at=fork_at,
        messages=len(messages),
        size=size,
        summary=summarize(messages),
    )


def refresh_meta(
    old: ConversationMeta | None, cid: str, messages: list[Message], *, size: int, now: float
) -> ConversationMeta:
    """The sidecar to write after saving ``messages``: the user's choices from ``old``, the
    counts from the messages."""
    if old is None:
        old = ConversationMeta(id=cid, created=created_time(cid, now))
    return msgspec.structs.replace(
        old, id=cid, updated=now, messages=len(messages), size=size, summary=summarize(messages)
    )
