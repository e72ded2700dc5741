"""The index: what ``golem list`` and ``golem search`` read instead of every conversation file.

``index.sqlite`` (SQLite, WAL mode, docs/adr/0009-sqlite-index.md; its tables in schema.py)
holds one row per conversation (its metadata and the ``stat`` signatures of its messages file
and sidecar) and the text of every conversation, for search. The JSON files stay the only
truth: delete the index and the next command rebuilds it; a corrupt one is deleted and rebuilt,
never fatal; one that cannot be written is replaced by one in memory, for that command.

Every reader brings it up to date first, in its own process (refresh.py): a listing its rows
(``refresh``), a search its text too (``catch_up``). The store re-checks rows about to be shown
against both files (``meta.recheck``), which catches in-place edits that leave the directory
alone.

Write-through: golem's own changes (every save, a title, a delete) run inside ``changing``,
which holds ``index.lock`` across the change so golem processes never interleave there, then
update that conversation's row and text in one transaction. A save that only appended
messages (every chat turn) indexes only the new messages, as one more part of the
conversation's text: the row keeps the CRC-32 of the indexed file minus its closing bracket, so
an append is recognised from the new bytes alone. When the index was fresh before the change,
the directory's new mtime is recorded too, so the next listing does not stat every file. The
price: a file another program writes within the same timestamp tick as a golem save goes unseen
until the directory next changes (skipped on whole-second file systems, where the tick is too
wide).

Two processes: SQLite's WAL lets readers go on while one process writes; writers take the
database's write lock (``BEGIN IMMEDIATE``) and wait up to ``BUSY_SECONDS`` for each other,
except a save's write-through, which waits ``WRITE_THROUGH_BUSY_MS`` and otherwise leaves the
row behind for the next refresh (the save is complete: the index is a cache).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from golem_cli.store.atomic import PRIVATE_FILE, remove_files
from golem_cli.store.files import MAX_HISTORY_BYTES, MESSAGES_SUFFIX
from golem_cli.store.meta import (
    ConversationMeta,
    Entry,
    Signature,
    build_entry,
    decode_meta,
    sig_of,
    sig_text,
    signature,
)
from golem_cli.store.refresh import Progress, Refresh, entry_row, set_state
from golem_cli.store.schema import (
    INDEX_VERSION,
    PART_BITS,
    SCHEMA,
    TABLES,
    TEXT_CURRENT,
    Text,
    create_indexes,
    forget,
    neighbours,
    put_row,
    state,
    text_of,
    transaction,
    write_text,
)
from golem_cli.store.search import Forks, Query, indexed_text

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

    #: What a save hands the index (``Index.changing``): the messages it wrote after those kept
    #: from the file it replaced, how many were kept (0: rewritten), how many the file holds now,
    #: the old file's signature (if known), the new file's (the text is written only if the path
    #: still names it), and every message when the saver holds them all (not a window).
    _Written = tuple[Sequence[Message], int, int, Signature | None, Signature, Sequence[Message] | None]

LEGACY_NAMES = ("index.json",)
BUSY_SECONDS = 30.0
#: How long a save's write-through waits for another process's write lock on the index.
WRITE_THROUGH_BUSY_MS = 50
#: A save that rewrites a conversation file larger than this leaves its text to be indexed by
#: the next search (``_write_text``); appends are indexed in the save whatever the size.
WRITE_THROUGH_TEXT_BYTES = 1 << 20
#: A query whose trigrams are in more conversations than this is answered conversation by
#: conversation, newest first, so a common word costs what the first screen of hits costs.
CANDIDATE_CAP = 5000

_T = TypeVar("_T")


class Index:
    """The index of the conversations in ``directory``, kept in ``path`` (opened on first use).
    ``progress``: told how a refresh that reads files is going."""

    def __init__(
        self,
        directory: Path,
        path: Path,
        *,
        limit: int = MAX_HISTORY_BYTES,
        progress: Progress | None = None,
    ) -> None:
        self.directory = directory
        self.path = path
        self.limit = limit
        self.progress = progress
        self._db: sqlite3.Connection | None = None

    # connection and recovery

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        for name in LEGACY_NAMES:
            remove_files(self.path.parent, [name])
        try:
            self._db = self._open(str(self.path))
        except sqlite3.DatabaseError:
            self._drop_files()
            try:
                self._db = self._open(str(self.path))
            except sqlite3.DatabaseError:  # unwritable: an index for this command only
                self._db = self._open(":memory:")
        return self._db

    def _open(self, target: str) -> sqlite3.Connection:
        """A connection to the index at ``target``, created or upgraded to this version's
        schema (an index of another version is rebuilt)."""
        if target != ":memory:" and not os.path.exists(target):
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
            os.close(fd)
        db = sqlite3.connect(target, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: a power cut may lose the newest change
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != INDEX_VERSION:
                with transaction(db):
                    if db.execute("PRAGMA user_version").fetchone()[0] != INDEX_VERSION:
                        _create(db)
            db.execute("SELECT count(*) FROM state").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    def _drop_files(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except OSError:
                pass

    def _guarded(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``action`` on the database; a corrupt index is deleted and rebuilt once."""
        try:
            return action(self._connect())
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
                raise
            self._drop_files()
            return action(self._connect())

    def _absent(self) -> bool:
        """No conversations directory and no index open: nothing to read, nothing to create."""
        return self._db is None and not os.path.isdir(self.directory)

    def open(self) -> None:
        """Open the index now: created, upgraded, or rebuilt if corrupt."""
        self._guarded(lambda db: None)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # bringing it up to date

    def refresh(self) -> None:
        """Bring the conversation rows up to date with the directory (refresh.py)."""
        if not self._absent():
            self._guarded(lambda db: self._up_to_date(db, text=False))

    def catch_up(self) -> None:
        """Bring the rows and the text of every conversation up to date: what a search needs."""
        if not self._absent():
            self._guarded(lambda db: self._up_to_date(db, text=True))

    def _up_to_date(self, db: sqlite3.Connection, *, text: bool) -> None:
        refresh = Refresh(self.directory, limit=self.limit, text=text, progress=self.progress)
        refresh.run(db)

    # reading

    def listing(self, limit: int | None) -> tuple[list[Entry], int, list[str], list[str]]:
        """(entries newest first, how many conversations, foreign names, the IDs around each
        entry in ID order: enough to compute unique short IDs without reading every row)."""
        if self._absent():
            return [], 0, [], []

        def read(db: sqlite3.Connection) -> tuple[list[Entry], int, list[str], list[str]]:
            self._up_to_date(db, text=False)
            sql = "SELECT meta, msig, ssig, problem FROM conversations ORDER BY updated DESC, id"
            rows = db.execute(sql + ("" if limit is None else " LIMIT ?"), () if limit is None else (max(limit, 0),))
            entries = [_entry(*row) for row in rows]
            total = db.execute("SELECT count(*) FROM conversations").fetchone()[0]
            foreign = [name for (name,) in db.execute("SELECT name FROM foreign_names ORDER BY name")]
            if limit is None or len(entries) == total:
                around = sorted(e.meta.id for e in entries)
            else:
                around = neighbours(db, [e.meta.id for e in entries])
            return entries, total, foreign, around

        return self._guarded(read)

    def neighbours(self, cids: list[str]) -> list[str]:
        """``cids`` and the stored IDs next to each in ID order, sorted: what unique prefixes
        need, without reading every ID."""
        if not cids or self._absent():
            return sorted(cids)

        def read(db: sqlite3.Connection) -> list[str]:
            self._up_to_date(db, text=False)
            return neighbours(db, cids)

        return self._guarded(read)

    def problems(self) -> list[tuple[str, str]]:
        """(ID, problem) of every conversation whose file cannot be read, by ID."""
        if self._absent():
            return []
        sql = "SELECT id, problem FROM conversations WHERE problem != '' ORDER BY id"
        return self._guarded(lambda db: [(cid, problem) for cid, problem in db.execute(sql)])

    def candidates(self, query: Query, *, since: float = 0.0) -> Generator[ConversationMeta, None, None]:
        """The readable conversations updated at or after ``since`` whose indexed text may hold
        a match of ``query`` (the caller confirms each in its file), newest first. Few enough
        candidates of the trigram table are sorted; more (a common word), or a query too short
        for trigrams, go newest first through every conversation's text, so that the first
        hits come at once and none are held. Call ``catch_up`` first."""
        if self._absent():
            return
        db = self._connect()
        fts = query.fts()
        if fts is not None:
            sql = f"SELECT DISTINCT rowid >> {PART_BITS} FROM texts WHERE texts MATCH ? LIMIT {CANDIDATE_CAP}"
            rids = [rid for (rid,) in db.execute(sql, (fts,))]
            if len(rids) < CANDIDATE_CAP:
                yield from _newest(db, rids, since)
                return
        newest = f"SELECT rid, meta FROM conversations WHERE updated >= ? AND {TEXT_CURRENT} ORDER BY updated DESC, id"
        parts = "SELECT body FROM texts WHERE rowid BETWEEN ? AND ?"
        for rid, blob in db.execute(newest, (since,)):
            if query.words:  # a query of no words ("?!") names every conversation: the files decide
                bodies = db.execute(parts, (rid << PART_BITS, ((rid + 1) << PART_BITS) - 1))
                if not any(query.admits(body) for (body,) in bodies):
                    continue
            yield _meta(blob)

    def forks(self, since: float = 0.0) -> Forks:
        """Every fork in the index with its parent, and the metadata of each of them and their
        parents updated at or after ``since`` (search.py, ``Stream``). One pass over the rows:
        only a search that shows every hit asks."""
        db = self._connect()
        parents: dict[str, str] = {}
        metas: dict[str, ConversationMeta] = {}
        for cid, blob in db.execute(_FORKS, (b'"parent"',)):
            meta = _meta(blob)
            if meta.parent:
                parents[cid] = meta.parent
                metas[cid] = meta
        others = list(set(parents.values()) - parents.keys())
        for at in range(0, len(others), 500):
            chunk = others[at : at + 500]
            sql = f"SELECT meta FROM conversations WHERE id IN ({','.join('?' * len(chunk))})"
            metas.update((meta.id, meta) for meta in (_meta(blob) for (blob,) in db.execute(sql, chunk)))
        return Forks(parents, {cid: meta for cid, meta in metas.items() if meta.updated >= since})

    # writing through

    @contextmanager
    def changing(self, cid: str) -> Iterator[Callable[..., None]]:
        """Hold the index lock while conversation ``cid`` changes on disk, then record the
        change (see the module docstring). Inside, call the yielded function with the messages
        now in the file, how many of them the file before held (0 for a rewrite) and that
        file's signature, so their text is indexed without reading the file again."""
        from golem_cli.store.locks import exclusive  # only writers need it: not imported by list and search

        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        written: list[_Written] = []
        with exclusive(self.path.with_name("index.lock")):
            try:
                before = os.stat(self.directory).st_mtime_ns
            except FileNotFoundError:
                before = None
            yield lambda *change: written.append(change)
            if before is not None:
                try:
                    self._guarded(lambda db: self._briefly(db, cid, before, written[-1] if written else None))
                except (OSError, sqlite3.Error):
                    pass  # the index is a cache: the next command refreshes it (the directory changed)

    def _briefly(self, db: sqlite3.Connection, cid: str, before: int, written: _Written | None) -> None:
        """The write-through, waiting at most ``WRITE_THROUGH_BUSY_MS`` for another process's
        write lock on the database (issue 25 item 8): the save is complete already, and an
        index left behind catches up at its next refresh."""
        db.execute(f"PRAGMA busy_timeout = {WRITE_THROUGH_BUSY_MS}")
        try:
            self._write_through(db, cid, before, written)
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")

    def _write_through(self, db: sqlite3.Connection, cid: str, before: int, written: _Written | None) -> None:
        with transaction(db):
            stored, racy = state(db)
            try:
                msig = signature(os.stat(self.directory / f"{cid}{MESSAGES_SUFFIX}"))
            except FileNotFoundError:
                forget(db, cid)
            else:
                rid = put_row(db, entry_row(build_entry(self.directory, cid, msig, limit=self.limit)))
                if written is not None and written[4] == msig:  # (else replaced since: the next refresh)
                    _write_text(db, rid, msig, written)
            after = os.stat(self.directory).st_mtime_ns
            if stored == before and not racy and after % 1_000_000_000 != 0:
                set_state(db, after, False)


