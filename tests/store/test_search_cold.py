"""A search the index cannot answer (deleted, from another version, its text behind) is
answered from the files, finds exactly what the index finds, and has the index built in the
background (builder.py) without ever waiting for it."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
from pathlib import Path
from unittest import mock

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store, builder
from golem_cli.store import index as index_mod
from golem_cli.store.search import find
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.strategies import histories, queries


def drop_index(store: Store) -> None:
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{store.index_path}{suffix}")
        except FileNotFoundError:
            pass


def hits(found) -> list[tuple[str, int, int | None, str, str]]:
    return [(h.meta.id, h.message_index, h.number, h.role, h.snippet) for h in found.hits]


@settings(max_examples=60)
@given(st.data())
def test_without_the_index_and_with_its_text_behind_a_search_finds_what_the_index_finds(data):
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        conversations = data.draw(st.lists(histories(), min_size=1, max_size=4))
        for history in conversations:
            store.create(history)
        query = data.draw(queries(data.draw(st.sampled_from(conversations))))
        if not query.strip():
            return
        options = {
            "role": data.draw(st.sampled_from(["", "user", "assistant"])),
            "limit": data.draw(st.sampled_from([None, 1])),
        }
        warm = find(store, query, **options)
        assert not warm.behind
        for hit in warm.hits:  # numbered as `golem show` numbers them: from 1, system prompts aside
            roles = [m.role for m in store.load(hit.meta.id)]
            people = sum(role != "system" for role in roles[: hit.message_index + 1])
            assert hit.number == (None if roles[hit.message_index] == "system" else people)
        drop_index(store)
        cold = find(Store(tmp), query, **options)
        assert cold.behind and not os.path.exists(store.index_path)  # answered without building it
        assert hits(cold) == hits(warm)
        assert cold.prefixes == warm.prefixes
        # the rows rebuilt by a listing, the text not: the files again, merged with what is indexed
        with mock.patch.object(index_mod, "INLINE_TEXTS", 0):
            fresh = Store(tmp)
            fresh.list()
            fresh.create(data.draw(histories()))  # written through: this one's text is indexed
            behind = find(fresh, query, **options)
            fresh.index.close()
        again = find(Store(tmp), query, **options)  # few enough behind: indexed there and then
        assert hits(behind) == hits(again)
        assert not again.behind


def test_the_text_of_every_message_is_found_whatever_its_case_folding(store):
    cid = store.create([Message("user", "Die STRASSE"), Message("assistant", "the ﬁle in İzmir, ΣΊΣΥΦΟΣ")])
    for query in ("straße", "FILE", "σίσυφος", '"die strasse"', "ﬁle*"):
        assert [h.meta.id for h in find(store, query).hits] == [cid], query
    drop_index(store)
    for query in ("straße", "FILE", "σίσυφος", '"die strasse"', "ﬁle*"):
        assert [h.meta.id for h in find(Store(store.root), query).hits] == [cid], query


def test_a_search_without_an_index_reports_unreadable_files_and_short_ids(store):
    good = store.create([Message("user", "a needle")])
    bad = "01a228ea-1414-732e-9d7a-7c1f891d89a7"
    store.messages_path(bad).write_bytes(b'[{"role":"user","content":"needle, broken"')
    drop_index(store)
    found = find(Store(store.root), "needle")
    assert [h.meta.id for h in found.hits] == [good]
    assert [cid for cid, _ in found.unreadable] == [bad] and "invalid JSON" in found.unreadable[0][1]
    from golem_cli.store.refs import unique_prefix_among

    assert found.prefixes == {good: unique_prefix_among(sorted([good, bad]), good)}


def test_a_corrupt_or_older_index_is_not_waited_for(store):
    cid = store.create([Message("user", "kept safe")])
    store.index.close()
    db = sqlite3.connect(store.index_path)
    db.execute(f"PRAGMA user_version = {index_mod.INDEX_VERSION - 1}")
    db.close()
    found = find(Store(store.root), "safe")
    assert found.behind and [h.meta.id for h in found.hits] == [cid]


def test_the_builder_builds_rows_and_text(store):
    made = [store.create([Message("user", f"word{i} common")]) for i in range(5)]
    drop_index(store)
    assert builder.build(store.root, store.max_history_bytes)
    again = Store(store.root)
    assert again.index.texts_behind() == 0 and not find(again, "common").behind
    assert [h.meta.id for h in find(again, "common").hits] == made[::-1]


def test_building_stops_when_asked_and_keeps_what_it_committed(store, monkeypatch):
    monkeypatch.setattr(index_mod, "TEXT_TRANSACTION_SECONDS", 0.0)  # one conversation per transaction
    store.conversations_dir.mkdir(parents=True)
    for i in range(600):
        cid = f"01a228ea-1414-732e-9d7a-7c1f891d{i:04x}"
        store.messages_path(cid).write_bytes(dump_history([Message("user", f"text {i}")]))
    index = store.index
    assert not index.refresh(stop=lambda: True)  # rolled back: no rows
    assert index.listing(limit=0)[1] == 600  # (a listing refreshes by itself)
    assert index.texts_behind() == 600
    calls = iter(range(10**6))
    assert not index.update_texts(stop=lambda: next(calls) >= 3)  # three transactions, then stop
    assert index.texts_behind() == 597
    assert index.update_texts() and index.texts_behind() == 0


def test_a_builder_whose_index_is_deleted_as_it_opens_stops(store, monkeypatch):
    """Deleted between its opening and the builder's look at it, the index would be built
    whole into a deleted file (minutes at 100,000 conversations): the builder stops."""
    store.create([Message("user", "x")])
    drop_index(store)
    opened = index_mod.Index.open

    def open_then_deleted(self):
        opened(self)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    monkeypatch.setattr(index_mod.Index, "open", open_then_deleted)
    monkeypatch.setattr(index_mod.Index, "refresh", lambda self, stop=None: pytest.fail("built a deleted index"))
    assert not builder.build(store.root, store.max_history_bytes)


def test_one_builder_at_a_time(store):
    store.create([Message("user", "x")])
    from golem_cli.store.locks import lock_fd, open_lock_file

    assert not builder.running(store.root)
    fd = open_lock_file(store.root / builder.BUILD_LOCK)
    try:
        assert lock_fd(fd, blocking=False)
        assert builder.running(store.root)
        assert not builder.build(store.root, store.max_history_bytes)
        assert not builder.start(store.root, store.max_history_bytes)
    finally:
        os.close(fd)
    assert not builder.running(store.root)


@pytest.mark.parametrize("cli", [["search", "needle"], ["list"]])
def test_the_command_starts_the_builder_and_the_index_catches_up(tmp_path, cli):
    from tests.cli.conftest import GOLEM_CMD

    home = tmp_path / "home"
    conversations = home / "conversations"
    conversations.mkdir(parents=True)
    for i in range(index_mod.INLINE_TEXTS + 5):  # more than a search indexes by itself
        cid = f"01a228ea-1414-732e-9d7a-7c1f891d{i:04x}"
        (conversations / f"{cid}.json").write_bytes(dump_history([Message("user", f"a needle {i}")]))
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")} | {"GOLEM_HOME": str(home)}
    done = subprocess.run([*GOLEM_CMD, *cli], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (home / "index.sqlite").exists() and not builder.running(Path(home)):
            store = Store(home)
            if store.index.texts_behind() == 0:
                assert not find(store, "needle").behind
                return
            store.index.close()
        time.sleep(0.1)
    pytest.fail("the background builder did not index the text within 60 s")
