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
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field
from msgspec.structs import replace

from golem_cli.store.atomic import ensure_private_dir, fsync_dir, write_atomic
from golem_cli.store.errors import (
    ChangedOnDisk,
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
    open_regular,
    pieces_of,
    read_pieces,
    read_regular,
    refuse_special,
)
from golem_cli.store.refs import (
    ID_LENGTH,
    LAST,
    handle,
    is_conversation_id,
    match_reference,
    parse_reference,
    unique_prefix_among,
)
from golem_cli.store.sidecars import encode_document, fork_log, move_all, names_of, remove_all

if TYPE_CHECKING:
    from golem_cli.core.messages import Message
    from golem_cli.store.index import Index
    from golem_cli.store.locks import FileLock, LockHolder
    from golem_cli.store.meta import ChatSettings, ConversationMeta
    from golem_cli.store.refresh import Progress
    from golem_cli.store.saving import Persisted
    from golem_cli.store.search import Found, Hit
    from golem_cli.store.sidecars import FileSig, Kind
    from golem_cli.store.sidecars.checkpoints import Checkpoints


TRASH_DAYS = 30  # how long a deleted conversation can be restored
LAST_WRITTEN = "last-conversation"  # in the state directory: the conversation this machine wrote last
_SIDECAR_TRIES = 5  # writes of a sidecar another program keeps replacing, before giving up


class ConversationInfo(Struct, frozen=True):
    """A conversation as listed: its metadata, and ``problem`` when its file is unreadable."""

    meta: ConversationMeta
    problem: str = ""

    @property
    def id(self) -> str:
        return self.meta.id


class Window(Struct, frozen=True, kw_only=True):
    """``Store.load_tail``: the leading system messages, the newest messages, and how many of
    the file's messages between them were not read."""

    head: builtins.list[Message]
    messages: builtins.list[Message]
    skipped: int


class Saved(Struct, frozen=True, kw_only=True):
    """What a save did: the metadata it wrote, and when another program had changed the file
    meanwhile (ADR 0025), what became of this save: ``merged``, their messages now before this
    save's new ones, at index ``at``; or ``fork``, the conversation the save went to instead
    (its lock held for the caller). ``notice`` says it in one line."""

    meta: ConversationMeta
    merged: builtins.list[Message] = field(default_factory=list)
    at: int = 0
    fork: str = ""
    notice: str = ""


