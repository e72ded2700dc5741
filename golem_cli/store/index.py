"""The listing index: a cache that makes ``golem list`` fast with thousands of conversations.

``index.json`` holds, per conversation, its metadata and the ``stat`` signature (mtime, size,
inode) of the messages file and of the sidecar it was built from, plus the modification time
of the conversations directory when it was built. Every save replaces files by rename, which
changes the directory's mtime, so one ``stat`` of the directory tells whether anything was
added, replaced or removed since. When it did, a refresh stats each file and re-reads only the
conversations whose signature changed. The index is never the truth: delete it and the next
listing rebuilds it from the conversation files (and their sidecars).

A refresh stats only the messages files: a save rewrites both files, so the messages file's
signature tells when to re-read an entry. What can change alone is the sidecar (a new title or
model); the rows a listing shows are re-checked against both files (``recheck``), so a
listing never shows a stale row, and files edited in place by other programs (which leave the
directory's mtime alone) are caught the same way.

Racy timestamps: a change made within the file system's timestamp granularity of the moment
the index was built could leave the directory mtime unchanged. An index built within
``RACY_SECONDS`` of the directory's last change (``RACY_SECONDS_COARSE`` on file systems with
whole-second timestamps) is therefore marked racy and refreshed again next time.

Write-through: golem's own changes (a save after every chat turn, a new title, a delete) run
inside ``changing``, which holds ``index.lock`` across the change so golem processes never
interleave there. When the index was fresh just before the change, the changed entry is
replaced in place and the directory's new mtime recorded, so the next listing does not stat
every file. What this gives up: a file another program writes within the same timestamp tick
as a golem save (milliseconds on a fine-grained file system; write-through is skipped on
whole-second ones) is not seen until the directory next changes; rows a listing shows are
still re-checked against their files.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from golem_cli.store.atomic import is_temp_file, remove_files, remove_stale_temp_files, write_atomic
from golem_cli.store.locks import exclusive
from golem_cli.store.meta import ConversationMeta, decode_meta, derive_meta

INDEX_VERSION = 1
RACY_SECONDS = 0.1
RACY_SECONDS_COARSE = 2.0
MESSAGES_SUFFIX = ".json"
META_SUFFIX = ".meta.json"
MAX_SIDECAR_BYTES = 1 << 20

Signature = tuple[int, int, int]  # (mtime_ns, size, inode)


class Entry(msgspec.Struct, array_like=True):
    """One conversation in the index. ``problem`` is non-empty when the messages file could
    not be read (``golem list`` marks the row and goes on)."""

    meta: ConversationMeta
    messages_sig: Signature
    sidecar_sig: Signature | None = None
    problem: str = ""


class IndexFile(msgspec.Struct):
    version: int
    dir_mtime_ns: int
    racy: bool
    entries: list[Entry]
    foreign: list[str] = []


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(IndexFile)


def signature(st: os.stat_result) -> Signature:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def read_index(path: Path) -> IndexFile | None:
    try:
        index = _decoder.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return index if index.version == INDEX_VERSION else None


def build_entry(directory: Path, cid: str, messages_sig: Signature, sidecar_sig: Signature | None) -> Entry:
    """Index entry for one conversation: from its sidecar when the sidecar describes the
    current messages file, otherwise derived from the messages (the sidecar's title and model
    are kept)."""
    sidecar = None
    if sidecar_sig is not None and sidecar_sig[1] <= MAX_SIDECAR_BYTES:
        try:
            sidecar = decode_meta((directory / f"{cid}{META_SUFFIX}").read_bytes())
        except OSError:
            sidecar = None
        if sidecar is not None and sidecar.id != cid:
            sidecar = None
    mtime = messages_sig[0] / 1e9
    if sidecar is not None and sidecar.size == messages_sig[1]:
        return Entry(sidecar, messages_sig, sidecar_sig)
    from golem_cli.core.codec import load_history
    from golem_cli.core.errors import HistoryFormatError

    try:
        data = (directory / f"{cid}{MESSAGES_SUFFIX}").read_bytes()
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


# One match per directory entry: a conversation's messages file or its sidecar.
_NAME = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.meta)?\.json\Z")


def scan(directory: Path) -> tuple[dict[str, Signature], set[str], list[str], list[str]]:
    """Stat every messages file of the conversations directory; sidecars are only noted.
    Returns (messages signatures, IDs with a sidecar, foreign names, temporary names).
    This loop is what a listing pays after any save, so it does one regex match per name."""
    messages: dict[str, Signature] = {}
    sidecars: set[str] = set()
    foreign: list[str] = []
    temps: list[str] = []
    match = _NAME.match
    try:
        it = os.scandir(directory)
    except FileNotFoundError:
        return messages, sidecars, foreign, temps
    with it:
        for item in it:
            name = item.name
            m = match(name)
            if m is None:
                (temps if is_temp_file(name) else foreign).append(name)
            elif m.group(2):
                sidecars.add(m.group(1))
            else:
                try:
                    if item.is_file(follow_symlinks=False):
                        st = item.stat(follow_symlinks=False)
                        messages[m.group(1)] = (st.st_mtime_ns, st.st_size, st.st_ino)
                    else:
                        foreign.append(name)
                except OSError:
                    continue  # removed while we looked
    return messages, sidecars, foreign, temps


def _sidecar_signature(directory: Path, cid: str) -> Signature | None:
    try:
        return signature(os.stat(directory / f"{cid}{META_SUFFIX}"))
    except FileNotFoundError:
        return None


def load_entries(directory: Path, index_path: Path) -> tuple[list[Entry], list[str]]:
    """All conversations (entries sorted by ID) and the names of foreign files, using the
    cached index when it is fresh and refreshing (and rewriting) it when it is not."""
    try:
        dir_mtime_ns = os.stat(directory).st_mtime_ns
    except FileNotFoundError:
        return [], []
    cached = read_index(index_path)
    if cached is not None and not cached.racy and cached.dir_mtime_ns == dir_mtime_ns:
        return cached.entries, cached.foreign
    checked_at = time.time_ns()
    messages, sidecars, foreign, temps = scan(directory)
    old = {e.meta.id: e for e in cached.entries} if cached is not None else {}
    entries = []
    for cid in sorted(messages):
        msig = messages[cid]
        prev = old.get(cid)
        if prev is not None and prev.messages_sig == msig and (prev.sidecar_sig is not None) == (cid in sidecars):
            entries.append(prev)
        else:
            ssig = _sidecar_signature(directory, cid) if cid in sidecars else None
            entries.append(build_entry(directory, cid, msig, ssig))
    orphans = [f"{cid}{META_SUFFIX}" for cid in sidecars if cid not in messages]
    if orphans:  # only an interrupted delete leaves a sidecar without its messages
        remove_files(directory, orphans)
    if temps:
        remove_stale_temp_files(directory, temps)
    window = RACY_SECONDS_COARSE if dir_mtime_ns % 1_000_000_000 == 0 else RACY_SECONDS
    racy = checked_at - dir_mtime_ns < window * 1e9
    index = IndexFile(INDEX_VERSION, dir_mtime_ns, racy, entries, sorted(foreign))
    try:
        write_atomic(index_path, _encoder.encode(index), durable=False)
    except OSError:
        pass  # a read-only store still lists; the next writable run caches
    return entries, index.foreign


def recheck(directory: Path, entry: Entry) -> Entry | None:
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
    return build_entry(directory, cid, msig, ssig)


@contextmanager
def changing(directory: Path, index_path: Path, cid: str) -> Iterator[None]:
    """Hold the index lock while conversation ``cid`` changes, then write the change through
    to the index if the index was fresh before it (see the module docstring)."""
    index_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with exclusive(index_path.with_suffix(".lock")):
        try:
            before: int | None = os.stat(directory).st_mtime_ns
        except FileNotFoundError:
            before = None
        yield
        if before is not None:
            try:
                _write_through(directory, index_path, cid, before)
            except OSError:
                pass  # the index is a cache: the next listing refreshes it


def _write_through(directory: Path, index_path: Path, cid: str, before: int) -> None:
    cached = read_index(index_path)
    if cached is None or cached.racy or cached.dir_mtime_ns != before:
        return  # it was stale already; the next listing refreshes it
    after = os.stat(directory).st_mtime_ns
    if after % 1_000_000_000 == 0:
        return  # whole-second timestamps cannot tell this change from a concurrent one
    entries = [e for e in cached.entries if e.meta.id != cid]
    try:
        msig = signature(os.stat(directory / f"{cid}{MESSAGES_SUFFIX}"))
    except FileNotFoundError:
        pass  # deleted: its entry is gone
    else:
        entries.append(build_entry(directory, cid, msig, _sidecar_signature(directory, cid)))
        entries.sort(key=lambda e: e.meta.id)
    index = IndexFile(INDEX_VERSION, after, False, entries, cached.foreign)
    write_atomic(index_path, _encoder.encode(index), durable=False)
