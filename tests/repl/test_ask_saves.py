"""`golem ask` and the store (ADR 0025): the prompt on disk with the fewest fsyncs before the
request; another program writing the conversation during `ask -c` (merged, or the turn forked);
an index held by another process never stalls the save; `last` is what this machine wrote."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store

from tests.providerserver import Scenario


def fsyncs_before_the_request(golem_main, monkeypatch, *args: str) -> int:
    """How many times golem's ``ask`` called ``os.fsync`` before its first request was sent
    (counted in this process: golem runs in it through ``golem_main``)."""
    import httpx

    count, at_send = [0], []
    real_fsync, real_send = os.fsync, httpx.AsyncClient.send

    def fsync(fd: int) -> None:
        count[0] += 1
        real_fsync(fd)

    async def send(self, request, **kw):
        at_send.append(count[0])
        return await real_send(self, request, **kw)

    with monkeypatch.context() as patched:
        patched.setattr(os, "fsync", fsync)
        patched.setattr(httpx.AsyncClient, "send", send)
        done = golem_main("ask", *args)
    assert done.code == 0, done.err
    return at_send[0]


def test_ask_puts_the_prompt_on_disk_with_two_fsyncs_before_the_request(golem_main, monkeypatch, home):
    """The file fsynced, its directory fsynced: the new conversation is created with the prompt
    in it (issue 21 item 5: 8 of 12 fsyncs came before the request)."""
    assert fsyncs_before_the_request(golem_main, monkeypatch, "a new conversation") == 2
    assert fsyncs_before_the_request(golem_main, monkeypatch, "-c", "and on") == 2
    (row,) = Store(home).list()
    assert [m.content for m in Store(home).read(row.id)] == [
        "a new conversation", "echo: a new conversation", "and on", "echo: and on"
    ]  # fmt: skip


def _conversation(home, n: int = 30) -> tuple[Store, str, list[Message]]:
    store = Store(home)
    history = []
    for i in range(n):
        history += [Message("user", f"question {i}"), Message("assistant", f"answer {i}")]
    return store, store.create(history, model="local:echo"), history


def replace_by_rename(path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".sync")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_messages_written_elsewhere_during_ask_c_come_before_its_reply(golem_main, home, server):
    store, cid, history = _conversation(home)
    path = store.messages_path(cid)
    elsewhere = [Message("assistant", "written on the other machine"), Message("user", "and asked there")]

    def sync_tool():  # while the model answers: the prompt is on disk, the reply is not
        on_disk = Store(home).read(cid)
        replace_by_rename(path, dump_history([*on_disk, *elsewhere]))

    server.enqueue(Scenario(before=sync_tool))
    done = golem_main("ask", "-c", "mine")
    assert done.code == 0, done.err
    stored = Store(home).read(cid)
    assert [m.content for m in stored[len(history) :]] == ["mine", *[m.content for m in elsewhere], "echo: mine"]
    assert f"golem: conversation {cid} changed on disk meanwhile (2 messages from elsewhere)" in done.err


def test_ask_c_after_another_program_rewrote_the_conversation_saves_a_fork(golem_main, home, server):
    store, cid, history = _conversation(home)
    path = store.messages_path(cid)
    theirs = dump_history([Message("user", "someone else's conversation now")])
    server.enqueue(Scenario(before=lambda: replace_by_rename(path, theirs)))
    done = golem_main("ask", "--json", "--cid", cid, "mine")
    assert done.code == 0, done.err
    fork = json.loads(done.out)["conversationId"]
    assert fork != cid and path.read_bytes() == theirs
    assert [m.content for m in Store(home).read(fork)] == [*(m.content for m in history), "mine", "echo: mine"]
    assert f"your turn is saved in a fork {fork} (golem resume {fork})" in done.err
    assert Store(home).meta(fork).parent == cid


HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""


def test_a_held_index_write_lock_does_not_stall_the_save(home):
    """Issue 25 item 8: another process holds ``BEGIN IMMEDIATE`` on index.sqlite; the save
    completes at once (the write-through waits 50 ms), and the index catches up afterwards."""
    from golem_cli.store import index as index_module

    store, cid, history = _conversation(home, 3)
    store.list()  # the index exists and is current
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.index_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        waits: list[int] = []
        db = store.index._connect()
        real = db.execute
        store.index._db = _Watched(db, waits)
        loaded = store.load(cid)
        store.append(cid, [*loaded, Message("user", "saved while the index is held")])
        assert waits and max(waits) <= index_module.WRITE_THROUGH_BUSY_MS  # never the 30 s
        assert Store(home).read(cid)[-1].content == "saved while the index is held"
        del real
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    fresh = Store(home)
    assert fresh.list()[0].meta.messages == len(history) + 1  # the index caught up
    assert [h.meta.id for h in fresh.search("saved while the index").hits] == [cid]


class _Watched:
    """A connection whose busy timeouts are recorded (what the save would wait at most)."""

    def __init__(self, db: sqlite3.Connection, waits: list[int]) -> None:
        self._db, self._waits = db, waits

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.startswith("PRAGMA busy_timeout = ") and not self._waits:
            self._waits.append(int(sql.rsplit(" ", 1)[1]))
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def test_last_is_what_this_machine_wrote_never_a_file_time(golem_main, home):
    """Issue 25 item 3: a conversation synced in without its sidecar and dated in the future
    does not capture ``last``; ``ask -c`` continues the conversation this machine wrote."""
    store = Store(home)
    synced = "01a1b2c3-d4e5-7f00-8000-000000000001"  # an old UUIDv7, its file dated 2099
    path = store.conversations_dir
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{synced}.json").write_bytes(dump_history([Message("user", "old, from elsewhere")]))
    os.utime(path / f"{synced}.json", (4102444800, 4102444800))
    new = json.loads(golem_main("ask", "--json", "brand new").out)["conversationId"]
    again = json.loads(golem_main("ask", "--json", "-c", "again").out)["conversationId"]
    assert again == new
    listed = golem_main("list")
    rows = [line for line in listed.out.splitlines() if synced[:8] in line or new[:8] in line]
    assert rows[0].startswith(new[:8]) or new[-12:] in rows[0]  # the newest by its messages' time first
    assert "(future)" not in listed.out  # no file time is shown


def test_list_sorts_by_the_recorded_times_and_shows_a_future_one_as_such(golem_main, home):
    from golem_cli.store.meta import ConversationMeta, encode_meta

    store = Store(home)
    mine = store.create([Message("user", "written here")])
    synced = store.create([Message("user", "synced from a machine whose clock is ahead")])
    meta = store.meta(synced)
    future = ConversationMeta(id=synced, created=meta.created, updated=4102444800.0, messages=1,
                              size=meta.size, summary=meta.summary)  # fmt: skip
    store.meta_path(synced).write_bytes(encode_meta(future))
    listed = golem_main("list")
    rows = [line for line in listed.out.splitlines() if "written here" in line or "synced from" in line]
    assert "synced from" in rows[0] and "(future)" in rows[0]
    assert "written here" in rows[1] and "(future)" not in rows[1]
    assert mine != synced