#: The rows that may be forks: only a fork's metadata (JSON, its bytes as read) names a parent.
_FORKS = "SELECT id, meta FROM conversations WHERE problem = '' AND instr(meta, ?) > 0"


def _create(db: sqlite3.Connection) -> None:
    """This version's tables, in place of whatever another version left."""
    for table in TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    create_indexes(db)
    db.execute(f"PRAGMA user_version = {INDEX_VERSION}")


def _newest(db: sqlite3.Connection, rids: list[int], since: float) -> Iterator[ConversationMeta]:
    """The metadata of the readable conversations ``rids`` whose text is current, newest first."""
    sql = f"SELECT meta, updated, id FROM conversations WHERE rid = ? AND updated >= ? AND {TEXT_CURRENT}"
    rows = [row for rid in rids for row in db.execute(sql, (rid, since))]
    rows.sort(key=lambda row: (-row[1], row[2]))
    for blob, _, _ in rows:
        yield _meta(blob)


def _meta(blob: bytes) -> ConversationMeta:
    meta = decode_meta(blob)
    assert meta is not None, "the index holds metadata golem encoded"
    return meta


def _entry(blob: bytes, msig: str, ssig: str | None, problem: str) -> Entry:
    messages_sig = sig_of(msig)
    assert messages_sig is not None
    return Entry(_meta(blob), messages_sig, sig_of(ssig), problem)