class Listing(Struct, frozen=True):
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
        self,
        root: Path | str,
        *,
        max_history_bytes: int = MAX_HISTORY_BYTES,
        progress: Progress | None = None,
        state: Path | str | None = None,
    ) -> None:
        self.root = Path(root)
        #: where this machine's golem records the conversation it wrote last (``last``); the CLI
        #: passes ``config.paths.state_dir()``, apart from the conversations a user may sync
        self.last_path = Path(state) / LAST_WRITTEN if state is not None else None
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
        self._checkpoints: Checkpoints | None = None
        #: the file this process knows of each conversation it loaded, created or saved
        self._files: dict[str, Persisted] = {}
        #: one line each for what the caller should say happened (a title both this process and
        #: another program changed: which was kept); the caller prints and clears them
        self.notices: builtins.list[str] = []

    @property
    def checkpoints(self) -> Checkpoints:
        """What the file tools replaced, by conversation, for ``/undo`` (checkpoints.py)."""
        if self._checkpoints is None:
            from golem_cli.store.sidecars.checkpoints import Checkpoints

            self._checkpoints = Checkpoints(self.root / "checkpoints")
        return self._checkpoints

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
                progress=self.progress,
            )
        return self._index

    # --- names -----------------------------------------------------------------------------

    def messages_path(self, cid: str) -> Path:
        """The messages file of a conversation (the ID is checked: no path escapes)."""
        return self.conversations_dir / f"{_checked(cid)}{MESSAGES_SUFFIX}"

    def meta_path(self, cid: str) -> Path:
        return self.conversations_dir / f"{_checked(cid)}{META_SUFFIX}"

    def sidecar_path(self, cid: str, kind: Kind) -> Path:
        """The ``kind`` sidecar of a conversation (the sidecars scheme): ``<id>.<kind>.json[l]``."""
        return self.conversations_dir / kind.file_name(_checked(cid))

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
            written = self.last_written()
            if written:
                return written
            newest = self.list(limit=1)
            if not newest:
                raise ConversationNotFound("there are no conversations yet (start one with `golem chat`)")
            return newest[0].id
        if len(text) == ID_LENGTH and self.exists(text):
            return text
        return match_reference(text, self._ids())

    def last_written(self) -> str:
        """The stored conversation this machine's golem wrote last ("" when none is recorded,
        or it is gone): what ``last`` means, before the newest by its messages' times."""
        if self.last_path is None:
            return ""
        try:
            cid = read_regular(self.last_path, 64, what="golem's record of the last conversation").decode().strip()
        except (OSError, UnicodeDecodeError):
            return ""
        return cid if is_conversation_id(cid) and self.exists(cid) else ""

    def _wrote(self, cid: str) -> None:
        """Record ``cid`` as the conversation this machine's golem wrote last (not fsynced: at
        worst ``last`` falls back to the messages' times)."""
        if self.last_path is None:
            return
        try:
            if read_regular(self.last_path, 64).decode().strip() == cid:
                return
        except (OSError, UnicodeDecodeError):
            pass
        try:
            ensure_private_dir(self.last_path.parent)
            write_atomic(self.last_path, cid.encode(), durable=False)
        except OSError:
            pass  # a read-only state directory: ``last`` goes by the messages' times

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
        """The conversation's messages, for a command that will save them: the file is decoded
        a batch at a time as it is read (no bytes kept, ADR 0016), and the store keeps an open
        descriptor of it (``saving.Persisted``) so the next ``append`` copies those bytes
        instead of encoding the messages again (ADR 0025). ``CorruptConversation`` if the file
        is not a history."""
        from golem_cli.store.saving import persisted

        messages, fd = self._read_held(cid)
        self._know(cid, persisted(fd, len(messages)))
        return messages

    def _open_history(self, cid: str, path: Path) -> tuple[int, os.stat_result]:
        """A descriptor of the conversation's file (regular, within the size limit), its
        refusals as the store's errors."""
        try:
            return open_regular(path, self.max_history_bytes, follow=False)
        except FileNotFoundError:
            raise ConversationNotFound(f"no conversation {cid}") from None
        except UnreadableFile as e:
            raise CorruptConversation(cid, path, str(e), salvageable=False) from None

    def _read_held(self, cid: str) -> tuple[list[Message], int]:
        """The file's messages and an open descriptor of the very file they were read from."""
        from golem_cli.core.codec.history import PIECE, read_history, read_history_pieces
        from golem_cli.core.errors import HistoryFormatError

        path = self.messages_path(cid)
        fd, st = self._open_history(cid, path)
        try:
            read = read_history_pieces(pieces_of(fd, st, path, self.max_history_bytes, PIECE))
            if read is None:  # declined by the fast path: the whole file, read as Go reads it
                os.lseek(fd, 0, os.SEEK_SET)
                read = read_history(b"".join(pieces_of(fd, st, path, self.max_history_bytes, None)))
        except UnreadableFile as e:
            os.close(fd)
            raise CorruptConversation(cid, path, str(e), salvageable=False) from None
        except HistoryFormatError as e:
            os.close(fd)
            raise CorruptConversation(cid, path, str(e)) from None
        except BaseException:
            os.close(fd)
            raise
        return read[0], fd

    def load_tail(self, cid: str, want: int) -> Window | None:
        """The newest messages of a conversation, at least ``want`` of them and the first able
        to open a request, and its leading system messages, without decoding the rest
        (store/tail.py): what a run that sends only a window needs (``ask -c``). The store keeps
        the file's descriptor as ``load`` does, so saves append (and a repair of the window
        rewrites only what follows its head). None when the file cannot be read so (not
        golem's compact spelling, too short to gain, its count unknown): ``load`` it."""
        from golem_cli.store.saving import Persisted, closing_bracket
        from golem_cli.store.sidecars import FileSig
        from golem_cli.store.tail import read_tail

        path = self.messages_path(cid)
        fd, st = self._open_history(cid, path)
        try:
            close = closing_bracket(fd, st.st_size)
            total = self._count(cid, st.st_size)
            tail = read_tail(fd, close, want) if close is not None and total is not None else None
        except BaseException:
            os.close(fd)
            raise
        skipped = total - len(tail.head) - len(tail.messages) if tail is not None and total is not None else 0
        if tail is None or skipped <= 0:
            os.close(fd)
            return None
        self._know(cid, Persisted(fd=fd, sig=FileSig.of(st), close=close, count=total or 0, skipped=skipped,
                                  head=len(tail.head), cut=tail.cut))  # fmt: skip
        return Window(head=tail.head, messages=tail.messages, skipped=skipped)

    def _count(self, cid: str, size: int) -> int | None:
        """How many messages the file of that size holds, as its metadata sidecar records it
        when the sidecar describes that file (None otherwise)."""
        meta, _ = self._read_meta(cid)
        return meta.messages if meta is not None and meta.size == size else None

    def _know(self, cid: str, known: Persisted | None) -> None:
        """Record the file this process knows for ``cid`` (None: none), closing the old one."""
        old = self._files.pop(cid, None)
        if old is not None:
            old.release()
        if known is not None:
            self._files[cid] = known

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
        ``search_hits`` gives the same hits as they are found."""
        from golem_cli.store.search import Found

        unreadable: dict[str, str] = {}
        hits = builtins.list(self.search_hits(text, limit, role=role, since=since, unreadable=unreadable))
        problems = dict(self.index.problems()) | unreadable
        prefixes = self.unique_prefixes(h.meta.id for h in hits) if hits else {}
        return Found(hits, sorted(problems.items()), prefixes)

    def search_hits(
        self, text: str, limit: int | None = None, *, role: str = "", since: float = 0.0, unreadable: dict[str, str]
    ) -> Iterator[Hit]:
        """``search``'s hits, each as soon as it is found and no later hit can fold it into its
        parent's or add a fork to it (``search.Stream``); the conversations whose file could
        not be read are put in ``unreadable`` (ID: problem) as they are met.

        The index is brought up to date first (``Index.catch_up``: the text of conversations
        it does not hold yet is read then, with progress); it names the conversations that may
        match, newest first, and each is confirmed in its file. A search for every hit (no
        ``limit``) asks the index for its forks first, so that each hit is given as it is found;
        one with a limit holds its few hits to the end (where it stops decides its folding)."""
        from golem_cli.store.search import Stream, first_hit, parse_query

        query = parse_query(text)
        self.index.catch_up()

        def ahead(meta: ConversationMeta) -> Hit | None:
            try:
                return first_hit(query, meta, self.read(meta.id), role)
            except (ConversationNotFound, CorruptConversation, OSError):
                return None  # the search says so when it reaches it

        stream = Stream(self.index.forks(since) if limit is None else None, ahead)
        found = 0
        candidates = self.index.candidates(query, since=since)
        try:
            for meta in candidates:
                if limit is not None and found >= limit:
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
                    found += 1
                    yield from stream.add(hit)
        finally:
            candidates.close()  # ends its read of the index
        yield from stream.end()

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
        if held_lock(self.lock_path(cid)) is None:
            self._know(cid, None)  # not ours any more: the next save starts from the file

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
        settings: ChatSettings | None = None,
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
                id=cid, title=title, model=model, created=time.time(), parent=parent, fork_at=fork_at, settings=settings
            )
            self._write(cid, messages, meta)
        except BaseException:
            lock.release()
            raise
        if not hold:
            lock.release()
        return cid

    def append(self, cid: str, history: Sequence[Message], *, durable: bool = True) -> Saved:
        """Save ``history``, whose first messages are those this store last loaded or saved for
        ``cid`` (the caller says so by calling this): only the messages after them are encoded,
        and the bytes on disk are copied from the file this store knows (saving.py). Without
        such a file (never loaded here, or not one that can be appended to), the history is
        written whole, as ``save`` does.

        ``durable=False`` skips the fsyncs: the write still survives the process being killed
        (the rename is atomic and the data is in the OS's cache), only a power cut may lose
        it. For saves within a turn (a tool round) that the turn's end saves again durably.
        """
        with self.lock(cid):
            return self._write(cid, history, None, durable=durable, append=True)

    def save(self, cid: str, messages: Sequence[Message], *, durable: bool = True) -> Saved:
        """Replace the conversation's messages atomically (encoded whole, a batch at a time)
        and update its metadata: for a history changed anywhere but at its end (a repair,
        ``/retry``'s rewind, a new system prompt, ``normalize --in-place``)."""
        with self.lock(cid):
            return self._write(cid, messages, None, durable=durable)

    def _write(
        self,
        cid: str,
        messages: Sequence[Message],
        fresh: ConversationMeta | None,
        *,
        durable: bool = True,
        append: bool = False,
    ) -> Saved:
        """Write the messages (appended to the known file, or whole), then the metadata sidecar
        (``fresh`` for a new conversation, else the one on disk refreshed), then the index;
        first, if the file is no longer the one this process knows, see ``_outside``."""
        path = self.messages_path(cid)
        known = None if fresh is not None else self._files.get(cid)
        if known is not None and not known.unchanged(path):
            return self._outside(cid, known, messages, durable=durable, append=append)
        expect: FileSig | None | bool = known.sig if known is not None else (None if fresh is not None else True)
        try:
            return self._replace(cid, path, known, messages, fresh, durable=durable, append=append, expect=expect)
        except ChangedOnDisk:  # replaced between the check and the rename: the same answer
            if known is None:
                raise
            return self._outside(cid, known, messages, durable=durable, append=append)

    def _replace(
        self,
        cid: str,
        path: Path,
        known: Persisted | None,
        messages: Sequence[Message],
        fresh: ConversationMeta | None,
        *,
        durable: bool,
        append: bool,
        expect: FileSig | None | bool,
    ) -> Saved:
        """Write ``messages`` to ``path``: the new ones appended to the bytes of ``known``
        (with ``append``), else all. ``expect`` is what ``path`` must name just before the
        rename: that file, nothing (None: a new conversation), or anything (True)."""
        from golem_cli.store.saving import Persisted

        appending = append and known is not None and known.close is not None and len(messages) >= known.held
        if appending and known is not None and known.held == len(messages) and known.unchanged(path):
            return Saved(meta=self.meta(cid))  # nothing new: nothing to write
        ensure_private_dir(self.root)
        ensure_private_dir(self.conversations_dir)
        with self.index.changing(cid) as written:
            fd, sig, start = self._bytes(
                cid, path, known, messages, appending, durable, partial(_still, cid, path, expect)
            )
            skipped = known.skipped if known is not None else 0
            before = known.index_sig if known is not None else None
            window = (known.head, known.cut) if known is not None and skipped else (0, 0)
            record = Persisted(fd=fd, sig=sig, close=sig.size - 1, count=skipped + len(messages), skipped=skipped,
                               head=window[0], cut=window[1])  # fmt: skip
            self._know(cid, record)
            meta = self._refresh_meta(cid, messages, fresh, record)
            self._wrote(cid)
            written(messages[start - skipped :], start, record.count, before, record.index_sig,
                    None if skipped else messages)  # fmt: skip
        return Saved(meta=meta)

    def _bytes(
        self,
        cid: str,
        path: Path,
        known: Persisted | None,
        messages: Sequence[Message],
        appending: bool,
        durable: bool,
        still: Callable[[], None],
    ) -> tuple[int, FileSig, int]:
        """Write the file: appended to ``known``, its window's tail rewritten, or whole. The new
        file's descriptor and signature, and how many of its messages were in the old one."""
        from golem_cli.store.saving import write_appended, write_copied, write_whole

        if appending and known is not None:
            items = self._encode_new(cid, known, messages[known.held :])
            return (*write_appended(path, known, items, durable=durable, still=still), known.count)
        if known is not None and known.skipped:  # a window: what follows its head is written again
            items = self._encode_new(cid, known, messages[known.head :])
            tail = b"," + items + b"]"
            return (*write_copied(path, known.fd, known.cut, tail, durable, still), known.head + known.skipped)
        return (*write_whole(path, self._whole_chunks(cid, messages), durable=durable, still=still), 0)

    def _refresh_meta(
        self, cid: str, messages: Sequence[Message], fresh: ConversationMeta | None, record: Persisted
    ) -> ConversationMeta:
        """The metadata sidecar after a save: the new counts, the rest as it was (``fresh`` for a
        new conversation). A window's save keeps the summary (its first prompt is not held)."""
        import msgspec

        from golem_cli.store.meta import derive_meta, refresh_meta

        now = time.time()

        def make(old: ConversationMeta | None) -> ConversationMeta:
            if old is None and fresh is None and not record.skipped:
                # A file golem did not write, saved for the first time: its sidecar starts from
                # what a rebuild of the index works out (its lineage too), as the row has it (ADR 0034).
                old = derive_meta(cid, messages, size=record.sig.size)
            meta = refresh_meta(fresh if fresh is not None or old is None else old, cid, messages,
                                size=record.sig.size, now=now)  # fmt: skip
            if record.skipped:
                meta = msgspec.structs.replace(meta, messages=record.count, summary=old.summary if old else "")
            return meta

        return self._write_meta(cid, make, durable=False)  # a cache, but for what a user chose: ADR 0025

    def _outside(
        self, cid: str, known: Persisted, messages: Sequence[Message], *, durable: bool, append: bool
    ) -> Saved:
        """Save when another program changed the file since this process loaded or saved it
        (issue 25 item 1). Their file holds ours plus more, and theirs + ours is a valid history
        (one repair leaves unchanged): ours is appended after theirs. Their file is gone: it is
        saved again. Anything else (ours changed, theirs damaged, a whole rewrite): this turn is
        saved as a fork of what this process knew, their file left as it is. ``Saved`` says
        which, for the session to follow and the CLI to say."""
        from golem_cli.core.history.repair import normalize_history
        from golem_cli.store.outside import extension

        path = self.messages_path(cid)
        count = known.held
        if not os.path.lexists(path):
            saved = self._replace(cid, path, known, messages, None, durable=durable, append=append, expect=None)
            return replace(saved, notice=f"conversation {cid} was removed on disk meanwhile; saved it again")
        ours = messages if not known.skipped and len(messages) >= count else None  # a window: the bytes tell
        found = extension(path, known, ours, self.max_history_bytes)
        if found is not None and append:
            merged = [*messages[:count], *found.extra, *messages[count:]]
            if not normalize_history(merged)[1].changed:
                self._know(cid, found.theirs)
                theirs = found.theirs
                saved = self._replace(cid, path, theirs, merged, None, durable=durable, append=True, expect=theirs.sig)
                n = len(found.extra)
                notice = (
                    f"conversation {cid} changed on disk meanwhile ({n} message{'s' if n != 1 else ''} from "
                    "elsewhere); your turn follows them"
                )
                return replace(saved, merged=found.extra, at=count, notice=notice)
        if found is not None:
            found.theirs.release()
        return self._fork_turn(cid, known, messages, durable=durable, append=append)

    def _fork_turn(
        self, cid: str, known: Persisted, messages: Sequence[Message], *, durable: bool, append: bool
    ) -> Saved:
        """This process's history saved as a new conversation, a fork of ``cid`` at what this
        process knew of it (its bytes copied when only new messages follow): the lock of the
        fork is held for the caller, the lock of ``cid`` released by it."""
        from golem_cli.core.history.numbering import numbered
        from golem_cli.core.ids import new_id
        from golem_cli.store.meta import ConversationMeta

        parent = self.meta(cid)
        new = new_id()
        self.lock(new)  # held for the session, which continues here
        self._files[new] = known  # the bytes this process knew, to copy
        self._files.pop(cid, None)
        fresh = ConversationMeta(
            id=new,
            title=f"{parent.display_title} (fork)" if parent.display_title else "",
            model=parent.model,
            created=time.time(),
            parent=cid,
            fork_at=numbered(list(messages[: known.held])) + known.skipped,
            settings=parent.settings,
        )
        path = self.messages_path(new)
        try:
            saved = self._replace(new, path, known, messages, fresh, durable=durable, append=append, expect=None)
        except BaseException:
            self.release(new)
            raise
        notice = (
            f"conversation {cid} changed on disk meanwhile; your turn is saved in a fork {new} (golem resume {new})"
        )
        return replace(saved, fork=new, notice=notice)

    def _encode_new(self, cid: str, known: Persisted, new: Sequence[Message]) -> bytes:
        """The bytes of the messages an append adds, checked to load back (else ``StoreError``,
        naming the position in the file the save would have written)."""
        from golem_cli.core.codec.history import dump_history, load_history
        from golem_cli.core.errors import HistoryFormatError
        from golem_cli.store.saving import encode_new, read_known

        try:
            items = encode_new(new)
        except HistoryFormatError as e:
            problem = e
            if known.close is not None and known.count:  # the whole file, for the error's position (rare)
                try:
                    load_history(read_known(known.fd, known.close) + b"," + dump_history(new)[1:])
                except HistoryFormatError as whole:
                    problem = whole
            raise StoreError(_would_not_load(cid, problem)) from e
        size = (known.close or 0) + len(items) + 2
        if size > self.max_history_bytes:  # golem would refuse to read it: keep the file as it is
            raise StoreError(_over_limit(cid, size, self.max_history_bytes))
        return items

    def _whole_chunks(self, cid: str, messages: Sequence[Message]) -> Iterator[bytes]:
        """The bytes of a whole history a batch at a time, each checked to load back, never
        more than the size limit (``StoreError`` from the first batch that fails either: the
        temporary file is then removed, and the file is as it was)."""
        from golem_cli.core.codec.history import dump_history, load_history
        from golem_cli.core.errors import HistoryFormatError
        from golem_cli.store.saving import checked_chunks

        total = 0
        chunks = checked_chunks(messages)
        try:
            for chunk in chunks:
                total += len(chunk)
                if total > self.max_history_bytes:
                    total += sum(len(rest) for rest in chunks)
                    raise StoreError(_over_limit(cid, total, self.max_history_bytes))
                yield chunk
        except HistoryFormatError:
            try:  # decoded whole for the position in the file (rare)
                load_history(dump_history(messages))
            except HistoryFormatError as whole:
                e = whole
            raise StoreError(_would_not_load(cid, e)) from e

    def _read_meta(self, cid: str) -> tuple[ConversationMeta | None, FileSig | None]:
        """The metadata sidecar (None when missing or unreadable) and the file read."""
        from golem_cli.store.meta import ConversationMeta
        from golem_cli.store.sidecars import META, read_document

        meta, sig = read_document(self.meta_path(cid), META, ConversationMeta)
        return (meta if meta is not None and meta.id == cid else None), sig

    def _write_meta(
        self, cid: str, make: Callable[[ConversationMeta | None], ConversationMeta], *, durable: bool
    ) -> ConversationMeta:
        """Write the sidecar ``make`` makes from the one on disk, only over the very file it
        was made from. When another program replaced it meanwhile (a sync tool), the two are
        merged by ``meta.merge_meta`` and a chosen field both changed is said (``notices``)."""
        from golem_cli.store.meta import encode_meta, merge_meta
        from golem_cli.store.sidecars import SidecarChanged, write_document

        base, sig = self._read_meta(cid)
        ours = make(base)
        for _ in range(_SIDECAR_TRIES):
            try:
                write_document(self.meta_path(cid), encode_meta(ours), expected=sig, durable=durable)
                return ours
            except SidecarChanged:
                theirs, sig = self._read_meta(cid)
                if theirs is None:
                    continue  # removed or damaged meanwhile: ours replaces it
                ours, decided = merge_meta(base or theirs, ours, theirs)
                base = theirs
                self.notices.extend(_meta_notice(cid, name, getattr(ours, name)) for name in decided)
        self.notices.append(f"conversation {cid}: its metadata kept changing on disk; not updated this time")
        return ours

    def update_meta(
        self, cid: str, *, title: str | None = None, model: str | None = None, settings: ChatSettings | None = None
    ) -> ConversationMeta:
        """Set the title, the model and/or the chat's settings (what the messages cannot tell)."""
        with self.lock(cid):
            meta = self.meta(cid)
            given = (("title", title), ("model", model), ("settings", settings))
            changes = {k: v for k, v in given if v is not None and v != getattr(meta, k)}
            if not changes and self.meta_path(cid).exists():
                return meta  # nothing to write (resume sets the model it already has)
            import msgspec

            def changed(old: ConversationMeta | None) -> ConversationMeta:
                current = meta if old is None or old.size != meta.size else old
                return msgspec.structs.replace(current, **changes, changed=time.time())

            with self.index.changing(cid):
                return self._write_meta(cid, changed, durable=True)  # a choice: durable, unlike the cache

    def set_title(self, cid: str, title: str) -> ConversationMeta:
        return self.update_meta(cid, title=title)

    def set_model(self, cid: str, model: str) -> ConversationMeta:
        return self.update_meta(cid, model=model)

    def set_settings(self, cid: str, settings: ChatSettings) -> ConversationMeta:
        """Keep how the chat is set up with the conversation, for ``resume`` to restore."""
        return self.update_meta(cid, settings=settings)

    def fork(self, cid: str, at: int | None = None, *, hold: bool = False, new: str | None = None) -> str:
        """Copy the first ``at`` messages (all by default) into a new conversation titled
        after its parent, whose metadata records the parent and the fork point; returns the
        new ID (``new`` when given). ``at`` counts as ``golem show`` numbers
        (core/history/numbering.py: system messages have no number and come along up to message
        ``at + 1``)."""
        from golem_cli.core.history.numbering import numbered, through

        messages = self.read(cid)  # nothing of the parent is saved: no descriptor kept
        shown = numbered(messages)
        if at is not None and not 1 <= at <= shown:
            empty = "; for a new conversation, run `golem chat`" if at < 1 else ""
            raise ForkPointOutOfRange(f"conversation {cid} has {shown} messages: fork at 1 to {shown}{empty}")
        at = shown if at is None else at
        parent = self.meta(cid)
        title = f"{parent.display_title} (fork)" if parent.display_title else ""
        copied = messages[: through(messages, at)]
        new = self.create(copied, cid=new, title=title, model=parent.model, parent=cid, fork_at=at, hold=True,
                          settings=parent.settings)  # fmt: skip
        try:
            self._fork_sidecars(cid, new, copied)
        finally:
            if not hold:
                self.release(new)
        return new

    def _fork_sidecars(self, cid: str, new: str, copied: Sequence[Message]) -> None:
        """What a fork keeps of the other sidecars (the metadata is made by ``create``): the
        ``runs`` records of the runs its messages carry, the summaries covering only them."""
        from golem_cli.store.sidecars import (
            RUNS,
            SUMMARIES,
            Summaries,
            copy_lines,
            fork_summaries,
            read_document,
            read_log,
            write_document,
        )

        log = read_log(self.sidecar_path(cid, RUNS), RUNS)
        if log.lines:
            lines = fork_log(log, {m.run_id for m in copied if m.run_id})
            if lines:
                copy_lines(self.sidecar_path(new, RUNS), lines)
        summaries, _ = read_document(self.sidecar_path(cid, SUMMARIES), SUMMARIES, Summaries)
        kept = fork_summaries(summaries, len(copied)) if summaries is not None else None
        if kept is not None:
            path = self.sidecar_path(new, SUMMARIES)
            write_document(path, encode_document(kept), expected=None, durable=False)

    def delete(self, cid: str) -> None:
        """Remove a conversation (refused while another process holds it)."""
        with self.lock(cid), self.index.changing(cid):
            try:
                self.messages_path(cid).unlink()
            except FileNotFoundError:
                raise ConversationNotFound(f"no conversation {cid}") from None
            except (IsADirectoryError, PermissionError) as e:
                raise StoreError(f"cannot delete {self.messages_path(cid)}: {e.strerror}; remove it by hand") from None
            remove_all(self.conversations_dir, names_of(self.conversations_dir, cid))
            fsync_dir(self.conversations_dir)
            self.checkpoints.forget(cid)

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
            move_all(names_of(self.conversations_dir, cid), self.conversations_dir, self.trash_dir)
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
            try:
                refuse_special(self.trash_dir / name)
            except FileNotFoundError:
                raise ConversationNotFound(f"no deleted conversation {cid}") from None
            except UnreadableFile as e:
                raise CorruptConversation(cid, self.trash_dir / name, str(e), salvageable=False, deleted=True) from None
            move_all(names_of(self.trash_dir, cid), self.trash_dir, self.conversations_dir, _regular_sidecar)
            os.replace(self.trash_dir / name, self.conversations_dir / name)
            fsync_dir(self.conversations_dir)
        return cid

    def _purge_trash(self, before: float) -> None:
        for cid, deleted in self.trashed():
            if deleted < before:
                remove_all(self.trash_dir, [self.messages_path(cid).name, *names_of(self.trash_dir, cid)])
                self.checkpoints.forget(cid)

    def backup(self, cid: str) -> Path:
        """Copy the current messages file to ``backups/`` and return the copy's path."""
        data = read_regular(self.messages_path(cid), self.max_history_bytes, follow=False)
        ensure_private_dir(self.backups_dir)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        path = self.backups_dir / f"{cid}.{stamp}.{os.urandom(2).hex()}.json"
        write_atomic(path, data)
        return path


def _regular_sidecar(path: Path) -> None:
    refuse_special(path, "a sidecar")


def _checked(cid: str) -> str:
    if not is_conversation_id(cid):
        raise InvalidReference(f"not a conversation ID: {cid!r}")
    return cid


def _locked_message(cid: str, holder: LockHolder | None) -> str:
    who = holder.describe() if holder else "holder unknown"
    return (
        f"conversation {cid} is open in another golem process ({who}); "
        f"finish or close it there, or continue in a copy with `golem fork {handle(cid)}`"
    )


def _meta_notice(cid: str, name: str, value: object) -> str:
    return f"conversation {cid}: its {name} was also changed elsewhere; kept the newest, {value!r}"


def _still(cid: str, path: Path, expect: FileSig | None | bool) -> None:
    """Called just before a save's rename: the path must still name the file this process knows
    (or nothing, for a new conversation; True: anything), else the save is not made."""
    from golem_cli.store.sidecars import current_sig

    if expect is True:
        return
    now = current_sig(path)
    if expect is None and now is not None:
        raise ConversationExists(f"conversation {cid} already exists")
    if expect is not None and now != expect:
        raise ChangedOnDisk(f"conversation {cid} changed on disk while this save was being written; not saved")


def _would_not_load(cid: str, e: Exception) -> str:
    return f"not saving conversation {cid}: it would not load back ({e}); the file is as it was"


def _over_limit(cid: str, size: int, limit: int) -> str:
    """Why a save is refused for its size, and what to do. Reading applies the same limit
    (``files.read_regular``): a file written over it would be one golem refuses to read."""
    return (
        f"not saving conversation {cid}: it would be {_bytes(size)}, over the {_bytes(limit)} limit on "
        f"history files; set GOLEM_MAX_HISTORY_BYTES to at least {size} to keep it (the file is as it was)"
    )


def _bytes(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 1 << 20 else f"{n:,} bytes"
