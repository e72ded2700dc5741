"""What the store knows about a conversation beyond its messages.

The metadata lives in a sidecar, ``<id>.meta.json`` (the ``meta`` document of ``store/sidecars``),
beside the messages file and is written after it on every save. The messages file is the truth:
the sidecar records the size of the messages file it describes, so a sidecar left stale by a
crash between the two writes (or lost altogether) is detected and the metadata is derived again from the messages alone:

- message count, and the summary (the first line of the first user message);
- created: the time inside the UUIDv7 ID; updated: the UUIDv7 time of the newest run ID among
  the messages (never a file time: another machine's clock or a copy sets those);
- fork lineage: copied messages keep the parent's ``conversationId`` stamps, so the parent is
  the last foreign conversation ID before the first message stamped with this conversation's
  own ID, and the fork point is the index of that first own message.

Only what a user chose and no message records cannot be derived: an explicit title, the
model and the chat's settings (``ChatSettings``). Those survive in the sidecar, which is kept
even when its counts are stale.

An ``Entry`` is one conversation as the index knows it: its metadata, worked out from its files
(``build_entry``), and the ``stat`` signatures of those files, by which the index tells that
they changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

import msgspec

from golem_cli.core.ids import id_time_ms
from golem_cli.core.messages import SYSTEM, USER, Message
from golem_cli.store.files import MAX_HISTORY_BYTES, MESSAGES_SUFFIX, META_SUFFIX, read_regular, read_with_stat
from golem_cli.store.sidecars import VERSION

SUMMARY_LENGTH = 80


class ChatSettings(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How a chat was set up beyond its model (issue 24 bug 3), restored by ``resume``, ``fork``
    and ``ask -c`` under the command line's flags and over the config. Read from disk, so every
    value is checked again where it is used (cli/restore.py); None and empty mean "as the
    config says" (``context_tokens`` 0: a message window, whatever the config's budget)."""

    tools: list[str] = []  # the names that enabled tools (-T, /tools enable), as typed
    off: list[str] = []  # tools the person disabled (/tools disable)
    options: dict[str, int | float | str | list[str]] = {}  # -o and /option values
    max_messages: int | None = None
    context_tokens: int | None = None
    trim_stride: int | None = None
    system: str = ""  # where the system prompt came from: "-s" or "/system"
    summarize_trimmed: bool = False  # rolling summaries turned on by --summarize-trimmed (the config's are read again)


class ConversationMeta(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The sidecar's content. Times are Unix seconds; ``fork_at`` is -1 when not a fork.
    ``v`` is the sidecar format (``sidecars.VERSION``; sidecars written before it was recorded
    have none and are version 1); ``changed`` is when a chosen field (``CHOSEN``) last
    changed, by which an outside change to the same field is decided (``merge_meta``)."""

    v: int = VERSION
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
    changed: float = 0.0
    settings: ChatSettings | None = None

    @property
    def display_title(self) -> str:
        """The user's title, else the start of the first prompt."""
        return self.title or self.summary


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ConversationMeta)


def encode_meta(meta: ConversationMeta) -> bytes:
    """The sidecar's bytes, always stamped with this golem's format version (which, being the
    default, the encoder leaves out: it is put first by hand)."""
    data = _encoder.encode(meta if meta.v == VERSION else msgspec.structs.replace(meta, v=VERSION))
    return b'{"v":%d,' % VERSION + data[1:]


def decode_meta(data: bytes) -> ConversationMeta | None:
    """The sidecar's metadata, or None when it is not a readable sidecar (or one of a newer
    format than this golem reads: the metadata is then worked out from the messages)."""
    try:
        meta = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return meta if meta.v <= VERSION else None


#: What a person chose (no message records it): kept from the sidecar when the rest is derived
#: again, and merged field by field when another program changed the sidecar (``merge_meta``).
#: A new chosen field (a chat setting) is added to the struct and named here.
CHOSEN = ("title", "model", "parent", "fork_at", "settings")


def chosen_changes(old: ConversationMeta, new: ConversationMeta) -> list[str]:
    """The chosen fields that differ between two versions of one sidecar."""
    return [name for name in CHOSEN if getattr(old, name) != getattr(new, name)]


