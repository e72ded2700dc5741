"""What the index keeps of a messages file (its row's metadata, its words), from one lean decode.

A rebuild of the index decodes every messages file no sidecar describes (a store synced in from
elsewhere has none, and a rebuild writes none: docs/adr/0034-the-index-holds-what-a-rebuild-works-out.md),
so this decode is most of what a rebuild costs beyond reading the files. It is the codec's own
strict fast path (``decoded_fields`` in core/codec/history.py), stopped before it builds any
``Message``: the same files accepted, the same values read. Anything that path declines
(another spelling, a byte-order mark, broken JSON) or a file over ``LEAN_BYTES`` goes to the
careful reader (``meta.read_entry``), which reads what Go reads and words the problem.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from golem_cli.core.codec.history import args_from_raw, decoded_fields
from golem_cli.store.meta import ConversationMeta, derive_meta
from golem_cli.store.search import indexed_words

#: A larger file is read by the careful reader, a batch of messages at a time (ADR 0016).
LEAN_BYTES = 1 << 22


class Digest(NamedTuple):
    """A messages file's metadata as its bytes give it, and its words (``search.indexed_words``;
    empty when not asked for)."""

    meta: ConversationMeta
    words: str


def digest(cid: str, data: bytes, *, words: bool) -> Digest | None:
    """What the index keeps of conversation ``cid``'s messages file ``data``; None when the
    strict path would decline it (the caller reads it carefully)."""
    messages = _decode(data)
    if messages is None:
        return None
    meta = derive_meta(cid, messages, size=len(data))
    return Digest(meta, indexed_words(_texts(messages)) if words else "")


def words_of(data: bytes) -> tuple[int, str] | None:
    """How many messages ``data`` holds and their words, for a conversation whose row the index
    has already; None as for ``digest``."""
    messages = _decode(data)
    return None if messages is None else (len(messages), indexed_words(_texts(messages)))


def _decode(data: bytes) -> list[Any] | None:
    return None if len(data) > LEAN_BYTES else decoded_fields(data)


def _texts(messages: list[Any]) -> list[str]:
    """Every text a search looks at in ``messages`` (``search.message_text``'s pieces)."""
    out: list[str] = []
    for m in messages:
        out.append(m.content)
        for block in m.thinking:
            out.append(block.text)
        for call in m.tool_calls:
            out.append(call.name)
            out.append(args_from_raw(call.args))
    return out
