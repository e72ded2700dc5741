"""The index: what ``golem list`` and ``golem search`` read instead of every conversation file.

``index.sqlite`` (SQLite, WAL mode, docs/adr/0009-sqlite-index.md) holds one row per
conversation (its metadata and the ``stat`` signature of its messages file and sidecar) and an
FTS5 table with the text of every message (content, thinking, tool names and arguments), one
row per message. The JSON files stay the only truth: delete the index and the next command
rebuilds it; a corrupt one is deleted and rebuilt, never fatal.

Staying current with files golem did not write (sync tools, a Go program, hand edits):

- **Metadata.** The index records the conversations directory's modification time. Every save
  replaces files by rename, which changes it, so one ``stat`` of the directory tells whether
  anything was added, replaced or removed. When it was, a refresh stats each messages file and
  rebuilds only the rows whose signature changed (from the sidecar when it describes the
  current file, else from the messages). Rows about to be shown are re-checked against both
  files (``recheck``), which catches in-place edits that leave the directory alone.
- **Racy timestamps.** An index refreshed within ``RACY_SECONDS`` of the directory's last
  change (``RACY_SECONDS_COARSE`` on whole-second file systems) is marked racy and refreshed
  again next time, so a change within the same clock tick is not missed.
- **Text.** Each row records the signature of the file whose text is in the FTS table. A search
  first re-indexes the rows where the two differ, so a first search after a rebuild pays for
  reading every file once and later searches only for what changed.

Write-through: golem's own changes (every save, a title, a delete) run inside ``changing``,
which holds ``index.lock`` across the change so golem processes never interleave there, then
update that conversation's row and text in one transaction. A save that only appended
messages (every chat turn) indexes only the new messages: the row keeps the CRC-32 of the
indexed file minus its closing bracket, so an append is recognised from the new bytes alone.
When the index was fresh before the change, the directory's new mtime is recorded too, so the
next listing does not stat every file. The price: a file another program writes within the
same timestamp tick as a golem save goes unseen until the directory next changes (skipped on
whole-second file systems, where the tick is too wide).

Two processes: SQLite's WAL lets readers go on while one process writes; writers take the
database's write lock (``BEGIN IMMEDIATE``) and wait up to ``BUSY_SECONDS`` for each other.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from golem_cli.store.atomic import PRIVATE_FILE, remove_files, remove_stale_temp_files
from golem_cli.store.files import MAX_HISTORY_BYTES, MESSAGES_SUFFIX, META_SUFFIX, read_regular
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
from golem_cli.store.rebuild import Row, _Stopped, entry_row, rows, scan
from golem_cli.store.saving import BodyCrc, body_crc
from golem_cli.store.schema import INDEX_VERSION, INDEXES, SCHEMA, TABLES, create_indexes, neighbours, state

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

    #: What a save hands the index (``Index.changing``): messages, their bytes, their CRC if known.
    _Written = tuple[Sequence[Message], bytes, BodyCrc | None]

LEGACY_NAMES = ("index.json",)
RACY_SECONDS = 0.1
RACY_SECONDS_COARSE = 2.0
BUSY_SECONDS = 30.0

_T = TypeVar("_T")


# --- the text of a message, as a search looks at it -----------------------------------------

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


class _Outdated(Exception):
    """Internal: the index is missing or was made by another version of golem."""


# --- the database --------------------------------------------------------------------------------


class Index:
    """The index of the conversations in ``directory``, kept in ``path`` (opened on first use)."""

    def __init__(self, directory: Path, path: Path, *, limit: int = MAX_HISTORY_BYTES) -> None:
        self.directory = directory
        self.path = path
        self.limit = limit
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

    def _open(self, target: str, *, upgrade: bool = True) -> sqlite3.Connection:
        """A connection to the index at ``target``, created or upgraded to this version's
        schema; with ``upgrade=False``, ``_Outdated`` instead when it is missing or older."""
        if not upgrade and not os.path.exists(target):
            raise _Outdated(target)
        if target != ":memory:" and not os.path.exists(target):
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
            os.close(fd)
        db = sqlite3.connect(target, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: a power cut may lose the newest change
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != INDEX_VERSION and not upgrade:
                raise _Outdated(target)
            if version != INDEX_VERSION:
                db.execute("BEGIN IMMEDIATE")
                if db.execute("PRAGMA user_version").fetchone()[0] != INDEX_VERSION:
                    for table in TABLES:
                        db.execute(f"DROP TABLE IF EXISTS {table}")
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    create_indexes(db)
                    db.execute(f"PRAGMA user_version = {INDEX_VERSION}")
                db.execute("COMMIT")
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

    # state

    @staticmethod
    def _state(db: sqlite3.Connection) -> tuple[int, bool]:
        return state(db)

    @staticmethod
    def _set_state(db: sqlite3.Connection, dir_mtime_ns: int, racy: bool) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)",
            [("dir_mtime_ns", dir_mtime_ns), ("racy", int(racy))],
        )

    # keeping the metadata current

    def refresh(self, *, stop: Callable[[], bool] | None = None) -> bool:
        """Bring the conversation rows up to date with the directory (see the module
        docstring). ``stop()`` is asked now and then; when it says so, nothing is changed and
        False is returned."""
        try:
            self._guarded(lambda db: self._refresh(db, stop))
        except _Stopped:
            return False
        return True

    def _refresh(self, db: sqlite3.Connection, stop: Callable[[], bool] | None = None) -> None:
        try:
            dir_mtime_ns = os.stat(self.directory).st_mtime_ns
        except FileNotFoundError:
            dir_mtime_ns = -1
        stored, racy = self._state(db)
        if stored == dir_mtime_ns and not racy:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            stored, racy = self._state(db)
            if stored != dir_mtime_ns or racy:
                self._rescan(db, dir_mtime_ns, stop)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _rescan(self, db: sqlite3.Connection, dir_mtime_ns: int, stop: Callable[[], bool] | None = None) -> None:
        checked_at = time.time_ns()
        messages, sidecars, foreign, temps = scan(self.directory)
        known = {cid: (msig, ssig) for cid, msig, ssig in db.execute("SELECT id, msig, ssig FROM conversations")}
        gone = [cid for cid in known if cid not in messages]
        for cid in gone:
            self._forget(db, cid)
        new: list[tuple[str, Signature]] = []
        changed: list[tuple[str, Signature]] = []
        for cid, msig in messages.items():
            prev = known.get(cid)
            if prev is None:
                new.append((cid, msig))
            elif prev[0] != sig_text(msig) or (prev[1] is not None) != (cid in sidecars):
                changed.append((cid, msig))
        # An empty table filled at once builds its indexes afterwards, in one sort each.
        bulk = not known and len(new) >= BULK_ROWS
        del known
        for row in rows(self.directory, changed, sidecars, limit=self.limit, stop=stop):
            self._put(db, row)
        new.sort(key=itemgetter(0))  # in ID order: the ID index grows at its end
        if bulk:
            for name in INDEXES:
                db.execute(f"DROP INDEX IF EXISTS {name}")
        db.executemany(
            "INSERT INTO conversations (id, updated, meta, msig, ssig, problem) VALUES (?, ?, ?, ?, ?, ?)",
            rows(self.directory, new, sidecars, limit=self.limit, stop=stop),
        )
        if bulk:
            create_indexes(db)
        db.execute("DELETE FROM foreign_names")
        db.executemany("INSERT OR IGNORE INTO foreign_names (name) VALUES (?)", [(n,) for n in foreign])
        orphans = [f"{cid}{META_SUFFIX}" for cid in sidecars if cid not in messages]
        if orphans:  # only an interrupted delete leaves a sidecar without its messages
            remove_files(self.directory, orphans)
        if temps:
            remove_stale_temp_files(self.directory, temps)
        window = RACY_SECONDS_COARSE if dir_mtime_ns % 1_000_000_000 == 0 else RACY_SECONDS
        self._set_state(db, dir_mtime_ns, checked_at - dir_mtime_ns < window * 1e9)

    @staticmethod
    def _put(db: sqlite3.Connection, row: Row) -> int:
        """Insert or update a conversation's row (its text, if indexed, stays until a search
        or a save finds its signature changed); returns its rowid."""
        found = db.execute("SELECT rid FROM conversations WHERE id = ?", (row[0],)).fetchone()
        if found is None:
            cursor = db.execute(
                "INSERT INTO conversations (id, updated, meta, msig, ssig, problem) VALUES (?, ?, ?, ?, ?, ?)", row
            )
            return int(cursor.lastrowid or 0)
        db.execute("UPDATE conversations SET updated = ?, meta = ?, msig = ?, ssig = ?, problem = ? WHERE rid = ?",
                   (*row[1:], found[0]))  # fmt: skip
        return int(found[0])

    @staticmethod
    def _forget(db: sqlite3.Connection, cid: str) -> None:
        row = db.execute("SELECT rid FROM conversations WHERE id = ?", (cid,)).fetchone()
        if row is not None:
            _delete_texts(db, row[0])
            db.execute("DELETE FROM conversations WHERE rid = ?", (row[0],))

    # reading

    def listing(self, limit: int | None) -> tuple[list[Entry], int, list[str], list[str]]:
        """(entries newest first, how many conversations, foreign names, the IDs around each
        entry in ID order: enough to compute unique short IDs without reading every row)."""
        if self._absent():
            return [], 0, [], []

        def read(db: sqlite3.Connection) -> tuple[list[Entry], int, list[str], list[str]]:
            self._refresh(db)
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
            self._refresh(db)
            return neighbours(db, cids)

        return self._guarded(read)

    def problems(self) -> list[tuple[str, str]]:
        """(ID, problem) of every conversation whose file cannot be read, by ID."""
        if self._absent():
            return []
        sql = "SELECT id, problem FROM conversations WHERE problem != '' ORDER BY id"
        return self._guarded(lambda db: [(cid, problem) for cid, problem in db.execute(sql)])

    # writing through

    @contextmanager
    def changing(self, cid: str) -> Iterator[Callable[..., None]]:
        """Hold the index lock while conversation ``cid`` changes on disk, then record the
        change (see the module docstring). Inside, call the yielded function with the messages
        and the bytes just written (and their ``BodyCrc`` when known), so their text is indexed
        without reading the file again."""
        from golem_cli.store.locks import exclusive  # only writers need it: not imported by list and search

        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        written: list[_Written] = []
        with exclusive(self.path.with_name("index.lock")):
            try:
                before = os.stat(self.directory).st_mtime_ns
            except FileNotFoundError:
                before = None
            yield lambda messages, data, crc=None: written.append((messages, data, crc))
            if before is not None:
                try:
                    self._guarded(lambda db: self._write_through(db, cid, before, written[-1] if written else None))
                except (OSError, sqlite3.Error):
                    pass  # the index is a cache: the next command refreshes it

    def _write_through(self, db: sqlite3.Connection, cid: str, before: int, written: _Written | None) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            stored, racy = self._state(db)
            try:
                msig = signature(os.stat(self.directory / f"{cid}{MESSAGES_SUFFIX}"))
            except FileNotFoundError:
                self._forget(db, cid)
            else:
                entry = build_entry(self.directory, cid, msig, limit=self.limit)
                rid = self._put(db, entry_row(entry))
                if written is not None and written[1] and len(written[1]) == msig[1]:
                    _index_text(db, rid, msig, written[0], written[1], crc=written[2])
            after = os.stat(self.directory).st_mtime_ns
            if stored == before and not racy and after % 1_000_000_000 != 0:
                self._set_state(db, after, False)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # searching

    def search_plan(self) -> list[ConversationMeta] | None:
        """Get ready to answer a search: the conversations whose text the index does not hold
        (their files must be searched), or None when the index cannot answer at all (missing,
        made by another version of golem, corrupt): then every file is searched, and the
        index is built in the background (builder.py).

        A few conversations behind (``INLINE_TEXTS``: files changed by another program) are
        indexed here and now."""
        if self._absent():
            return []
        if self._db is None:
            try:
                self._db = self._open(str(self.path), upgrade=False)
            except (_Outdated, sqlite3.DatabaseError):
                return None
        try:
            return self._plan(self._db)
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
                raise
            return None

    def _plan(self, db: sqlite3.Connection) -> list[ConversationMeta]:
        self._refresh(db)
        behind = db.execute(f"SELECT meta, msig FROM conversations WHERE {_TEXT_BEHIND}").fetchall()
        if not behind:
            return []
        if len(behind) <= INLINE_TEXTS and sum(_size_of(msig) for _, msig in behind) <= INLINE_TEXT_BYTES:
            self._update_texts(db)
            behind = db.execute(f"SELECT meta, msig FROM conversations WHERE {_TEXT_BEHIND}").fetchall()
        return [_meta(blob) for blob, _ in behind]

    def texts_behind(self) -> int:
        """How many conversations' text is not indexed yet (0 when there is no index)."""
        if self._db is None and not os.path.exists(self.path):
            return 0
        try:
            return int(
                self._guarded(
                    lambda db: db.execute(f"SELECT count(*) FROM conversations WHERE {_TEXT_BEHIND}").fetchone()[0]
                )
            )
        except (OSError, sqlite3.Error):
            return 0

    def update_texts(self, *, seconds: float | None = None, stop: Callable[[], bool] | None = None) -> bool:
        """Index the text of the conversations whose file changed since their text was
        indexed, in write transactions of about ``TEXT_TRANSACTION_SECONDS`` (saves by other
        processes go on in between); at most ``seconds`` of work, and ``stop()`` is asked
        between transactions. True when every text is indexed."""
        if self._absent():
            return True
        return self._guarded(lambda db: self._update_texts(db, seconds=seconds, stop=stop))

    def _update_texts(
        self, db: sqlite3.Connection, *, seconds: float | None = None, stop: Callable[[], bool] | None = None
    ) -> bool:
        from golem_cli.core.codec.history import load_history
        from golem_cli.core.errors import HistoryFormatError

        self._refresh(db)
        todo = db.execute(
            f"SELECT rid, id, msig FROM conversations WHERE {_TEXT_BEHIND} ORDER BY updated DESC"
        ).fetchall()
        started = time.monotonic()
        done = 0
        while done < len(todo):
            if stop is not None and stop():
                return False
            if seconds is not None and time.monotonic() - started > seconds:
                return False
            db.execute("BEGIN IMMEDIATE")
            try:
                until, began = time.monotonic() + TEXT_TRANSACTION_SECONDS, done
                while done < len(todo) and (done == began or time.monotonic() < until):
                    rid, cid, msig = todo[done]
                    done += 1
                    current = db.execute("SELECT msig, tsig FROM conversations WHERE rid = ?", (rid,)).fetchone()
                    if current is None or current[0] != msig or current[1] == msig:
                        continue  # changed, removed or indexed by another process meanwhile
                    try:
                        data = read_regular(self.directory / f"{cid}{MESSAGES_SUFFIX}", self.limit, follow=False)
                        messages = load_history(data)
                    except (OSError, HistoryFormatError):
                        continue  # the listing marks it; search skips it
                    sig = sig_of(msig)
                    if sig is not None and len(data) == sig[1]:
                        _index_text(db, rid, sig, messages, data, full=True)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return True

    def system_messages_before(self, cid: str, index: int) -> int:
        """How many of the first ``index`` messages of conversation ``cid`` (as its text is
        indexed) are system messages: a hit's number as ``golem show`` counts it."""
        db = self._connect()
        row = db.execute("SELECT rid FROM conversations WHERE id = ?", (cid,)).fetchone()
        if row is None or index <= 0:
            return 0
        base = row[0] << MESSAGE_BITS
        sql = "SELECT count(*) FROM texts WHERE rowid BETWEEN ? AND ? AND role = 'system'"
        return int(db.execute(sql, (base, base + index - 1)).fetchone()[0])

    def candidates(
        self, match: str | None, *, role: str, since: float
    ) -> Iterator[tuple[ConversationMeta, int, str, str]]:
        """(metadata, message index, role, text) of messages that may match, newest
        conversation first and in message order within one. ``match`` is an FTS5 query over the
        trigram index (None: every message). The caller decides what really matches.
        Conversations whose indexed text is behind their file are left out (``search_plan``
        names them)."""
        if self._absent():
            return
        db = self._connect()
        role_sql = " AND t.role = :role" if role else ""
        args: dict[str, object] = {"match": match, "role": role, "since": since}
        current = "problem = '' AND tsig IS msig"
        if match is not None:
            capped = f"SELECT t.rowid FROM texts t WHERE texts MATCH :match{role_sql} LIMIT {CANDIDATE_CAP}"
            rowids = [r for (r,) in db.execute(capped, args)]
            if len(rowids) < CANDIDATE_CAP:  # few enough: read just those, newest first
                by_rid: dict[int, list[int]] = {}
                for rowid in rowids:
                    by_rid.setdefault(rowid >> MESSAGE_BITS, []).append(rowid)
                order = f"SELECT rid, meta, updated FROM conversations WHERE rid = ? AND updated >= ? AND {current}"
                chosen = [row for rid in by_rid for row in db.execute(order, (rid, since))]
                chosen.sort(key=lambda row: (-row[2], _meta(row[1]).id))
                text = "SELECT role, coalesce(original, body) FROM texts WHERE rowid = ?"
                for rid, blob, _ in chosen:
                    meta = _meta(blob)
                    for rowid in sorted(by_rid[rid]):
                        for role_, body in db.execute(text, (rowid,)):
                            yield meta, rowid & ((1 << MESSAGE_BITS) - 1), role_, body
                return
        newest = f"SELECT rid, meta FROM conversations WHERE updated >= ? AND {current} ORDER BY updated DESC, id"
        for rid, blob in db.execute(newest, (since,)).fetchall():
            meta = _meta(blob)
            low, high = rid << MESSAGE_BITS, ((rid + 1) << MESSAGE_BITS) - 1
            rows = db.execute(
                "SELECT t.rowid, t.role, coalesce(t.original, t.body) FROM texts t"
                f" WHERE t.rowid BETWEEN :low AND :high{role_sql}"
                + (" AND texts MATCH :match" if match is not None else "") + " ORDER BY t.rowid",
                args | {"low": low, "high": high},
            )  # fmt: skip
            for rowid, role_, body in rows:
                yield meta, rowid & ((1 << MESSAGE_BITS) - 1), role_, body


