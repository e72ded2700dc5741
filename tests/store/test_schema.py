"""``schema.current_neighbours``: the IDs next to a new one, read from the index with nothing but sqlite3 when
the index is current (a new chat's banner, before its prompt), and None whenever the index
would have to look at the files first."""

from __future__ import annotations

import os
import sqlite3
import time

from golem_cli.core.ids import new_id
from golem_cli.core.messages import Message
from golem_cli.store import Store, schema
from golem_cli.store.refs import unique_prefix


def _store_with(tmp_path, n: int) -> Store:
    store = Store(tmp_path)
    for i in range(n):
        store.create([Message(role="user", content=f"conversation {i}")])
    return store


def _settled(store: Store) -> None:
    """Wait out the index's racy window, then let it record the directory as current."""
    time.sleep(0.25)
    store.list()
    store.list()


def test_a_current_index_answers_as_the_index_does(tmp_path):
    store = _store_with(tmp_path, 5)
    _settled(store)
    cid = new_id()
    assert schema.current_neighbours(store.index_path, store.conversations_dir, [cid]) == store.index.neighbours([cid])
    assert unique_prefix(tmp_path, cid) == store.unique_prefixes([cid])[cid] > 8


def test_a_file_added_behind_the_index_is_left_to_the_index(tmp_path):
    store = _store_with(tmp_path, 2)
    _settled(store)
    other = Store(tmp_path / "elsewhere")
    added = other.create([Message(role="user", content="synced in")])
    os.rename(other.messages_path(added), store.messages_path(added))  # as a sync tool would
    assert schema.current_neighbours(store.index_path, store.conversations_dir, [added]) is None
    cid = added[:-1] + ("0" if added[-1] != "0" else "1")  # differs from it in the last character only
    assert unique_prefix(tmp_path, cid) == 36  # from the directory's names
    assert Store(tmp_path).unique_prefixes([cid])[cid] == 36


def test_no_index_no_answer_and_no_conversations_nothing_to_tell_apart(tmp_path):
    store = _store_with(tmp_path, 1)
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{store.index_path}{suffix}"):
            os.unlink(f"{store.index_path}{suffix}")
    assert schema.current_neighbours(store.index_path, store.conversations_dir, ["x"]) is None
    cid = new_id()
    assert unique_prefix(tmp_path, cid) == Store(tmp_path).unique_prefixes([cid])[cid]
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{store.index_path}{suffix}"):
            os.unlink(f"{store.index_path}{suffix}")
    unique_prefix(tmp_path, cid)
    assert not (tmp_path / "index.sqlite").exists()  # asking did not create one
    empty = tmp_path / "empty"
    assert schema.current_neighbours(empty / "index.sqlite", empty / "conversations", [cid]) == [cid]
    assert unique_prefix(empty, cid) == 1


def test_an_index_of_another_version_or_a_corrupt_one_is_left_to_the_index(tmp_path):
    store = _store_with(tmp_path, 2)
    _settled(store)
    store.index.close()
    db = sqlite3.connect(store.index_path)
    db.execute(f"PRAGMA user_version = {schema.INDEX_VERSION + 1}")
    db.close()
    assert schema.current_neighbours(store.index_path, store.conversations_dir, [new_id()]) is None
    store.index_path.write_bytes(b"not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{store.index_path}{suffix}"):
            os.unlink(f"{store.index_path}{suffix}")
    assert schema.current_neighbours(store.index_path, store.conversations_dir, [new_id()]) is None
