"""A search always answers from the index, brought up to date first: after the index is
deleted, made by another version, or holds rows but not yet their text, it finds exactly what
reading every conversation finds, and nothing is left behind afterwards."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading

from golem_cli.core.messages import Message
from golem_cli.store import Store, refresh, schema
from golem_cli.store import index as index_mod
from golem_cli.store.search import first_hit, parse_query
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


def every_file(store: Store, text: str, role: str, limit: int | None) -> list[tuple[str, int, int | None, str, str]]:
    """The search done the slow way: every conversation decoded and matched, newest first."""
    query = parse_query(text)
    found = []
    for info in store.list():
        hit = first_hit(query, info.meta, store.load(info.id), role)
        if hit is not None:
            found.append((hit.meta.id, hit.message_index, hit.number, hit.role, hit.snippet))
    return found[:limit] if limit is not None else found


def behind(store: Store) -> int:
    db = store.index._connect()
    return int(db.execute(f"SELECT count(*) FROM conversations WHERE {schema.TEXT_BEHIND}").fetchone()[0])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_search_finds_what_reading_every_file_finds_whatever_the_index_held(data):
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        conversations = data.draw(st.lists(histories(), min_size=1, max_size=4))
        for history in conversations:  # created with some messages, the rest appended by a save
            cid = store.create(history[: data.draw(st.integers(0, len(history)))])
            store.append(cid, history)
        query = data.draw(queries(data.draw(st.sampled_from(conversations))))
        if not query.strip():
            return
        role = data.draw(st.sampled_from(["", "user", "assistant"]))
        limit = data.draw(st.sampled_from([None, 1]))
        expected = every_file(store, query, role, limit)
        assert hits(store.search(query, limit, role=role)) == expected  # written through by the saves
        for hit in store.search(query, limit, role=role).hits:  # numbered as `golem show` does
            roles = [m.role for m in store.load(hit.meta.id)]
            people = sum(r != "system" for r in roles[: hit.message_index + 1])
            assert hit.number == (None if roles[hit.message_index] == "system" else people)
        drop_index(store)
        cold = Store(tmp)
        assert hits(cold.search(query, limit, role=role)) == expected  # no index: built first
        assert behind(cold) == 0
        drop_index(cold)
        rows_only = Store(tmp)
        rows_only.list()  # the rows rebuilt, the text not
        assert behind(rows_only) == len(conversations)
        rows_only.create(data.draw(histories()))  # written through: this one's text is indexed
        assert behind(rows_only) == len(conversations)
        assert hits(rows_only.search(query, limit, role=role)) == every_file(rows_only, query, role, limit)
        assert behind(rows_only) == 0
        rows_only.index.close()


def test_the_text_of_every_message_is_found_whatever_its_case_folding(store):
    cid = store.create([Message("user", "Die STRASSE"), Message("assistant", "the ﬁle in İzmir, ΣΊΣΥΦΟΣ")])
    for query in ("straße", "FILE", "σίσυφος", '"die strasse"', "ﬁle*", "i̇z", "ss"):
        assert [h.meta.id for h in store.search(query).hits] == [cid], query
    drop_index(store)
    for query in ("straße", "FILE", "σίσυφος", '"die strasse"', "ﬁle*", "i̇z", "ss"):
        assert [h.meta.id for h in Store(store.root).search(query).hits] == [cid], query


def test_a_search_after_the_index_is_deleted_reports_unreadable_files_and_short_ids(store):
    good = store.create([Message("user", "a needle")])
    bad = "01a228ea-1414-732e-9d7a-7c1f891d89a7"
    store.messages_path(bad).write_bytes(b'[{"role":"user","content":"needle, broken"')
    drop_index(store)
    found = Store(store.root).search("needle")
    assert [h.meta.id for h in found.hits] == [good]
    assert [cid for cid, _ in found.unreadable] == [bad] and "invalid JSON" in found.unreadable[0][1]
    from golem_cli.store.refs import unique_prefix_among

    assert found.prefixes == {good: unique_prefix_among(sorted([good, bad]), good)}


def test_an_index_of_another_version_is_rebuilt_before_answering(store):
    cid = store.create([Message("user", "kept safe")])
    store.index.close()
    db = sqlite3.connect(store.index_path)
    db.execute(f"PRAGMA user_version = {schema.INDEX_VERSION - 1}")
    db.close()
    again = Store(store.root)
    assert [h.meta.id for h in again.search("safe").hits] == [cid]
    assert again.index._connect().execute("PRAGMA user_version").fetchone()[0] == schema.INDEX_VERSION


def test_catching_up_reports_its_progress_and_a_current_index_reports_none(store, monkeypatch):
    monkeypatch.setattr(refresh, "CHUNK", 3)
    made = [store.create([Message("user", f"word{i} common")]) for i in range(7)]
    drop_index(store)
    reported: list[tuple[str, int, int]] = []
    fresh = Store(store.root, progress=lambda what, done, total: reported.append((what, done, total)))
    assert [h.meta.id for h in fresh.search("common").hits] == made[::-1]
    indexing = [(done, total) for what, done, total in reported if what == refresh.INDEXING]
    assert indexing == [(3, 7), (6, 7), (7, 7), (7, 7)]  # each chunk, then the end, however it ends
    reported.clear()
    fresh.list()
    fresh.search("common")
    assert [r for r in reported if r[0] != refresh.WAITING] == []


def test_a_search_that_reads_no_files_keeps_the_last_call_saying_done(store, monkeypatch):
    """However a refresh ends (here: a file that cannot be read stops it), its last report says
    done, so the CLI takes its bar away."""
    store.create([Message("user", "x")])
    drop_index(store)
    reported: list[tuple[str, int, int]] = []
    fresh = Store(store.root, progress=lambda what, done, total: reported.append((what, done, total)))

    def fail(*args, **kwargs):
        raise RuntimeError("stop")

    monkeypatch.setattr(refresh.Reader, "read", fail)
    try:
        fresh.search("x")
    except RuntimeError:
        pass
    assert reported[-1] == (refresh.INDEXING, 1, 1)


def test_a_common_word_reads_only_the_files_of_its_first_hits(store, monkeypatch):
    """Past ``CANDIDATE_CAP`` matching conversations, a search goes newest first and stops at
    its limit: the files it reads (and the hits it holds) do not grow with the store."""
    monkeypatch.setattr(index_mod, "CANDIDATE_CAP", 5)
    made = [store.create([Message("user", f"common word n{i:03d}")]) for i in range(40)]
    read: list[str] = []
    original = Store.read
    monkeypatch.setattr(Store, "read", lambda self, cid: read.append(cid) or original(self, cid))
    assert [h.meta.id for h in store.search("common", 3).hits] == made[::-1][:3]
    assert read == made[::-1][:3]
    read.clear()
    assert [h.meta.id for h in store.search("word n007", 3).hits] == [made[7]]  # few candidates: just those
    assert read == [made[7]]


def test_a_save_while_the_index_catches_up_is_kept(store, monkeypatch):
    """The catch-up writes a chunk at a time and keeps a row another process wrote since it
    read the file: here a save lands between a conversation's read and its chunk's write."""
    monkeypatch.setattr(refresh, "CHUNK", 2)
    made = [store.create([Message("user", f"conversation {i}")]) for i in range(6)]
    drop_index(store)
    later = Store(store.root)
    saver = Store(store.root)
    read = refresh.Reader.read

    def read_then_saved(self, task):
        done = read(self, task)
        if task.cid == made[3]:
            saver.append(made[3], [*saver.load(made[3]), Message("assistant", "saved meanwhile")])
        return done

    monkeypatch.setattr(refresh.Reader, "read", read_then_saved)
    assert len(later.search("conversation").hits) == 6
    monkeypatch.setattr(refresh.Reader, "read", read)
    assert {info.id: info.meta.messages for info in later.list()}[made[3]] == 2
    assert [h.meta.id for h in later.search("meanwhile").hits] == [made[3]]


def test_one_process_catches_up_at_a_time(store):
    """A second refresher waits for the first (saying so), then finds the work done."""
    from golem_cli.store.locks import exclusive

    store.create([Message("user", "needle")])
    drop_index(store)
    reported: list[str] = []
    waiting = threading.Event()

    def told(what: str, done: int, total: int) -> None:
        reported.append(what)
        if what == refresh.WAITING and done < total:
            waiting.set()

    other = Store(store.root, progress=told)
    found: list[int] = []
    with exclusive(store.root / refresh.REFRESH_LOCK):
        thread = threading.Thread(target=lambda: found.append(len(other.search("needle").hits)))
        thread.start()
        assert waiting.wait(30)
        assert found == []
    thread.join(30)
    assert found == [1]
