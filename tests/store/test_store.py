"""The store's API: create, load, save, fork, delete, metadata, listing, files and modes."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.ids import is_uuid7
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import ConversationExists, ConversationNotFound
from golem_cli.store.errors import ForkPointOutOfRange

HISTORY = [
    Message("user", "What is 2+2?\nPlease answer."),
    Message("assistant", tool_calls=[ToolCall("c1", "add", '{"a": 2, "b": 2}')]),
    Message("tool", "4", tool_call_id="c1", tool_name="add"),
    Message("assistant", "4 <b>&</b>"),
]


def test_create_writes_exactly_dump_history(store):
    cid = store.create(HISTORY, title="sums", model="openai:gpt-4o-mini")
    assert is_uuid7(cid)
    data = store.messages_path(cid).read_bytes()
    assert data == dump_history(HISTORY)
    assert isinstance(json.loads(data), list)  # a plain JSON array: Go unmarshals it as is
    assert store.load(cid) == load_history(dump_history(HISTORY))
    meta = store.meta(cid)
    assert (meta.title, meta.model, meta.messages, meta.summary) == ("sums", "openai:gpt-4o-mini", 4, "What is 2+2?")
    assert meta.parent == "" and meta.fork_at == -1
    assert meta.size == len(data)


def test_create_with_an_existing_id_is_refused(store):
    cid = store.create(HISTORY)
    with pytest.raises(ConversationExists):
        store.create([], cid=cid)
    assert store.load(cid) == load_history(dump_history(HISTORY))


def test_save_replaces_and_keeps_user_choices(store):
    cid = store.create(HISTORY[:1], title="t", model="m:1")
    created = store.meta(cid).created
    time.sleep(0.01)
    meta = store.save(cid, HISTORY).meta
    assert meta.messages == 4 and meta.title == "t" and meta.model == "m:1" and meta.created == created
    assert meta.updated > created
    assert store.messages_path(cid).read_bytes() == dump_history(HISTORY)


def test_set_title_and_model(store):
    cid = store.create(HISTORY)
    store.set_title(cid, "A title")
    store.set_model(cid, "anthropic:claude")
    meta = store.meta(cid)
    assert meta.title == "A title" and meta.model == "anthropic:claude" and meta.messages == 4
    assert store.list()[0].meta.display_title == "A title"


def test_fork_copies_a_prefix_and_records_lineage(store):
    parent = store.create(HISTORY, model="m:1")
    child = store.fork(parent, 2)
    assert store.load(child) == store.load(parent)[:2]
    meta = store.meta(child)
    assert (meta.parent, meta.fork_at, meta.model, meta.messages) == (parent, 2, "m:1", 2)
    whole = store.fork(parent)
    assert store.meta(whole).fork_at == 4
    for at in (5, 0, -1):  # one range, one error (an input error: exit 2)
        with pytest.raises(ForkPointOutOfRange, match="fork at 1 to 4"):
            store.fork(parent, at)


def test_fork_with_hold_keeps_the_lock(store):
    parent = store.create(HISTORY)
    child = store.fork(parent, hold=True)
    assert store.lock_path(child).exists()
    store.release(child)
    assert not store.lock_path(child).exists()


def test_delete(store):
    cid = store.create(HISTORY)
    store.delete(cid)
    assert not store.messages_path(cid).exists() and not store.meta_path(cid).exists()
    with pytest.raises(ConversationNotFound):
        store.load(cid)
    with pytest.raises(ConversationNotFound):
        store.delete(cid)
    assert store.list() == []


def test_modes_are_private_whatever_the_umask(store):
    old = os.umask(0)
    try:
        cid = store.create(HISTORY)
        store.save(cid, HISTORY[:2])
        store.backup(cid)
        with store.lock(cid):
            assert stat.S_IMODE(os.stat(store.lock_path(cid)).st_mode) == 0o600
    finally:
        os.umask(old)
    for d in (store.root, store.conversations_dir, store.locks_dir, store.backups_dir):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    for f in store.conversations_dir.iterdir():
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f
    for f in store.backups_dir.iterdir():
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f


def test_loose_directory_modes_are_tightened(store):
    store.conversations_dir.mkdir(parents=True)
    os.chmod(store.root, 0o755)
    os.chmod(store.conversations_dir, 0o777)
    store.create(HISTORY)
    assert stat.S_IMODE(os.stat(store.root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.conversations_dir).st_mode) == 0o700


def test_no_temporary_files_are_left(store):
    cid = store.create(HISTORY)
    for n in range(5):
        store.save(cid, HISTORY[: n % 4 + 1])
    names = os.listdir(store.conversations_dir)
    assert sorted(names) == sorted([f"{cid}.json", f"{cid}.meta.json"])


def test_reading_creates_nothing(store):
    assert store.list() == []
    with pytest.raises(ConversationNotFound):
        store.resolve("0190")
    assert not store.root.exists()


def test_backup_copies_the_current_file(store):
    cid = store.create(HISTORY)
    path = store.backup(cid)
    assert path.parent == store.backups_dir and path.read_bytes() == dump_history(HISTORY)


def test_setting_the_model_it_already_has_writes_nothing(store):
    cid = store.create([Message("user", "hi")], model="m:one")
    before = os.stat(store.meta_path(cid)).st_mtime_ns
    time.sleep(0.01)
    assert store.set_model(cid, "m:one").model == "m:one"
    assert os.stat(store.meta_path(cid)).st_mtime_ns == before
    assert store.set_model(cid, "m:two").model == "m:two" and store.meta(cid).model == "m:two"


def test_a_write_in_pieces_that_fails_leaves_the_file_as_it_was(tmp_path):
    """write_atomic writes pieces as they are made (codec.history_chunks); if making one fails,
    the file is as it was and no temporary file is left."""
    from golem_cli.store.atomic import write_atomic

    target = tmp_path / "h.json"
    write_atomic(target, [b"[", b'{"role":"user"}', b"]"])
    assert target.read_bytes() == b'[{"role":"user"}]'

    def failing():
        yield b"["
        raise RuntimeError("encoding failed")

    with pytest.raises(RuntimeError):
        write_atomic(target, failing())
    assert target.read_bytes() == b'[{"role":"user"}]' and [p.name for p in tmp_path.iterdir()] == ["h.json"]


def test_a_file_that_became_special_is_refused_the_second_time_too(tmp_path):
    """The check looks at the file each time it is asked (it was once remembered per path)."""
    from golem_cli.store.files import UnreadableFile, refuse_special

    path = tmp_path / "x.json"
    path.write_bytes(b"[]")
    refuse_special(path)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(UnreadableFile, match="FIFO"):
        refuse_special(path)
