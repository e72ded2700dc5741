"""The stored IDs next to given ones, read from a current index with nothing but ``sqlite3``.

A new chat's banner highlights the part of its new ID that is enough to type, before the
prompt is shown; ``index.Index`` imports the codec and the message types to keep itself
current, which costs more than the rest of what the prompt needs. When the index is current
(the conversations directory unchanged since it was recorded, and not racy: see index.py),
its answer is the one ``Index.neighbours`` gives, so this reads it directly; otherwise it
says None and the caller asks the index, which refreshes itself first.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

from golem_cli.store.layout import CONVERSATIONS_DIR, INDEX_NAME, MESSAGES_NAME

#: The index schema this version writes (index.py creates and upgrades it).
INDEX_VERSION = 4


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


def unique_prefix(root: Path, cid: str) -> int:
    """How many leading characters of ``cid`` tell it apart from the IDs stored under
    ``root`` (``Store.unique_prefixes``): from the index when it is current, else from the
    directory's names (what a refresh of the index would find, without its stats and writes)."""
    from golem_cli.store.refs import unique_prefix_among

    ids = current_neighbours(root / INDEX_NAME, root / CONVERSATIONS_DIR, [cid])
    if ids is None:
        try:
            names = os.listdir(root / CONVERSATIONS_DIR)
        except FileNotFoundError:
            names = []
        ids = sorted({cid, *(name[:36] for name in names if MESSAGES_NAME.match(name))})
    return unique_prefix_among(ids, cid)
