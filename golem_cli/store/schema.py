"""The index's tables and what can be read from them with nothing but ``sqlite3``.

``index.Index`` creates and keeps these tables; this module only names them and reads the two
things a command may want before it needs the rest of the store: the state the index was last
current with, and the stored IDs next to given ones. A new chat's banner highlights the part of
its new ID that is enough to type, before the prompt is shown, and the index's module imports
the codec and the message types. When the index is current (the conversations directory
unchanged since it was recorded, and not racy: see index.py), its answer is the one
``Index.neighbours`` gives, so ``current_neighbours`` reads it directly; otherwise it says None
and the caller asks the index, which refreshes itself first.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

#: The index schema this version writes (index.py creates and upgrades it).
INDEX_VERSION = 4
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
    tcrc INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS foreign_names (name TEXT PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5 (body, original UNINDEXED, role UNINDEXED, tokenize = 'trigram');
"""
#: The conversations table's secondary indexes (a rebuild creates them after filling the table).
INDEXES = {
    "conversations_newest": "ON conversations (updated DESC, id)",
    "conversations_unreadable": "ON conversations (id) WHERE problem != ''",
    "conversations_text_stale": "ON conversations (rid) WHERE tsig IS NOT msig AND problem = ''",
}


def create_indexes(db: sqlite3.Connection) -> None:
    for name, definition in INDEXES.items():
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} {definition}")


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
