"""The conversation store: one JSON file per conversation, named by its ID.

Layout under the data directory (``GOLEM_HOME`` or the platform's user data directory)::

    conversations/<id>.json        the messages: dump_history(messages), Go-readable (a save that
                                   appends to bytes it loaded keeps them: saving.py)
    conversations/<id>.meta.json   title, model, times, lineage, counts (see meta.py)
    locks/<id>.lock                present while a process holds the conversation open
    backups/<id>.<time>.json       copies kept by `golem normalize --in-place`
    trash/<id>.json, .meta.json    deleted conversations, restorable for TRASH_DAYS days
    index.sqlite                   the index for list and search (see index.py); safe to delete

Every write is atomic (atomic.py) and happens under the conversation's lock (locks.py): a
process that holds the lock (the REPL, for the whole session) writes freely; any other
process's write is refused with ``ConversationLocked`` naming the holder. Reads need no lock:
a rename never exposes a half-written file.

Typical use by a chat session::

    store = Store(data_dir())        # the caller picks the root (the CLI: config.paths)
    cid = store.create(model="openai:gpt-4o-mini", hold=True)   # new ID, locked for us
    history = store.load(cid)
    ...
    store.save(cid, history)            # after every turn
    store.release(cid)                  # or use ``with store.lock(cid):``
"""

from __future__ import annotations

import builtins
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from golem_cli.store.atomic import ensure_private_dir, fsync_dir, write_atomic
from golem_cli.store.errors import (
    ConversationExists,
    ConversationLocked,
    ConversationNotFound,
    CorruptConversation,
    ForkPointOutOfRange,
    InvalidReference,
    StoreError,
)
from golem_cli.store.files import (
    CONVERSATIONS_DIR,
    INDEX_NAME,
    MAX_HISTORY_BYTES,
    MESSAGES_SUFFIX,
    META_SUFFIX,
    UnreadableFile,
    read_pieces,
    read_regular,
    refuse_special,
)
from golem_cli.store.refs import (
    ID_LENGTH,
    LAST,
    is_conversation_id,
    match_reference,
    parse_reference,
    unique_prefix_among,
)
from golem_cli.store.saving import LoadBackCheck

if TYPE_CHECKING:
    from golem_cli.core.messages import Message
    from golem_cli.store.index import Index
    from golem_cli.store.locks import FileLock, LockHolder
    from golem_cli.store.meta import ConversationMeta
    from golem_cli.store.refresh import Progress
    from golem_cli.store.saving import KnownMessages
    from golem_cli.store.search import Found


TRASH_DAYS = 30  # how long a deleted conversation can be restored


@dataclass(frozen=True)
class ConversationInfo:
    """A conversation as listed: its metadata, and ``problem`` when its file is unreadable."""

    meta: ConversationMeta
    problem: str = ""

    @property
    def id(self) -> str:
        return self.meta.id


@dataclass(frozen=True)
class Listing:
    """``Store.listing()``: conversations newest first, how many are stored, the IDs next to
    each listed one in ID order (sorted; what unique short IDs need, without every ID), and
    the names of files in the conversations directory that are not conversations."""

    conversations: list[ConversationInfo]
    total: int
    neighbours: list[str]
    foreign: list[str]


