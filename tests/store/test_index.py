"""Metadata beside each conversation, rebuildable from the messages; the listing index and
its staleness checks."""

from __future__ import annotations

import os
import time
from pathlib import Path

from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store, schema
from golem_cli.store import refresh as refresh_mod


def search(store: Store, text: str):
    return store.search(text).hits


P = "0190a1b2-0000-7000-8000-000000000001"


def msgs(n: int, cid: str = "") -> list[Message]:
    return [Message("user" if i % 2 == 0 else "assistant", f"m{i}", conversation_id=cid) for i in range(n)]


def ids(store: Store) -> list[str]:
    return [c.id for c in store.list()]


def test_list_is_newest_first_and_limited(store):
    a = store.create(msgs(1))
    b = store.create(msgs(2))
    c = store.create(msgs(3))
    assert ids(store) == [c, b, a]
    store.save(a, msgs(4))
    assert ids(store) == [a, c, b]
    assert [x.id for x in store.list(limit=2)] == [a, c]
    assert store.list(limit=0) == []
    listing = store.listing(limit=1)
    assert listing.total == 3 and len(listing.conversations) == 1
    assert listing.neighbours == [a, b]  # the row shown and the ID beside it (IDs sort by creation)


def test_lost_sidecar_is_derived_from_the_messages(store):
    parent = store.create(msgs(2, P), cid=P)
    child = store.fork(parent, 2)
    store.append(child, store.load(child) + msgs(2, child))
    store.meta_path(child).unlink()
    meta = store.meta(child)
    assert meta.messages == 4 and meta.summary == "m0"
    assert (meta.parent, meta.fork_at) == (P, 2)  # from the conversation stamps
    assert meta.created > 0 and meta.updated > 0
    listed = {c.id: c for c in store.list()}
    assert listed[child].meta.parent == P and listed[child].meta.messages == 4


def test_stale_sidecar_keeps_title_and_model_but_recounts(store):
    cid = store.create(msgs(2), title="kept", model="m:kept")
    store.list()  # build the index
    # a crash between the two writes: new messages, old sidecar
    store.messages_path(cid).write_bytes(dump_history(msgs(5)))
    meta = store.meta(cid)
    assert (meta.title, meta.model, meta.messages) == ("kept", "m:kept", 5)
    assert store.list()[0].meta.messages == 5


def test_deleting_the_index_rebuilds_it(store):
    a = store.create(msgs(1), title="one")
    b = store.create(msgs(3), title="three")
    before = store.list()
    store.index.close()
    store.index_path.unlink()
    assert store.list() == before
    assert {c.meta.title for c in before} == {"one", "three"} and {a, b} == {c.id for c in before}


def test_a_corrupt_index_is_rebuilt_not_fatal(store):
    store.create(msgs(1), title="one")
    before = store.list()
    for garbage in (b"\x00garbage", b"SQLite format 3\x00" + b"\xff" * 5000):
        store.index.close()
        for suffix in ("-wal", "-shm"):
            Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
        store.index_path.write_bytes(garbage)
        assert Store(store.root).list() == before
        assert [h.meta.title for h in search(Store(store.root), "m0")] == ["one"]


def test_an_old_index_json_is_removed(store):
    store.create(msgs(1))
    (store.root / "index.json").write_text("{}")  # golem's earlier listing cache
    Store(store.root).list()
    assert not (store.root / "index.json").exists()


def test_index_is_used_when_fresh(store, monkeypatch):
    for n in range(3):
        store.create(msgs(n + 1))
    time.sleep(refresh_mod.RACY_SECONDS + 0.05)
    store.list()  # refreshed long enough after the last change: not racy
    calls = []
    monkeypatch.setattr(refresh_mod, "scan", lambda d, rows: calls.append(d) or ({}, {}, [], []))
    assert len(store.list()) == 3
    assert calls == []


def test_changes_are_seen_after_a_fresh_index(store):
    a = store.create(msgs(1))
    time.sleep(refresh_mod.RACY_SECONDS + 0.05)
    store.list()
    b = store.create(msgs(2))  # a rename in the directory changes its mtime
    assert set(ids(store)) == {a, b}
    os.unlink(store.messages_path(a))  # removed behind golem's back
    assert ids(store) == [b]


def test_in_place_edit_of_a_shown_row_is_noticed(store):
    cid = store.create(msgs(2))
    store.list()
    with open(store.messages_path(cid), "r+b") as f:  # same inode, directory untouched
        f.write(dump_history(msgs(3)))
        f.truncate()
    assert store.list()[0].meta.messages == 3


