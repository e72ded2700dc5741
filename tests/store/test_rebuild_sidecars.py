"""A rebuild of the index over files golem did not write keeps what it works out: the metadata
derived from a conversation's messages is written as its sidecar, so the next rebuild reads
sidecars instead of decoding every file; never over a sidecar that changed meanwhile, never for
a file that is not a readable history."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store, meta, refresh
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


def test_a_rebuild_writes_the_sidecars_it_works_out_and_the_next_one_reads_them(store, monkeypatch):
    synced(store, SYNCED, "first line\nmore", "second")
    fresh = rebuilt(store)
    written = decode_meta(store.meta_path(SYNCED).read_bytes())
    assert written is not None and (written.messages, written.summary) == (2, "first line")
    assert written.size == store.messages_path(SYNCED).stat().st_size
    assert encode_meta(written) == encode_meta(fresh.meta(SYNCED))
    assert oct(store.meta_path(SYNCED).stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in store.conversations_dir.iterdir() if p.name.startswith(".")] == []  # no temporary left

    def refuse(*args, **kwargs):
        raise AssertionError("decoded a messages file its sidecar describes")

    monkeypatch.setattr(meta, "read_messages", refuse)
    again = rebuilt(store)
    assert [c.meta.summary for c in again.list()] == ["first line"]


def test_a_rebuild_leaves_the_directory_as_the_index_records_it(store, monkeypatch):
    """The sidecars written change nothing the rows record: the listing after a rebuild finds
    every row current (one scan of the directory, no file read)."""
    for i in range(3):
        synced(store, f"01a228ea-1414-732e-9d7a-7c1f891d89a{i}", f"conversation {i}")
    fresh = rebuilt(store)
    monkeypatch.setattr(refresh.Reader, "read", lambda self, task: pytest.fail(f"read {task.cid} again"))
    assert len(fresh.list()) == 3


def test_no_sidecar_for_a_file_that_is_not_a_readable_history(store):
    store.conversations_dir.mkdir(parents=True)
    store.messages_path(SYNCED).write_bytes(b'[{"role":"user","content":"cut off')
    fresh = rebuilt(store)
    assert fresh.info(SYNCED).problem and not store.meta_path(SYNCED).exists()


def test_a_sidecar_that_appears_meanwhile_is_kept(store, monkeypatch):
    """Between the rebuild's look at the directory and its write, a golem save writes the
    sidecar itself: that one stays, byte for byte."""
    synced(store)
    theirs = encode_meta(meta.ConversationMeta(id=SYNCED, title="the user's", size=1))
    read_entry = refresh.read_entry

    def and_a_save_meanwhile(*args, **kwargs):
        store.meta_path(SYNCED).write_bytes(theirs)
        return read_entry(*args, **kwargs)

    monkeypatch.setattr(refresh, "read_entry", and_a_save_meanwhile)
    rebuilt(store)
    assert store.meta_path(SYNCED).read_bytes() == theirs


def test_a_stale_sidecar_is_replaced_keeping_the_title_unless_it_changed_meanwhile(store, monkeypatch):
    cid = store.create([Message("user", "one")], title="my title", model="m:1")
    store.messages_path(cid).write_bytes(dump_history([Message("user", "one"), Message("assistant", "two")]))
    rebuilt(store)
    replaced = decode_meta(store.meta_path(cid).read_bytes())
    assert replaced is not None and (replaced.title, replaced.model, replaced.messages) == ("my title", "m:1", 2)
    # stale again, and changed by someone between the rebuild's read and its write
    store.messages_path(cid).write_bytes(dump_history([Message("user", "three")]))
    theirs = encode_meta(meta.ConversationMeta(id=cid, title="renamed meanwhile", size=1))
    read_entry = refresh.read_entry

    def and_a_title_meanwhile(*args, **kwargs):
        found = read_entry(*args, **kwargs)
        store.meta_path(cid).write_bytes(theirs)
        return found

    monkeypatch.setattr(refresh, "read_entry", and_a_title_meanwhile)
    rebuilt(store)
    assert store.meta_path(cid).read_bytes() == theirs


HOLDER = """
import sys
from golem_cli.store import Store
Store(sys.argv[1]).lock(sys.argv[2])
print("held", flush=True)
sys.stdin.read()
"""


def test_a_stale_sidecar_of_a_conversation_open_elsewhere_is_left_to_its_process(store):
    cid = store.create([Message("user", "one")], title="kept")
    before = store.meta_path(cid).read_bytes()
    store.messages_path(cid).write_bytes(dump_history([Message("user", "one"), Message("assistant", "two")]))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.root), cid], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        fresh = rebuilt(store)
        assert fresh.meta(cid).messages == 2  # worked out all the same
        assert store.meta_path(cid).read_bytes() == before
    finally:
        holder.communicate("")


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
