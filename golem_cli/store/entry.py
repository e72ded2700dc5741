"""One conversation's entry in a listing: its metadata and the signatures of its files, read
from the files themselves (the index stores these; a search without the index reads them for
the conversations it may show). Imports no SQLite."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from golem_cli.store.files import MAX_HISTORY_BYTES, read_regular, read_with_stat
from golem_cli.store.layout import MESSAGES_SUFFIX, META_SUFFIX
from golem_cli.store.meta import ConversationMeta, decode_meta, derive_meta

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


def build_entry(directory: Path, cid: str, messages_sig: Signature, *, limit: int = MAX_HISTORY_BYTES) -> Entry:
    """Index entry for one conversation: from its sidecar when the sidecar describes the
    current messages file, otherwise derived from the messages (the sidecar's title and model
    are kept)."""
    sidecar, sidecar_sig = read_sidecar(directory, cid)
    mtime = messages_sig[0] / 1e9
    if sidecar is not None and sidecar.size == messages_sig[1]:
        return Entry(sidecar, messages_sig, sidecar_sig)
    from golem_cli.core.codec.history import load_history
    from golem_cli.core.errors import HistoryFormatError

    try:
        data = read_regular(directory / f"{cid}{MESSAGES_SUFFIX}", limit, follow=False)
        messages = load_history(data)
    except (OSError, HistoryFormatError) as e:
        problem = getattr(e, "strerror", None) or str(e)
        meta = sidecar or ConversationMeta(id=cid, updated=mtime)
        return Entry(msgspec.structs.replace(meta, updated=mtime), messages_sig, sidecar_sig, problem)
    meta = derive_meta(cid, messages, size=len(data), mtime=mtime)
    if sidecar is not None:
        meta = msgspec.structs.replace(
            meta, title=sidecar.title, model=sidecar.model, created=sidecar.created or meta.created
        )
        if sidecar.parent:
            meta = msgspec.structs.replace(meta, parent=sidecar.parent, fork_at=sidecar.fork_at)
    return Entry(meta, messages_sig, sidecar_sig)


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