#: A row whose file changed since its text was indexed (a readable one).
_TEXT_BEHIND = "tsig IS NOT msig AND problem = ''"
#: A search indexes this many conversations' text itself (at most ``INLINE_TEXT_BYTES`` of
#: files); more are searched in their files and indexed in the background.
INLINE_TEXTS = 64
INLINE_TEXT_BYTES = 4 << 20
#: A save that rewrites a conversation file larger than this leaves its text to be indexed
#: later (``_index_text``); appends are indexed in the save whatever the size.
WRITE_THROUGH_TEXT_BYTES = 1 << 20
#: A refresh that fills an empty table with this many rows builds its indexes afterwards.
BULK_ROWS = 1000
#: How long one write transaction of text indexing lasts at most (saves wait for it).
TEXT_TRANSACTION_SECONDS = 0.2
#: A query matching more messages than this is answered conversation by conversation, newest
#: first, so a common word costs what the first screen of hits costs.
CANDIDATE_CAP = 5000


def _size_of(msig: str) -> int:
    sig = sig_of(msig)
    return sig[1] if sig is not None else 0


def _meta(blob: bytes) -> ConversationMeta:
    meta = decode_meta(blob)
    assert meta is not None, "the index holds metadata golem encoded"
    return meta


def _entry(blob: bytes, msig: str, ssig: str | None, problem: str) -> Entry:
    messages_sig = sig_of(msig)
    assert messages_sig is not None
    return Entry(_meta(blob), messages_sig, sig_of(ssig), problem)