def test_foreign_files_orphan_sidecars_and_stale_temp_files(store):
    cid = store.create(msgs(1))
    d = store.conversations_dir
    (d / "notes.txt").write_text("mine")
    (d / "not-an-id.json").write_text("[]")
    (d / "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.json").mkdir()
    orphan = d / "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c.meta.json"
    orphan.write_text("{}")
    old_tmp = d / f".{cid}.json.123.abcd.tmp"
    old_tmp.write_text("torn")
    os.utime(old_tmp, (time.time() - 7200, time.time() - 7200))
    new_tmp = d / f".{cid}.json.124.abcd.tmp"
    new_tmp.write_text("being written")
    listing = store.listing()
    assert [c.id for c in listing.conversations] == [cid]
    assert listing.foreign == sorted(["notes.txt", "not-an-id.json", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.json"])
    assert not orphan.exists()
    assert not old_tmp.exists() and new_tmp.exists()


def test_unreadable_conversations_are_marked_not_fatal(store):
    good = store.create(msgs(2))
    bad = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    store.messages_path(bad).write_bytes(b"[{")
    rows = {c.id: c for c in store.list()}
    assert not rows[good].problem and rows[good].meta.messages == 2
    assert rows[bad].problem and "line 1, column 3" in rows[bad].problem


def test_unwritable_index_still_lists(store):
    store.create(msgs(1))
    store.index.close()
    store.index_path.unlink()
    store.index_path.mkdir()  # cannot be a database
    fresh = Store(store.root)
    assert len(fresh.list()) == 1
    assert [h.message_index for h in search(fresh, "m0")] == [0]


def test_racy_index_is_rechecked(store, monkeypatch):
    monkeypatch.setattr(refresh_mod, "RACY_SECONDS", 60.0)  # the test must not depend on timing
    a = store.create(msgs(1))
    store.list()  # refreshed within RACY_SECONDS of the last change: racy
    # a change that keeps the directory mtime (same timestamp tick) is still found
    mtime = os.stat(store.conversations_dir).st_mtime_ns
    b = store.create(msgs(2))
    os.utime(store.conversations_dir, ns=(mtime, mtime))
    assert set(ids(store)) == {a, b}


def test_a_rebuild_gives_the_rows_the_careful_reader_gives(store, monkeypatch):
    """A rebuild reads sidecars the quick way (refresh.py) and fills an empty table before
    indexing it; every odd sidecar must still give the row ``build_entry`` gives."""
    from golem_cli.store.meta import build_entry, encode_meta, signature

    monkeypatch.setattr(refresh_mod, "BULK_ROWS", 2)
    d = store.conversations_dir
    made = [store.create(msgs(n % 4 + 1), title=f"t{n}") for n in range(13)]
    plain, missing, stale, _, symlinked, fifo, directory, padded, empty, extra, garbage, broken, other_id = made
    store.meta_path(missing).unlink()
    store.messages_path(stale).write_bytes(dump_history(msgs(7)))
    store.meta_path(other_id).write_bytes(store.meta_path(plain).read_bytes())  # describes a file of its size
    aside = store.root / "aside.meta.json"
    aside.write_bytes(store.meta_path(symlinked).read_bytes())
    store.meta_path(symlinked).unlink()
    store.meta_path(symlinked).symlink_to(aside)
    store.meta_path(fifo).unlink()
    os.mkfifo(store.meta_path(fifo))
    store.meta_path(directory).unlink()
    store.meta_path(directory).mkdir()
    padded_meta = store.meta_path(padded).read_bytes()
    store.meta_path(padded).write_bytes(padded_meta[:-1] + b" " * refresh_mod.QUICK_SIDECAR_BYTES + b"}")
    store.meta_path(empty).write_bytes(b"")
    store.meta_path(extra).write_bytes(store.meta_path(extra).read_bytes()[:-1] + b',"future":[1,2]}')
    store.meta_path(garbage).write_bytes(b"{not json")
    store.messages_path(broken).write_bytes(b"[{")
    store.index.close()
    store.index_path.unlink()

    fresh = Store(store.root)
    entries, total, _, _ = fresh.index.listing(None)
    assert total == len(made)
    for entry in entries:
        cid = entry.meta.id
        expected = build_entry(d, cid, signature(os.stat(store.messages_path(cid))))
        assert entry == expected, cid
        assert encode_meta(entry.meta) == encode_meta(expected.meta)
    titles = {e.meta.id: e.meta.title for e in entries}
    assert titles[plain] == "t0" and titles[padded] == "t7" and titles[extra] == "t9" and titles[symlinked] == "t4"
    assert titles[missing] == "" and titles[stale] == "t2" and titles[other_id] == ""
    assert [e.problem != "" for e in entries].count(True) == 1
    db = fresh.index._connect()
    names = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert set(schema.INDEXES) <= names  # built after the rows
    assert [c.id for c in fresh.list(limit=3)] == [e.meta.id for e in entries[:3]]


def test_a_lost_sidecar_gives_the_fork_point_as_show_numbers_it(store):
    """A system message mid-history has no number: the derived fork point skips it, as
    ``Store.fork`` and ``golem show`` do (core/history/numbering.py)."""
    roles = ["user", "assistant", "system", "user", "assistant"]
    parent = store.create([Message(role, f"m{i}", conversation_id=P) for i, role in enumerate(roles)], cid=P)
    child = store.fork(parent, 3)
    assert [m.content for m in store.load(child)] == ["m0", "m1", "m2", "m3"]
    store.append(child, [*store.load(child), Message("assistant", "mine", conversation_id=child)])
    store.meta_path(child).unlink()
    assert (store.meta(child).parent, store.meta(child).fork_at) == (P, 3)