def _write_text(db: sqlite3.Connection, rid: int, sig: Signature, written: _Written) -> None:
    """Make conversation ``rid``'s text that of the file just saved: one more part holding the
    new messages when the save appended them to the very file whose text the index holds (its
    signature, and its count), else all of them when the saver has them and they are short,
    else marked behind for the next search."""
    from golem_cli.core.codec.history import as_saved

    new, start, count, before, _, everything = written
    had = text_of(db, rid)
    assert had is not None
    appended = (
        start > 0
        and before is not None
        and had.sig == sig_text(before)
        and had.count == start
        and had.parts < (1 << PART_BITS) - 1  # room for another part
    )
    if not appended and (everything is None or sig[1] > WRITE_THROUGH_TEXT_BYTES):
        # A long conversation rewritten rather than appended to (a repair, normalize
        # --in-place), or a window's tail rewritten: indexing all of its text takes seconds (or
        # the file), and the save must not wait for them. Its text is marked behind instead
        # (its parts no longer count): the next search indexes it.
        db.execute("UPDATE conversations SET tsig = NULL WHERE rid = ?", (rid,))
        return
    messages = new if appended else everything
    assert messages is not None
    body = indexed_text(as_saved(m) for m in messages)  # the text the file will give back
    now = Text(sig_text(sig), count, sig[1], 0, 0)
    write_text(db, rid, body, now, keep=had.parts if appended else 0, had=had.parts)
