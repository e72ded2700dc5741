"""golem's own saves update the listing index in place, so `golem list` after a chat turn does
not stat every conversation file; anything else still makes the next listing refresh."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from golem_cli.core.messages import Message
from golem_cli.store import Store
from golem_cli.store import index as index_module
from golem_cli.store import refresh as refresh_module


def search(store: Store, text: str):
    return store.search(text).hits


def behind(store: Store) -> int:
    """How many conversations' text the index does not hold (a search indexes them first)."""
    from golem_cli.store.schema import TEXT_BEHIND

    db = store.index._connect()
    return int(db.execute(f"SELECT count(*) FROM conversations WHERE {TEXT_BEHIND}").fetchone()[0])


@pytest.fixture
def store(store: Store) -> Store:
    """The folder's store (conftest.py) with five conversations, listed after the racy window."""
    for i in range(5):
        store.create([Message("user", f"conversation {i}")])
    store.listing()
    time.sleep(refresh_module.RACY_SECONDS + 0.05)
    store.listing()  # now fresh and not racy
    return store


def no_scan(monkeypatch):
    def refuse(directory, rows):
        raise AssertionError("the listing rescanned the directory")

    monkeypatch.setattr(refresh_module, "scan", refuse)


def counts(store: Store) -> dict[str, int]:
    return {row.id: row.meta.messages for row in store.list()}


def test_save_updates_the_index_in_place(store, monkeypatch):
    cid = store.list()[-1].id
    store.append(cid, store.load(cid) + [Message("assistant", "more"), Message("user", "and more")])
    no_scan(monkeypatch)
    assert counts(store)[cid] == 3
    assert store.list()[0].id == cid  # most recently updated first


def test_create_title_and_delete_update_the_index_in_place(store, monkeypatch):
    new = store.create([Message("user", "fresh")])
    store.set_title(new, "A title")
    gone = store.list()[-1].id
    store.delete(gone)
    no_scan(monkeypatch)
    rows = {row.id: row.meta for row in store.list()}
    assert rows[new].title == "A title" and gone not in rows and len(rows) == 5


def test_a_change_by_another_program_still_refreshes(store):
    time.sleep(0.02)
    cid = "01a228ea-1414-732e-9d7a-7c1f891d89a7"
    (store.conversations_dir / f"{cid}.json").write_bytes(b'[{"role":"user","content":"from elsewhere"}]')
    assert cid in counts(store)


def test_a_stale_index_is_not_patched(store, monkeypatch):
    time.sleep(0.02)
    outside = "01a228ea-1414-732e-9d7a-7c1f891d89a8"
    (store.conversations_dir / f"{outside}.json").write_bytes(b"[]")
    cid = store.list()[0].id
    store.save(cid, store.load(cid))  # the index was stale before this save: left for a refresh
    assert outside in counts(store)


WRITER = """
import sys
from golem_cli.core.messages import Message
from golem_cli.store import Store
store, cid = Store(sys.argv[1]), sys.argv[2]
for i in range(25):
    store.append(cid, store.load(cid) + [Message("user", str(i))])
"""


def test_concurrent_saves_agree_with_a_rebuild(store):
    a, b = (row.id for row in store.list()[:2])
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store.root), cid]) for cid in (a, b)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    listed = counts(store)
    store.index.close()
    store.index_path.unlink()
    assert counts(store) == listed
    assert listed[a] == listed[b] == 26


def test_a_long_conversation_rewritten_leaves_its_text_to_the_next_search(tmp_path, monkeypatch):
    """A repair or normalize --in-place of a long conversation must not wait for seconds of
    trigram indexing: its text is marked behind (its old text no longer counts), and the next
    search indexes it before it answers. An append is indexed at once."""
    monkeypatch.setattr(index_module, "WRITE_THROUGH_TEXT_BYTES", 2_000)
    store = Store(tmp_path)
    old = [Message("user" if i % 2 == 0 else "assistant", f"oldword {i} " + "x" * 40) for i in range(60)]
    cid = store.create(old[:2])
    store.append(cid, old)  # an append: indexed in the save
    assert behind(store) == 0
    rewritten = [Message(m.role, m.content.replace("oldword", "newword")) for m in old]
    store.save(cid, rewritten)
    assert behind(store) == 1
    assert {h.meta.id for h in search(store, "newword")} == {cid} and not search(store, "oldword")
    assert behind(store) == 0  # the search indexed it
    store.append(cid, rewritten + [Message("user", "appendedword")])  # indexed text again: appends go in
    assert behind(store) == 0
    assert {h.meta.id for h in search(store, "appendedword")} == {cid}


def test_a_turns_save_reads_nothing_of_the_file_for_the_index(tmp_path, monkeypatch):
    """A turn's save hands the index the turn and the signature of the file it extended: the
    index adds the turn's text without the file being read (ADR 0025), and the text is the
    whole file's, as a search finds it."""
    store = Store(tmp_path)
    cid = store.create([Message("user" if i % 2 == 0 else "assistant", f"word {i} " + "x" * 200) for i in range(600)])
    resumed = Store(tmp_path)
    history = resumed.load(cid)
    read: list[int] = []
    real_read, real_pread = os.read, os.pread

    def counted(data: bytes) -> bytes:
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "read", lambda fd, n: counted(real_read(fd, n)))
    monkeypatch.setattr(os, "pread", lambda fd, n, at: counted(real_pread(fd, n, at)))
    for i in range(4):
        history = [*history, Message("user", f"turn {i}"), Message("assistant", f"reply{i} " * 20)]
        read.clear()
        resumed.append(cid, history)
        size = resumed.messages_path(cid).stat().st_size
        assert sum(read) < size // 10, read  # the end of the file and the sidecars, not its bytes
    monkeypatch.undo()
    assert behind(resumed) == 0 and {h.meta.id for h in search(resumed, "reply3")} == {cid}
    assert {h.meta.id for h in search(resumed, "word 599")} == {cid}


def test_saving_what_is_saved_keeps_a_long_conversations_text_indexed(tmp_path, monkeypatch):
    """Bytes the index holds, saved again unchanged (a session saving without a new message),
    are not a rewrite: the text stays indexed instead of being marked behind."""
    monkeypatch.setattr(index_module, "WRITE_THROUGH_TEXT_BYTES", 2_000)
    store = Store(tmp_path)
    history = [Message("user" if i % 2 == 0 else "assistant", f"word {i} " + "x" * 40) for i in range(60)]
    cid = store.create(history[:2])
    store.append(cid, history)
    assert behind(store) == 0
    store.append(cid, history)  # nothing new: nothing written
    assert behind(store) == 0
    assert Store(tmp_path).load(cid) == history and {h.meta.id for h in search(store, "word 59")} == {cid}