def merge_meta(
    base: ConversationMeta, ours: ConversationMeta, theirs: ConversationMeta
) -> tuple[ConversationMeta, list[str]]:
    """The sidecar to write when ``theirs`` replaced ``base`` (the one this process read) while
    this process made ``ours`` from it: derived fields are ours (they describe the history file
    this process just wrote, or are recomputed); for each chosen field, one only they changed is
    theirs, one both changed to different values is the newest by ``changed``. Also the chosen
    fields where theirs was overruled or kept over ours (the caller says so)."""
    ours_newer = ours.changed >= theirs.changed
    merged = ours
    decided: list[str] = []
    mine = set(chosen_changes(base, ours))
    for name in chosen_changes(base, theirs):
        if getattr(ours, name) == getattr(theirs, name):
            continue
        if name in mine:
            decided.append(name)
            if ours_newer:
                continue
        merged = msgspec.structs.replace(merged, **{name: getattr(theirs, name)})
    changed = max(ours.changed, theirs.changed)
    return msgspec.structs.replace(merged, changed=changed), decided


class Said(Protocol):
    """What the metadata is worked out from: a ``Message``, or the lean decoding of one that a
    rebuild makes (digest.py)."""

    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def conversation_id(self) -> str: ...


def summarize(messages: Sequence[Said]) -> str:
    """The first line of the first non-empty user message, shortened for a listing."""
    for m in messages:
        if m.role == USER and m.content.strip():
            line = m.content.strip().splitlines()[0].strip()
            return line if len(line) <= SUMMARY_LENGTH else line[: SUMMARY_LENGTH - 1] + "…"
    return ""


def derive_lineage(cid: str, messages: Sequence[Said]) -> tuple[str, int]:
    """(parent ID, fork point) read from the messages' conversation stamps, or ("", -1). The
    fork point counts the copied messages as ``golem show`` numbers them (system messages
    aside, as ``numbering.numbered``), as ``Store.fork``."""
    parent, index = _lineage(cid, messages)
    return (parent, sum(m.role != SYSTEM for m in messages[:index])) if parent else (parent, index)


def _lineage(cid: str, messages: Sequence[Said]) -> tuple[str, int]:
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


def last_message_time(cid: str, messages: Sequence[Said]) -> float:
    """When the conversation last changed, as its messages say: the UUIDv7 time of the newest
    run ID, else of the conversation's ID; never a file's time, which another machine's clock
    or a copy sets (issue 25 item 3)."""
    for m in reversed(messages):
        millis = id_time_ms(m.run_id) if m.run_id else None
        if millis is not None:
            return millis / 1000
    return created_time(cid, 0.0)


def derive_meta(cid: str, messages: Sequence[Said], *, size: int) -> ConversationMeta:
    """Metadata from the messages file alone (no title, no model: nothing records them)."""
    parent, fork_at = derive_lineage(cid, messages)
    return ConversationMeta(
        id=cid,
        created=created_time(cid, 0.0),
        updated=last_message_time(cid, messages),
        parent=parent,
        fork_at=fork_at,
        messages=len(messages),
        size=size,
        summary=summarize(messages),
    )


def refresh_meta(
    old: ConversationMeta | None, cid: str, messages: Sequence[Message], *, size: int, now: float
) -> ConversationMeta:
    """The sidecar to write after saving ``messages``: the user's choices from ``old``, the
    counts from the messages."""
    if old is None:
        old = ConversationMeta(id=cid, created=created_time(cid, now))
    return msgspec.structs.replace(
        old, id=cid, updated=now, messages=len(messages), size=size, summary=summarize(messages)
    )


# --- the metadata of a conversation from its files -------------------------------------------

MAX_SIDECAR_BYTES = 1 << 20

Signature = tuple[int, int, int]  # (mtime_ns, size, inode)


class Entry(msgspec.Struct):
    """One conversation as the index knows it. ``problem`` is non-empty when the messages file
    could not be read (``golem list`` marks the row and goes on)."""

    meta: ConversationMeta
    messages_sig: Signature
    sidecar_sig: Signature | None = None
    problem: str = ""


def signature(st: os.stat_result) -> Signature:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def sig_text(sig: Signature | None) -> str | None:
    """A signature as the index stores it."""
    return None if sig is None else f"{sig[0]}:{sig[1]}:{sig[2]}"


def sig_of(text: str | None) -> Signature | None:
    """A signature from the index's text."""
    if text is None:
        return None
    a, b, c = text.split(":")
    return (int(a), int(b), int(c))


