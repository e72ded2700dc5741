"""A large rebuild of the index reads its files in worker processes while the refreshing process
writes (store/fanout.py, refresh.py): the index it makes is the one a rebuild in one process
makes; a worker that dies leaves the rest to the refreshing process; Ctrl-C stops the rebuild,
keeps the chunks written, and leaves no worker behind."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store, fanout, refresh

PARENT = "01a228ea-1414-732e-9d7a-7c1f891d8000"


def synced(store: Store, count: int) -> list[str]:
    """``count`` conversations as a sync tool brings them (no sidecars), among them forks (by
    their stamps), one spelled as only Go writes it, one broken, and one golem saved."""
    store.conversations_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(count):
        cid = f"01a228ea-1414-732e-9d7a-7c1f891d{i:04x}"
        stamp = PARENT if i % 5 == 1 else cid
        messages = [
            Message(
                "user", f"question {i} zebra", run_id=f"01a228ea-1414-732e-9d7a-7c1f891e{i:04x}", conversation_id=stamp
            ),
            Message("assistant", f"answer {i}", conversation_id=cid),
        ]
        store.messages_path(cid).write_bytes(dump_history(messages))
        made.append(cid)
    store.messages_path(made[3]).write_bytes(b'[{"Role":"user","Content":"spelled otherwise"}]')
    store.messages_path(made[4]).write_bytes(b'[{"role":"user","content":')
    made.append(store.create([Message("user", "saved by golem zebra")]))
    return made


def dump(store: Store) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The rows and texts of the store's index (the signatures of files read, as rows hold them)."""
    db = sqlite3.connect(store.index_path)
    try:
        rows = db.execute(
            "SELECT id, updated, meta, msig, ssig, problem, tsig, tcount, tparts FROM conversations ORDER BY id"
        )
        texts = db.execute("SELECT rowid, body FROM texts ORDER BY rowid")
        return rows.fetchall(), [(rowid, " ".join(sorted(body.split()))) for rowid, body in texts]
    finally:
        db.close()


def rebuilt(store: Store, *, search: bool) -> Store:
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        (store.root / f"index.sqlite{suffix}").unlink(missing_ok=True)
    fresh = Store(store.root)
    fresh.search("zebra") if search else fresh.list()
    fresh.index.close()
    return fresh


@pytest.fixture
def many(monkeypatch):
    """Rebuilds of more than a few conversations read in two workers, three files a chunk."""
    monkeypatch.setattr(refresh, "CHUNK", 3)
    monkeypatch.setattr(fanout, "cores", lambda: 2)


def record_pids(monkeypatch, tmp_path):
    """Each chunk read appends its process's ID (and whether Ctrl-C is ignored there) to a file."""
    log = tmp_path / "readers"
    read_all = refresh.Reader.read_all

    def recorded(self, tasks):
        ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {int(ignored)}\n")
        return read_all(self, tasks)

    monkeypatch.setattr(refresh.Reader, "read_all", recorded)
    return log


@pytest.mark.parametrize("search", [False, True], ids=["rows", "rows and text"])
def test_workers_make_the_index_one_process_makes(store, monkeypatch, many, tmp_path, search):
    synced(store, 20)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 10**9)
    alone = dump(rebuilt(store, search=search))
    log = record_pids(monkeypatch, tmp_path)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    together = dump(rebuilt(store, search=search))
    assert together == alone, "the workers' index differs from the one made in one process"
    readers = [line.split() for line in log.read_text().splitlines()]
    assert len(readers) == 7 and {pid for pid, _ in readers} - {str(os.getpid())}, "chunks were read in workers"
    assert all(ignored == "1" for pid, ignored in readers if pid != str(os.getpid())), "a worker ignores Ctrl-C"
    assert len(alone[0]) == 21 and [row[5] != "" for row in alone[0]].count(True) == 1  # the broken file
    assert not search or alone[1], "the texts were written"


def test_a_worker_that_dies_leaves_the_rest_to_the_refreshing_process(store, monkeypatch, many):
    made = synced(store, 20)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 10**9)
    alone = dump(rebuilt(store, search=True))
    main = os.getpid()
    read_all = refresh.Reader.read_all

    def dies(self, tasks):
        if os.getpid() != main and made[7] in {task.cid for task in tasks}:
            os._exit(1)
        return read_all(self, tasks)

    monkeypatch.setattr(refresh.Reader, "read_all", dies)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    assert dump(rebuilt(store, search=True)) == alone, "the chunks a dead worker left were read here"


def test_ctrl_c_keeps_the_chunks_written_and_leaves_no_worker(store, monkeypatch, many):
    made = synced(store, 20)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    write = refresh._write
    chunks: list[int] = []

    def interrupted(db, done):
        chunks.append(len(done))
        if len(chunks) == 3:
            raise KeyboardInterrupt
        write(db, done)

    monkeypatch.setattr(refresh, "_write", interrupted)
    store.index.close()
    for suffix in ("", "-wal", "-shm"):
        (store.root / f"index.sqlite{suffix}").unlink(missing_ok=True)
    fresh = Store(store.root)
    with pytest.raises(KeyboardInterrupt):
        fresh.list()
    for child in multiprocessing.active_children():
        child.join(timeout=30)
    assert not multiprocessing.active_children(), "a worker outlived the rebuild"
    fresh.index.close()
    assert len(dump(fresh)[0]) == 6  # two chunks of three were committed
    monkeypatch.setattr(refresh, "_write", write)
    assert sorted(c.id for c in Store(store.root).list()) == sorted(made)  # the next listing finishes it


ORPHANED = """
import multiprocessing, os, sys
from golem_cli.store import fanout

def nothing():
    pass

chunks = fanout.in_order(list(range(40)), here=abs, there=abs, workers=2, start=nothing, start_args=())
assert next(chunks) == 0
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
os._exit(0)  # gone without stopping the pool, as a process killed is
"""


def test_workers_end_when_the_refreshing_process_is_gone_without_stopping_them():
    import subprocess
    import sys
    import time

    done = subprocess.run([sys.executable, "-c", ORPHANED], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 30
    while any(os.path.exists(f"/proc/{pid}") for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)  # polling the processes themselves: they are not this test's children
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids), "a worker outlived its refreshing process"