def _delete_texts(db: sqlite3.Connection, rid: int, first: int = 0) -> None:
    db.execute(
        "DELETE FROM texts WHERE rowid BETWEEN ? AND ?",
        ((rid << MESSAGE_BITS) + first, ((rid + 1) << MESSAGE_BITS) - 1),
    )


def _index_text(
    db: sqlite3.Connection,
    rid: int,
    sig: Signature,
    messages: Sequence[Message],
    data: bytes,
    *,
    full: bool = False,
    crc: BodyCrc | None = None,
) -> None:
    """Make the FTS rows of conversation ``rid`` hold ``messages`` (the content of ``data``):
    only the new messages when ``data`` appends to the indexed file, else all of them.
    ``full``: the messages were read from ``data`` (not given by a save), index them all.
    ``crc``: ``data``'s CRCs as the save knows them (saving.py): a turn appended to a file
    whose CRC the save knows reads only the turn for them."""
    row = db.execute("SELECT tsig, tcount, tbytes, tcrc FROM conversations WHERE rid = ?", (rid,)).fetchone()
    start, prefix = 0, 0
    if not full and row is not None and row[0] is not None and 1 < row[2] <= len(data) and row[1] <= len(messages):
        prefix = crc.of_prefix(row[2]) if crc is not None else body_crc(memoryview(data)[: row[2]])
        if prefix == row[3]:
            start = row[1]
    if not full and start == 0 and len(data) > WRITE_THROUGH_TEXT_BYTES:
        # A long conversation rewritten rather than appended to (a repair, normalize
        # --in-place): replacing its trigram rows takes seconds per 100,000 messages, and the
        # save must not wait for them. Its text is marked behind instead (the stale rows are
        # hidden, since tsig no longer matches): a search reads its file meanwhile and has the
        # background builder index it, as for a file changed by another program.
        db.execute("UPDATE conversations SET tsig = NULL WHERE rid = ?", (rid,))
        return
    if row is not None and (row[0] is not None or row[1]):  # something of it is indexed
        _delete_texts(db, rid, start)
    limit = min(len(messages), 1 << MESSAGE_BITS)
    base = rid << MESSAGE_BITS
    new = messages[start:limit]
    if not full:  # messages a save is writing: their text as the file will give it back
        from golem_cli.core.codec.history import as_saved

        new = [as_saved(m) for m in new]
    db.executemany(
        "INSERT INTO texts (rowid, body, original, role) VALUES (?, ?, ?, ?)",
        ((base + start + i, *indexed_text(message_text(m)), m.role) for i, m in enumerate(new)),
    )
    if crc is not None:
        whole = crc.body()
    elif len(data) > 1:
        whole = body_crc(data, max(row[2] - 1, 0), prefix) if start and row is not None else body_crc(data)
    else:
        whole = 0
    db.execute(
        "UPDATE conversations SET tsig = ?, tcount = ?, tbytes = ?, tcrc = ? WHERE rid = ?",
        (sig_text(sig), len(messages), len(data), whole, rid),
    )
