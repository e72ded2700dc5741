"""The index's tables, and the statements on them that need nothing but ``sqlite3``.

``index.Index`` creates these tables and keeps them current (refresh.py fills them from the
conversations directory). Two things here are read by a command before it needs the rest of
the store: the state the index was last current with, and the stored IDs next to given ones. A
new chat's banner highlights the part of its new ID that is enough to type, before the prompt
is shown, and the index's module imports the codec and the message types. When the index is
current (the conversations directory unchanged since it was recorded, and not racy: see
index.py), its answer is the one ``Index.neighbours`` gives, so ``current_neighbours`` reads it
directly; otherwise it says None and the caller asks the index, which refreshes itself first.

The words a search looks at (``search.indexed_text``) are held in parts: one for a file read
whole, one more for each save that appended messages. Each part is one row of an FTS5 table
with the trigram tokenizer and no positions (``detail=none``), whose rowid is the
conversation's rowid shifted by ``PART_BITS`` plus the part's number. A search finds the
conversations holding every trigram within the words of its terms and confirms each in the
conversation's file (docs/store.md, "Search").
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

#: The index schema this version writes (index.py creates and upgrades it).
INDEX_VERSION = 6
#: Every table, as created when the version changes (the old tables are dropped first).
TABLES = ("state", "conversations", "foreign_names", "texts")
SCHEMA = """
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS conversations (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    updated REAL NOT NULL,
    meta BLOB NOT NULL,
    msig TEXT NOT NULL,
    ssig TEXT,
    problem TEXT NOT NULL DEFAULT '',
    tsig TEXT,
    tcount INTEGER NOT NULL DEFAULT 0,
    tbytes INTEGER NOT NULL DEFAULT 0,
    tcrc INTEGER NOT NULL DEFAULT 0,
    tparts INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS foreign_names (name TEXT PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5 (body, tokenize = 'trigram case_sensitive 1', detail = 'none');
INSERT INTO texts (texts, rank) VALUES ('automerge', 16);
"""
# automerge 16 (SQLite's default is 4): a refresh commits a segment per chunk of conversations, and
# merging them less often costs 40% less to fill the table (3.0 s of CPU against 5.0 s for
# 100,000 conversations' words) for a query reading 1-6 ms instead of 0.3-3 (ADR 0034).
#: The conversations table's secondary indexes (a rebuild creates them after filling the table).
INDEXES = {
    "conversations_newest": "ON conversations (updated DESC, id)",
    "conversations_unreadable": "ON conversations (id) WHERE problem != ''",
    "conversations_text_stale": "ON conversations (rid) WHERE tsig IS NOT msig AND problem = ''",
}
#: A text part's FTS rowid: (conversation rowid << PART_BITS) | part.
PART_BITS = 24
#: A row that is readable and whose text is the one of its file.
TEXT_CURRENT = "problem = '' AND tsig IS msig"
#: A row that is readable and whose text is not the one of its file (yet).
TEXT_BEHIND = "tsig IS NOT msig AND problem = ''"

#: One row of the ``conversations`` table as refresh.py makes it: (id, updated, meta, msig,
#: ssig, problem).
Row = tuple[str, float, bytes, str, "str | None", str]
_COLUMNS = "id, updated, meta, msig, ssig, problem"
#: A new row (another process may have added it meanwhile: then its row stays).
INSERT_ROW = f"INSERT INTO conversations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
#: A row rebuilt, given its values and then its ID and the signature it had (left alone if
#: that changed meanwhile).
UPDATE_ROW = "UPDATE conversations SET updated = ?, meta = ?, msig = ?, ssig = ?, problem = ? WHERE id = ? AND msig = ?"


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction: taken at once (``BEGIN IMMEDIATE``: writers wait for each other
    up to the connection's timeout), committed at the end, rolled back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def create_indexes(db: sqlite3.Connection) -> None:
    for name, definition in INDEXES.items():
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} {definition}")


def put_row(db: sqlite3.Connection, row: Row) -> int:
    """Insert or update a conversation's row (its text, if indexed, stays until its
    signature is found changed); returns its rowid."""
    sql = (
        f"INSERT INTO conversations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
        " updated = excluded.updated, meta = excluded.meta, msig = excluded.msig, ssig = excluded.ssig,"
        " problem = excluded.problem RETURNING rid"
    )
    return int(db.execute(sql, row).fetchone()[0])


def forget(db: sqlite3.Connection, cid: str, msig: str | None = None) -> None:
    """Remove a conversation's row and text (only if its row has the signature ``msig``, when given)."""
    sql = "SELECT rid, tparts FROM conversations WHERE id = ?" + ("" if msig is None else " AND msig = ?")
    row = db.execute(sql, (cid,) if msig is None else (cid, msig)).fetchone()
    if row is not None:
        if row[1]:
            delete_text(db, row[0])
        db.execute("DELETE FROM conversations WHERE rid = ?", (row[0],))


def delete_text(db: sqlite3.Connection, rid: int, first: int = 0) -> None:
    """Remove the text parts of conversation ``rid`` from part ``first`` on."""
    db.execute(
        "DELETE FROM texts WHERE rowid BETWEEN ? AND ?", ((rid << PART_BITS) + first, ((rid + 1) << PART_BITS) - 1)
    )


class Text:
    """What a conversation's text rows say: which file they hold (``tsig``, how many messages
    and bytes, the CRC of its body) and in how many parts."""

    __slots__ = ("count", "crc", "parts", "sig", "size")

    def __init__(self, sig: str | None, count: int, size: int, crc: int, parts: int) -> None:
        self.sig, self.count, self.size, self.crc, self.parts = sig, count, size, crc, parts


def text_of(db: sqlite3.Connection, rid: int) -> Text | None:
    row = db.execute("SELECT tsig, tcount, tbytes, tcrc, tparts FROM conversations WHERE rid = ?", (rid,)).fetchone()
    return None if row is None else Text(*row)


def write_text(db: sqlite3.Connection, rid: int, body: str, now: Text, *, keep: int, had: int) -> None:
    """Make conversation ``rid``'s text its first ``keep`` parts (of the ``had`` it has) and
    ``body`` after them, and record that it is the text of the file ``now`` describes."""
    if had > keep:
        delete_text(db, rid, keep)
    parts = keep
    if body:
        db.execute("INSERT INTO texts (rowid, body) VALUES (?, ?)", ((rid << PART_BITS) | parts, body))
        parts += 1
    db.execute(_TEXT_RECORD, (now.sig, now.count, now.size, now.crc, parts, rid))


#: What a conversation's text rows hold, recorded on its row.
_TEXT_RECORD = "UPDATE conversations SET tsig = ?, tcount = ?, tbytes = ?, tcrc = ?, tparts = ? WHERE rid = ?"


def write_texts(db: sqlite3.Connection, texts: dict[str, tuple[str, Text]]) -> None:
    """``write_text`` for many conversations at once (a refresh's chunk), each by ID with its
    words and the file they were read from: written only where the row names that file now."""
    ids = list(texts)
    marks = ",".join("?" * len(ids))
    rows = db.execute(f"SELECT id, rid, msig, tparts FROM conversations WHERE id IN ({marks})", ids).fetchall()
    bodies: list[tuple[int, str]] = []
    records: list[tuple[object, ...]] = []
    for cid, rid, msig, parts in rows:
        body, now = texts[cid]
        if msig != now.sig:
            continue  # changed since it was read: the next refresh reads it again
        if parts:
            delete_text(db, rid)
        if body:
            bodies.append((rid << PART_BITS, body))
        records.append((now.sig, now.count, now.size, now.crc, 1 if body else 0, rid))
    db.executemany("INSERT INTO texts (rowid, body) VALUES (?, ?)", bodies)
    db.executemany(
        "UPDATE conversations SET tsig = ?, tcount = ?, tbytes = ?, tcrc = ?, tparts = ? WHERE rid = ?", records
    )


def state(db: sqlite3.Connection) -> tuple[int, bool]:
    """The directory mtime the index was last current with, and whether that was racy."""
    rows = dict(db.execute("SELECT key, value FROM state").fetchall())
    return int(rows.get("dir_mtime_ns", -1)), bool(rows.get("racy", 1))


def neighbours(db: sqlite3.Connection, cids: list[str]) -> list[str]:
    """``cids`` and the indexed IDs next to each in ID order, sorted."""
    near = set(cids)
    for cid in cids:
        for op, order in (("<", "DESC"), (">", "ASC")):
            q = f"SELECT id FROM conversations WHERE id {op} ? ORDER BY id {order} LIMIT 1"
            near.update(found for (found,) in db.execute(q, (cid,)))
    return sorted(near)


def current_neighbours(index_path: Path, directory: Path, cids: list[str]) -> list[str] | None:
    """``neighbours`` when the index at ``index_path`` is current for ``directory``; None
    when it is absent, outdated, stale, busy or unreadable (then ask ``Index``)."""
    try:
        dir_mtime_ns = os.stat(directory).st_mtime_ns
    except FileNotFoundError:
        return sorted(cids)  # nothing stored yet
    except OSError:
        return None
    if not os.path.isfile(index_path):
        return None
    try:
        # Read-only: closing the last read-write connection checkpoints the WAL, with fsyncs.
        with closing(sqlite3.connect(f"{index_path.resolve().as_uri()}?mode=ro", uri=True, timeout=0.5)) as db:
            if db.execute("PRAGMA user_version").fetchone()[0] != INDEX_VERSION:
                return None
            if state(db) != (dir_mtime_ns, False):
                return None
            return neighbours(db, cids)
    except (sqlite3.Error, OSError, ValueError):
        return None
