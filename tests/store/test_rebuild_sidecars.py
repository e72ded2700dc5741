"""A rebuild of the index over files golem did not write keeps what it works out in the index
(docs/adr/0034-the-index-holds-what-a-rebuild-works-out.md): the rows hold the metadata derived
from each conversation's messages, keyed by the file's signature, so the next refresh reads no
file that did not change; no sidecar is written by a rebuild, and none is ever replaced by one;
golem writes the sidecar when it next saves that conversation."""

from __future__ import annotations

import os

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store, digest, meta, refresh
from golem_cli.store.meta import decode_meta, encode_meta

SYNCED = "01a228ea-1414-732e-9d7a-7c1f891d89a7"


def synced(store: Store, cid: str = SYNCED, *texts: str) -> None:
    """A conversation as a sync tool brings it: its messages file alone."""
    store.conversations_dir.mkdir(parents=True, exist_ok=True)
    store.messages_path(cid).write_bytes(dump_history([Message("user", t) for t in texts or ("from elsewhere",)]))


def rebuilt(store: Store) -> Store:
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        (store.root / f"index.sqlite{suffix}").unlink(missing_ok=True)
    fresh = Store(store.root)
    fresh.list()
    return fresh


def names(store: Store) -> list[str]:
    return sorted(p.name for p in store.conversations_dir.iterdir())


def test_a_rebuild_keeps_what_it_works_out_in_the_index_and_writes_no_file(store, monkeypatch):
    synced(store, SYNCED, "first line\nmore", "second")
    before = names(store)
    fresh = rebuilt(store)
    assert names(store) == before  # no sidecar, no temporary file
    assert [(c.meta.messages, c.meta.summary) for c in fresh.list()] == [(2, "first line")]
    monkeypatch.setattr(refresh.Reader, "read", lambda self, task: pytest.fail(f"read {task.cid} again"))
    assert [c.meta.summary for c in Store(store.root).list()] == ["first line"]  # the rows are current


def test_a_rebuild_decodes_lean_and_the_careful_reader_takes_what_it_declines(store, monkeypatch):
    synced(store, SYNCED, "plain")
    other = "01a228ea-1414-732e-9d7a-7c1f891d89a8"
    store.messages_path(other).write_bytes(b'[{"Role":"user","Content":"spelled otherwise"}]')  # Go reads it
    careful: list[str] = []
    read_messages = meta.read_messages
    monkeypatch.setattr(meta, "read_messages", lambda d, cid, **kw: careful.append(cid) or read_messages(d, cid, **kw))
    fresh = rebuilt(store)
    assert careful == [other]
    assert sorted(c.meta.summary for c in fresh.list()) == ["plain", "spelled otherwise"]
    assert [h.meta.id for h in fresh.search("otherwise").hits] == [other]


def test_a_file_that_is_not_a_readable_history_is_listed_with_its_problem(store):
    store.conversations_dir.mkdir(parents=True)
    store.messages_path(SYNCED).write_bytes(b'[{"role":"user","content":"cut off')
    fresh = rebuilt(store)
    assert fresh.info(SYNCED).problem and [c.problem != "" for c in fresh.list()] == [True]
    assert not store.meta_path(SYNCED).exists()


def test_golems_next_save_writes_the_sidecar(store):
    synced(store, SYNCED, "from elsewhere")
    fresh = rebuilt(store)
    fresh.append(SYNCED, [*fresh.load(SYNCED), Message("assistant", "and from here")])
    written = decode_meta(store.meta_path(SYNCED).read_bytes())
    assert written is not None and (written.messages, written.summary) == (2, "from elsewhere")
    assert written.size == store.messages_path(SYNCED).stat().st_size


def test_golems_first_save_of_a_synced_fork_keeps_the_lineage_the_rebuild_worked_out(store):
    parent = "01a228ea-1414-732e-9d7a-7c1f891d89a0"
    store.conversations_dir.mkdir(parents=True)
    copied = [Message("user", "asked there", conversation_id=parent), Message("assistant", "answered", conversation_id=parent)]
    own = [Message("user", "asked here", conversation_id=SYNCED)]
    store.messages_path(SYNCED).write_bytes(dump_history(copied + own))
    fresh = rebuilt(store)
    assert (fresh.list()[0].meta.parent, fresh.list()[0].meta.fork_at) == (parent, 2)
    fresh.append(SYNCED, [*fresh.load(SYNCED), Message("assistant", "and from here", conversation_id=SYNCED)])
    written = decode_meta(store.meta_path(SYNCED).read_bytes())
    assert written is not None and (written.parent, written.fork_at, written.messages) == (parent, 2, 4)
    assert (rebuilt(store).list()[0].meta.parent, Store(store.root).meta(SYNCED).fork_at) == (parent, 2)


def test_a_stale_sidecar_is_left_as_it_is_and_what_it_chose_is_kept_in_the_row(store):
    cid = store.create([Message("user", "one")], title="my title", model="m:1")
    store.messages_path(cid).write_bytes(dump_history([Message("user", "one"), Message("assistant", "two")]))
    stale = store.meta_path(cid).read_bytes()
    fresh = rebuilt(store)
    listed = fresh.list()[0].meta
    assert (listed.title, listed.model, listed.messages) == ("my title", "m:1", 2)
    assert store.meta_path(cid).read_bytes() == stale


@pytest.mark.parametrize("odd", ["symlink", "fifo", "directory"])
def test_a_sidecar_that_is_not_a_regular_file_is_left_alone(store, odd):
    cid = store.create([Message("user", "one")])
    store.messages_path(cid).write_bytes(dump_history([Message("user", "one"), Message("assistant", "two")]))
    path = store.meta_path(cid)
    aside = store.root / "aside.meta.json"
    original = path.read_bytes()
    aside.write_bytes(original)
    path.unlink()
    {"symlink": lambda: path.symlink_to(aside), "fifo": lambda: os.mkfifo(path), "directory": path.mkdir}[odd]()
    fresh = rebuilt(store)
    assert fresh.meta(cid).messages == 2
    assert (path.is_symlink(), path.is_fifo(), path.is_dir()) == (odd == "symlink", odd == "fifo", odd == "directory")
    assert aside.read_bytes() == original  # a symlink's target untouched too


def test_a_file_over_the_lean_size_is_read_carefully(store, monkeypatch):
    monkeypatch.setattr(digest, "LEAN_BYTES", 10)
    monkeypatch.setattr(refresh, "LEAN_BYTES", 10)
    synced(store, SYNCED, "longer than ten bytes")
    assert [c.meta.summary for c in rebuilt(store).list()] == ["longer than ten bytes"]
    assert encode_meta(rebuilt(store).list()[0].meta) == encode_meta(Store(store.root).meta(SYNCED))