def read_sidecar(directory: Path, cid: str) -> tuple[ConversationMeta | None, Signature | None]:
    """The sidecar's metadata (None when missing or unreadable) and its signature (None when
    missing). One open and ``fstat``: this runs once per conversation when the index is rebuilt."""
    try:
        data, st = read_with_stat(f"{directory}{os.sep}{cid}{META_SUFFIX}", MAX_SIDECAR_BYTES)
    except FileNotFoundError:
        return None, None
    except OSError as e:
        found: os.stat_result | None = getattr(e, "stat", None)
        return None, signature(found) if found is not None else None
    meta = decode_meta(data)
    return (meta if meta is not None and meta.id == cid else None), signature(st)


class Decoded(NamedTuple):
    """A messages file's bytes and the messages they hold."""

    data: bytes
    messages: list[Message]


def read_messages(directory: Path, cid: str, *, limit: int = MAX_HISTORY_BYTES) -> Decoded:
    """The messages file of ``cid``, read carefully (``files.read_regular``) and decoded.
    Raises ``OSError`` or ``HistoryFormatError`` (``problem_text`` words them)."""
    from golem_cli.core.codec.history import load_history  # the codec only when a file is decoded

    data = read_regular(directory / f"{cid}{MESSAGES_SUFFIX}", limit, follow=False)
    return Decoded(data, load_history(data))


def problem_text(e: Exception) -> str:
    """What the index records of a file it cannot read, and what a listing prints."""
    return getattr(e, "strerror", None) or str(e)


def read_entry(
    directory: Path, cid: str, messages_sig: Signature, *, limit: int = MAX_HISTORY_BYTES, sidecar: bool = True
) -> tuple[Entry, Decoded | None]:
    """Index entry for one conversation: from its sidecar when the sidecar describes the
    current messages file, otherwise worked out from the messages (the sidecar's title, model
    and lineage kept). The messages come with it when they were decoded for it. ``sidecar``
    False: the caller knows there is none (a rebuild has just listed the directory)."""
    meta, sidecar_sig = read_sidecar(directory, cid) if sidecar else (None, None)
    if meta is not None and meta.size == messages_sig[1]:
        return Entry(meta, messages_sig, sidecar_sig), None
    from golem_cli.core.errors import HistoryFormatError

    try:
        decoded = read_messages(directory, cid, limit=limit)
    except (OSError, HistoryFormatError) as e:
        known = meta or ConversationMeta(id=cid, created=created_time(cid, 0.0), updated=created_time(cid, 0.0))
        return Entry(known, messages_sig, sidecar_sig, problem_text(e)), None
    return Entry(_worked_out(cid, decoded, meta), messages_sig, sidecar_sig), decoded


def _worked_out(cid: str, decoded: Decoded, sidecar: ConversationMeta | None) -> ConversationMeta:
    """The metadata derived from the messages, with what a stale sidecar knows that they do not."""
    meta = derive_meta(cid, decoded.messages, size=len(decoded.data))
    if sidecar is not None:
        meta = msgspec.structs.replace(
            meta,
            title=sidecar.title,
            model=sidecar.model,
            settings=sidecar.settings,
            created=sidecar.created or meta.created,
            changed=sidecar.changed,
        )
        if sidecar.parent:
            meta = msgspec.structs.replace(meta, parent=sidecar.parent, fork_at=sidecar.fork_at)
    return meta


def build_entry(directory: Path, cid: str, messages_sig: Signature, *, limit: int = MAX_HISTORY_BYTES) -> Entry:
    """``read_entry`` without the messages."""
    return read_entry(directory, cid, messages_sig, limit=limit)[0]


def _sidecar_signature(directory: Path, cid: str) -> Signature | None:
    try:
        return signature(os.stat(directory / f"{cid}{META_SUFFIX}"))
    except FileNotFoundError:
        return None


def recheck(directory: Path, entry: Entry, *, limit: int = MAX_HISTORY_BYTES) -> Entry | None:
    """The entry for a row about to be shown, re-read if its files changed behind the
    index's back; None when the conversation is gone."""
    cid = entry.meta.id
    try:
        msig = signature(os.stat(directory / f"{cid}{MESSAGES_SUFFIX}"))
    except FileNotFoundError:
        return None
    ssig = _sidecar_signature(directory, cid)
    if msig == entry.messages_sig and ssig == entry.sidecar_sig:
        return entry
    return build_entry(directory, cid, msig, limit=limit)