class Store:
    """The conversations under ``root``, which the caller chooses (the CLI passes golem's data
    directory from ``config.paths``: the store and the configuration are siblings)."""

    def __init__(
        self, root: Path | str, *, max_history_bytes: int = MAX_HISTORY_BYTES, progress: Progress | None = None
    ) -> None:
        self.root = Path(root)
        #: a conversation file larger than this is refused rather than read (issue 8)
        self.max_history_bytes = max_history_bytes
        #: told how bringing the index up to date is going, when that reads files (refresh.py)
        self.progress = progress
        self.conversations_dir = self.root / CONVERSATIONS_DIR
        self.locks_dir = self.root / "locks"
        self.backups_dir = self.root / "backups"
        self.trash_dir = self.root / "trash"
        self.index_path = self.root / INDEX_NAME
        self._index: Index | None = None
        self._loads_back = LoadBackCheck()
        self._known_messages: KnownMessages | None = None

    @property
    def index(self) -> Index:
        """The index for listing and search (index.py), opened on first use: a command that
        never needs it (``show``, ``export``) never imports SQLite."""
        if self._index is None:
            from golem_cli.store.index import Index

            self._index = Index(
                self.conversations_dir,
                self.index_path,
                limit=self.max_history_bytes,
                locks_dir=self.locks_dir,
                progress=self.progress,
            )
        return self._index

    @property
    def _known(self) -> KnownMessages:
        """The bytes last loaded or saved and their messages (saving.py), for a save that
        appends to them; made on first use (it imports the message types)."""
        if self._known_messages is None:
            from golem_cli.store.saving import KnownMessages

            self._known_messages = KnownMessages()
        return self._known_messages

    # --- names -----------------------------------------------------------------------------

    def messages_path(self, cid: str) -> Path:
        """The messages file of a conversation (the ID is checked: no path escapes)."""
        return self.conversations_dir / f"{_checked(cid)}{MESSAGES_SUFFIX}"

    def meta_path(self, cid: str) -> Path:
        return self.conversations_dir / f"{_checked(cid)}{META_SUFFIX}"

    def lock_path(self, cid: str) -> Path:
        return self.locks_dir / f"{_checked(cid)}.lock"

    def exists(self, cid: str) -> bool:
        return self.messages_path(cid).is_file()

    def resolve(self, ref: str) -> str:
        """The full ID for what a user typed: an ID, a unique prefix or tail of one, or
        ``last`` (most recently updated). Text that cannot be an ID is refused before the file
        system is touched (``InvalidReference``); otherwise ``ConversationNotFound`` or
        ``AmbiguousReference`` (which lists the candidates)."""
        text = parse_reference(ref)
        if text == LAST:
            newest = self.list(limit=1)
            if not newest:
                raise ConversationNotFound("there are no conversations yet (start one with `golem chat`)")
            return newest[0].id
        if len(text) == ID_LENGTH and self.exists(text):
            return text
        return match_reference(text, self._ids())

    def unique_prefixes(self, cids: Iterable[str]) -> dict[str, int]:
        """For each ID, how many leading characters tell it apart from every other stored ID
        (what the CLI highlights)."""
        from golem_cli.store.schema import current_neighbours

        wanted = list(cids)
        # From the index (not every ID of a large store); read directly when it is current,
        # so a new chat's banner does not wait for the codec the index imports.
        ids = current_neighbours(self.index_path, self.conversations_dir, wanted)
        if ids is None:
            ids = self.index.neighbours(wanted)
        return {cid: unique_prefix_among(ids, cid) for cid in wanted}

    def _ids(self) -> list[str]:
        try:
            names = os.listdir(self.conversations_dir)
        except FileNotFoundError:
            return []
        n = len(MESSAGES_SUFFIX)
        return [
            name[:-n]
            for name in names
            if name.endswith(MESSAGES_SUFFIX) and not name.endswith(META_SUFFIX) and is_conversation_id(name[:-n])
        ]

    # --- reading ---------------------------------------------------------------------------

    def load(self, cid: str) -> list[Message]:
        """The conversation's messages. ``CorruptConversation`` if the file is not a history."""
        data, messages, fast = self._read_whole(cid)
        self._loads_back.remember(data)  # the next save, a turn more, decodes only that turn
        if fast:  # ... and encodes only that turn
            self._known.remember(data, messages)
        else:  # foreign spellings: the next save rewrites the file as golem writes it
            self._known.forget()
        return messages

    def _read_whole(self, cid: str) -> tuple[bytes, list[Message], bool]:
        """The file's bytes, its messages, and whether the strict fast path read them."""
        from golem_cli.core.codec.history import read_history
        from golem_cli.core.errors import HistoryFormatError

        path = self.messages_path(cid)
        try:
            data = read_regular(path, self.max_history_bytes, follow=False)
        except FileNotFoundError:
            raise ConversationNotFound(f"no conversation {cid}") from None
        except UnreadableFile as e:
            raise CorruptConversation(cid, path, str(e), salvageable=False) from None
        try:
            messages, fast = read_history(data)
        except HistoryFormatError as e:
            raise CorruptConversation(cid, path, str(e)) from None
        return data, messages, fast

    def read(self, cid: str) -> list[Message]:
        """The conversation's messages for a command that will not save them (``show``,
        ``export``): ``load`` without remembering the file's bytes for the next save's checks,
        so they are decoded a batch at a time as the file is read and never all held beside
        the messages (ADR 0016). The same errors as ``load``."""
        from contextlib import closing

        from golem_cli.core.codec.history import PIECE, read_history_pieces

        path = self.messages_path(cid)
        try:
            with closing(read_pieces(path, self.max_history_bytes, follow=False, piece=PIECE)) as pieces:
                read = read_history_pieces(pieces)
        except FileNotFoundError:
            raise ConversationNotFound(f"no conversation {cid}") from None
        except UnreadableFile as e:
            raise CorruptConversation(cid, path, str(e), salvageable=False) from None
        return self._read_whole(cid)[1] if read is None else read[0]  # declined by the fast path: read whole

    def info(self, cid: str) -> ConversationInfo:
        """Metadata of one conversation (from its sidecar, or derived from its messages)."""
        from golem_cli.store.meta import build_entry, signature

        path = self.messages_path(cid)
        try:
            msig = signature(os.stat(path))
        except FileNotFoundError:
            raise ConversationNotFound(f"no conversation {cid}") from None
        entry = build_entry(self.conversations_dir, cid, msig, limit=self.max_history_bytes)
        return ConversationInfo(entry.meta, entry.problem)

    def meta(self, cid: str) -> ConversationMeta:
        return self.info(cid).meta

    def list(self, limit: int | None = None) -> list[ConversationInfo]:
        """Conversations, most recently updated first."""
        return self.listing(limit).conversations

    def listing(self, limit: int | None = None) -> Listing:
        """``list`` plus what ``golem list`` needs around it. Reads only the rows it returns
        from the index (see index.py), and re-checks those against their files."""
        from golem_cli.store.meta import recheck

        entries, total, foreign, neighbours = self.index.listing(limit)
        rows = []
        for entry in entries:
            fresh = recheck(self.conversations_dir, entry, limit=self.max_history_bytes)
            if fresh is not None:
                rows.append(ConversationInfo(fresh.meta, fresh.problem))
        return Listing(rows, total, neighbours, foreign)

    def search(self, text: str, limit: int | None = None, *, role: str = "", since: float = 0.0) -> Found:
        """The first matching message of each conversation (search.py says what matches), most
        recently updated first, at most ``limit`` of them. ``role`` keeps only messages of that
        role; ``since`` only conversations updated at or after that time (Unix seconds).

        The index is brought up to date first (``Index.catch_up``: the text of conversations
        it does not hold yet is read then, with progress); it names the conversations that may
        match, newest first, and each is confirmed in its file."""
        from golem_cli.store.search import Found, Hit, first_hit, parse_query, shared_with_forks

        query = parse_query(text)
        self.index.catch_up()
        hits: builtins.list[Hit] = []
        unreadable: dict[str, str] = {}
        candidates = self.index.candidates(query, since=since)
        try:
            for meta in candidates:
                if limit is not None and len(hits) >= limit:
                    break
                try:
                    messages = self.read(meta.id)
                except ConversationNotFound:
                    continue  # deleted since
                except (CorruptConversation, OSError) as e:
                    unreadable[meta.id] = getattr(e, "problem", None) or getattr(e, "strerror", None) or str(e)
                    continue
                hit = first_hit(query, meta, messages, role)
                if hit is not None:
                    hits.append(hit)
        finally:
            candidates.close()  # ends its read of the index
        problems = dict(self.index.problems()) | unreadable
        hits = shared_with_forks(hits)
        prefixes = self.unique_prefixes(h.meta.id for h in hits) if hits else {}
        return Found(hits, sorted(problems.items()), prefixes)

    def unreadable(self) -> builtins.list[tuple[str, str]]:
        """(ID, problem) of every stored conversation whose file cannot be read, as of the
        last listing or search (which skip them)."""
        return self.index.problems()

    # --- locking ---------------------------------------------------------------------------

    def lock(self, cid: str) -> FileLock:
        """Hold the conversation for writing (re-entrant; use as a context manager or call
        ``release``). Raises ``ConversationLocked`` naming the holder, who is alive: a lock
        left by a dead process is taken over (``FileLock.took_over`` names it)."""
        from golem_cli.store.locks import LockBusy, LockFileUnsafe, acquire

        path = self.lock_path(cid)
        ensure_private_dir(self.root)
        ensure_private_dir(self.locks_dir)
        try:
            return acquire(path)
        except LockBusy as busy:
            raise ConversationLocked(_locked_message(cid, busy.holder), cid, busy.holder) from None
        except LockFileUnsafe as e:
            raise StoreError(f"cannot lock conversation {cid}: {e}; remove it and try again") from None

    def release(self, cid: str) -> None:
        """Release this process's hold on a conversation (no-op if it holds none)."""
        from golem_cli.store.locks import held_lock

        lock = held_lock(self.lock_path(cid))
        if lock is not None:
            lock.release()

    def holder(self, cid: str) -> LockHolder | None:
        """Who last recorded holding the lock (it may have died; ``lock`` will tell)."""
        from golem_cli.store.locks import read_holder

        return read_holder(self.lock_path(cid))

    # --- writing ---------------------------------------------------------------------------

    def create(
        self,
        messages: Sequence[Message] = (),
        *,
        cid: str | None = None,
        title: str = "",
        model: str = "",
        parent: str = "",
        fork_at: int = -1,
        hold: bool = False,
    ) -> str:
        """Store a new conversation (a fresh UUIDv7 unless ``cid`` is given) and return its
        ID. With ``hold=True`` the lock stays held for the caller (``release`` frees it)."""
        if cid is None:
            from golem_cli.core.ids import new_id

            cid = new_id()
        lock = self.lock(cid)
        try:
            if self.exists(cid):
                raise ConversationExists(f"conversation {cid} already exists")
            from golem_cli.store.meta import ConversationMeta

            meta = ConversationMeta(
                id=cid, title=title, model=model, created=time.time(), parent=parent, fork_at=fork_at
            )
            self._write(cid, messages, meta)
        except BaseException:
            lock.release()
            raise
        if not hold:
            lock.release()
        return cid

    def save(self, cid: str, messages: Sequence[Message], *, durable: bool = True) -> ConversationMeta:
        """Replace the conversation's messages atomically and update its metadata.

        ``durable=False`` skips the fsyncs: the write still survives the process being killed
        (the rename is atomic and the data is in the OS's cache), only a power cut may lose
        it. For saves within a turn (a tool round) that the turn's end saves again durably.
        """
        with self.lock(cid):
            return self._write(cid, messages, self._sidecar(cid), durable=durable)

    def _write(
        self, cid: str, messages: Sequence[Message], old: ConversationMeta | None, *, durable: bool = True
    ) -> ConversationMeta:
        from golem_cli.core.errors import HistoryFormatError
        from golem_cli.store.meta import encode_meta, refresh_meta

        encoding = self._known.encode(messages)  # dump_history, encoding only what follows the known messages
        data, saved = encoding.data, encoding.messages
        if len(data) > self.max_history_bytes:  # golem would refuse to read it: keep the file as it is
            raise StoreError(_over_limit(cid, len(data), self.max_history_bytes))
        try:  # the last line of defence: never replace a file with one golem cannot read back
            self._loads_back.check(data, encoding.batches)  # decodes what is new, or a batch at a time
        except HistoryFormatError as e:
            problem = f"not saving conversation {cid}: it would not load back ({e}); the file is as it was"
            raise StoreError(problem) from e
        self._known.adopt(encoding)
        ensure_private_dir(self.root)
        ensure_private_dir(self.conversations_dir)
        with self.index.changing(cid) as written:
            write_atomic(self.messages_path(cid), data, durable=durable)
            meta = refresh_meta(old, cid, saved, size=len(data), now=time.time())
            write_atomic(self.meta_path(cid), encode_meta(meta), durable=durable)
            written(saved, data, encoding.crc)
        return meta

    def _sidecar(self, cid: str) -> ConversationMeta | None:
        from golem_cli.store.meta import decode_meta

        try:
            meta = decode_meta(self.meta_path(cid).read_bytes())
        except OSError:
            return None
        return meta if meta is not None and meta.id == cid else None

    def update_meta(self, cid: str, *, title: str | None = None, model: str | None = None) -> ConversationMeta:
        """Set the title and/or the model (what the messages cannot tell)."""
        with self.lock(cid):
            meta = self.meta(cid)
            changes = {k: v for k, v in (("title", title), ("model", model)) if v is not None and v != getattr(meta, k)}
            if not changes and self.meta_path(cid).exists():
                return meta  # nothing to write (resume sets the model it already has)
            import msgspec

            from golem_cli.store.meta import encode_meta

            meta = msgspec.structs.replace(meta, **changes)
            with self.index.changing(cid):
                write_atomic(self.meta_path(cid), encode_meta(meta))
            return meta

    def set_title(self, cid: str, title: str) -> ConversationMeta:
        return self.update_meta(cid, title=title)

    def set_model(self, cid: str, model: str) -> ConversationMeta:
        return self.update_meta(cid, model=model)

    def fork(self, cid: str, at: int | None = None, *, hold: bool = False, new: str | None = None) -> str:
        """Copy the first ``at`` messages (all by default) into a new conversation titled
        after its parent, whose metadata records the parent and the fork point; returns the
        new ID (``new`` when given). ``at`` counts as ``golem show`` numbers
        (core/history/numbering.py: system messages have no number and come along up to message
        ``at + 1``)."""
        from golem_cli.core.history.numbering import numbered, through

        messages = self.load(cid)
        shown = numbered(messages)
        if at is not None and not 1 <= at <= shown:
            empty = "; for a new conversation, run `golem chat`" if at < 1 else ""
            raise ForkPointOutOfRange(f"conversation {cid} has {shown} messages: fork at 1 to {shown}{empty}")
        at = shown if at is None else at
        parent = self.meta(cid)
        title = f"{parent.display_title} (fork)" if parent.display_title else ""
        copied = messages[: through(messages, at)]
        return self.create(copied, cid=new, title=title, model=parent.model, parent=cid, fork_at=at, hold=hold)

    def delete(self, cid: str) -> None:
        """Remove a conversation (refused while another process holds it)."""
        with self.lock(cid), self.index.changing(cid):
            try:
                self.messages_path(cid).unlink()
            except FileNotFoundError:
                raise ConversationNotFound(f"no conversation {cid}") from None
            except (IsADirectoryError, PermissionError) as e:
                raise StoreError(f"cannot delete {self.messages_path(cid)}: {e.strerror}; remove it by hand") from None
            try:
                self.meta_path(cid).unlink()
            except FileNotFoundError:
                pass
            fsync_dir(self.conversations_dir)

    def discard(self, cid: str) -> None:
        """Move a conversation to the trash, where ``restore`` finds it for ``TRASH_DAYS``
        days (refused while another process holds it). Older trash is purged here."""
        self._purge_trash(time.time() - TRASH_DAYS * 86400)
        ensure_private_dir(self.trash_dir)
        with self.lock(cid), self.index.changing(cid):
            try:
                os.replace(self.messages_path(cid), self.trash_dir / self.messages_path(cid).name)
            except FileNotFoundError:
                raise ConversationNotFound(f"no conversation {cid}") from None
            try:
                os.replace(self.meta_path(cid), self.trash_dir / self.meta_path(cid).name)
            except FileNotFoundError:
                pass
            fsync_dir(self.conversations_dir)
            fsync_dir(self.trash_dir)

    def trashed(self) -> builtins.list[tuple[str, float]]:
        """Conversations in the trash as (ID, when deleted), most recently deleted first."""
        found = []
        try:
            names = os.listdir(self.trash_dir)
        except FileNotFoundError:
            return []
        for name in names:
            cid = name[: -len(MESSAGES_SUFFIX)]
            if name.endswith(MESSAGES_SUFFIX) and is_conversation_id(cid):
                try:
                    found.append((cid, os.lstat(self.trash_dir / name).st_ctime))  # a rename sets ctime
                except FileNotFoundError:
                    continue
        return sorted(found, key=lambda item: item[1], reverse=True)

    def restore(self, ref: str | None = None) -> str:
        """Bring a deleted conversation back: the one ``ref`` names among the trashed (an ID,
        or the start or end of one), or the most recently deleted. Returns its ID.

        Only a regular file comes back: a FIFO, a device, a directory or a symlink planted in
        the trash is refused (``CorruptConversation``) and left where it is, as every reader
        of the store refuses it; a sidecar that is not a regular file stays in the trash too
        (the metadata is rebuilt from the messages)."""
        trashed = [cid for cid, _ in self.trashed()]
        if not trashed:
            raise ConversationNotFound("the trash is empty: no deleted conversation to restore")
        cid = trashed[0] if ref is None else match_reference(parse_reference(ref), trashed)
        if self.exists(cid):
            raise ConversationExists(f"conversation {cid} exists; it was restored already")
        with self.lock(cid), self.index.changing(cid):
            name = self.messages_path(cid).name
            meta_name = self.meta_path(cid).name
            try:
                refuse_special(self.trash_dir / name)
            except FileNotFoundError:
                raise ConversationNotFound(f"no deleted conversation {cid}") from None
            except UnreadableFile as e:
                raise CorruptConversation(cid, self.trash_dir / name, str(e), salvageable=False, deleted=True) from None
            try:
                refuse_special(self.trash_dir / meta_name, "a metadata file")
            except (FileNotFoundError, UnreadableFile):
                pass
            else:
                os.replace(self.trash_dir / meta_name, self.conversations_dir / meta_name)
            os.replace(self.trash_dir / name, self.conversations_dir / name)
            fsync_dir(self.conversations_dir)
        return cid

    def _purge_trash(self, before: float) -> None:
        for cid, deleted in self.trashed():
            if deleted < before:
                for path in (self.trash_dir / self.messages_path(cid).name, self.trash_dir / self.meta_path(cid).name):
                    try:
                        path.unlink()
                    except FileNotFoundError:
                        pass

    def backup(self, cid: str) -> Path:
        """Copy the current messages file to ``backups/`` and return the copy's path."""
        data = read_regular(self.messages_path(cid), self.max_history_bytes, follow=False)
        ensure_private_dir(self.backups_dir)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        path = self.backups_dir / f"{cid}.{stamp}.{os.urandom(2).hex()}.json"
        write_atomic(path, data)
        return path


def _checked(cid: str) -> str:
    if not is_conversation_id(cid):
        raise InvalidReference(f"not a conversation ID: {cid!r}")
    return cid


def _locked_message(cid: str, holder: LockHolder | None) -> str:
    who = holder.describe() if holder else "holder unknown"
    return (
        f"conversation {cid} is open in another golem process ({who}); "
        f"finish or close it there, or continue in a copy with `golem fork {cid[:13]}`"
    )


def _over_limit(cid: str, size: int, limit: int) -> str:
    """Why a save is refused for its size, and what to do. Reading applies the same limit
    (``files.read_regular``): a file written over it would be one golem refuses to read."""
    return (
        f"not saving conversation {cid}: it would be {_bytes(size)}, over the {_bytes(limit)} limit on "
        f"history files; set GOLEM_MAX_HISTORY_BYTES to at least {size} to keep it (the file is as it was)"
    )


def _bytes(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 1 << 20 else f"{n:,} bytes"
