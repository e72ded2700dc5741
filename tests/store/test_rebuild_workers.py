"""A large rebuild of the index reads its files in worker processes while the refreshing process
writes (store/workers.py, refresh.py): the index it makes is the one a rebuild in one process
makes, with the same progress; a small one stays in one process; a worker that dies leaves the
rest to the refreshing process; Ctrl-C stops the rebuild, keeps the chunks written and leaves no
worker behind; so does a SIGTERM that ends the refreshing process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store, refresh, workers

PARENT = "01a228ea-1414-732e-9d7a-7c1f891d8000"
COUNT = 20


def synced(root: Path, count: int = COUNT) -> list[str]:
    """``count`` conversations as a sync tool brings them (no sidecars), among them forks (by
    their stamps), one spelled as only Go writes it, one broken, one with a stale sidecar, and
    one golem saved."""
    store = Store(root)
    store.conversations_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(count):
        cid = f"01a228ea-1414-732e-9d7a-7c1f891d{i:04x}"
        stamp = PARENT if i % 5 == 1 else cid
        messages = [
            Message(
                "user", f"question {i} zebra", run_id=f"01a228ea-1414-732e-9d7a-7c1f891e{i:04x}", conversation_id=stamp
            ),
            Message("assistant", f"answer {i} Straße", conversation_id=cid),
        ]
        store.messages_path(cid).write_bytes(dump_history(messages))
        made.append(cid)
    store.messages_path(made[3]).write_bytes(b'[{"Role":"user","Content":"spelled otherwise zebra"}]')
    store.messages_path(made[4]).write_bytes(b'[{"role":"user","content":')
    store.meta_path(made[5]).write_bytes(b'{"id":"%s","title":"kept","size":1}' % made[5].encode())
    made.append(store.create([Message("user", "saved by golem zebra")]))
    store.index.close()
    return made


def dump(root: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The rows and texts of the index (the signatures of files read, as rows hold them)."""
    db = sqlite3.connect(root / "index.sqlite")
    try:
        rows = db.execute(
            "SELECT id, updated, meta, msig, ssig, problem, tsig, tcount, tbytes, tparts FROM conversations ORDER BY id"
        )
        texts = db.execute("SELECT rowid, body FROM texts ORDER BY rowid")
        return rows.fetchall(), [(rowid, " ".join(sorted(body.split()))) for rowid, body in texts]
    finally:
        db.close()


def rebuilt(root: Path, *, search: bool, progress: list[tuple[str, int, int]] | None = None) -> Store:
    """A store at ``root`` whose index is rebuilt from nothing by a listing (or a search)."""
    for suffix in ("", "-wal", "-shm"):
        (root / f"index.sqlite{suffix}").unlink(missing_ok=True)
    fresh = Store(root, progress=None if progress is None else (lambda *call: progress.append(call)))
    fresh.search("zebra") if search else fresh.list()
    fresh.index.close()
    return fresh


class Spy:
    """What the rebuild's worker pools did: their processes, and how many chunks came back."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pids: list[int] = []
        self.chunks = 0
        pool_init, run = workers.Pool.__init__, workers.run

        def started(pool: workers.Pool, count: int) -> None:
            pool_init(pool, count)
            self.pids.extend(proc.pid for proc in pool.procs)

        def counted(*args: object, **kwargs: object):
            for data in run(*args, **kwargs):  # type: ignore[arg-type]
                self.chunks += 1
                yield data

        monkeypatch.setattr(workers.Pool, "__init__", started)
        monkeypatch.setattr(workers, "run", counted)

    def alive(self) -> list[int]:
        return [pid for pid in self.pids if _running(pid)]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def many(monkeypatch):
    """Rebuilds of more than a few conversations read in two workers, three files a chunk."""
    monkeypatch.setattr(refresh, "CHUNK", 3)
    monkeypatch.setattr(workers, "cores", lambda: 2)


@pytest.mark.parametrize("search", [False, True], ids=["rows", "rows and text"])
def test_workers_make_the_index_and_progress_one_process_makes(home, monkeypatch, many, search):
    synced(home)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 10**9)
    alone_progress: list[tuple[str, int, int]] = []
    alone = dump(rebuilt(home, search=search, progress=alone_progress).root)
    spy = Spy(monkeypatch)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    together_progress: list[tuple[str, int, int]] = []
    together = dump(rebuilt(home, search=search, progress=together_progress).root)
    assert spy.chunks == 7 and len(spy.pids) == 2, "every chunk was read in the two workers"
    assert together == alone, "the workers' index differs from the one made in one process"
    assert together_progress == alone_progress, "the progress differs from one process's"
    assert not spy.alive(), "a worker outlived the rebuild"
    assert len(alone[0]) == COUNT + 1 and [row[5] != "" for row in alone[0]].count(True) == 1  # the broken file
    assert not search or len(alone[1]) == COUNT, "the texts were written"


def test_a_small_rebuild_stays_in_one_process(home, monkeypatch, many):
    synced(home)
    spy = Spy(monkeypatch)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", COUNT + 2)  # one more than the files to decode
    rebuilt(home, search=True)
    assert spy.pids == [], "a rebuild of fewer than PARALLEL_TASKS files started workers"


def dying_reader(directory: str, limit: int, text: bool):
    """A worker's reading that ends its process at the chunk holding the eighth conversation."""
    read = refresh.chunk_reader(directory, limit, text)

    def dies(data: bytes) -> bytes:
        if b"7c1f891d0007" in data:
            os._exit(1)
        return read(data)

    return dies


def test_a_worker_that_dies_leaves_the_rest_to_the_refreshing_process(home, monkeypatch, many):
    synced(home)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 10**9)
    alone = dump(rebuilt(home, search=True).root)
    spy = Spy(monkeypatch)
    monkeypatch.setattr(refresh, "WORKER", f"{__name__}:dying_reader")
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    together = dump(rebuilt(home, search=True).root)
    assert spy.chunks == 2, "chunks 0 and 1 came from the workers, chunk 2 (the eighth file) from none"
    assert together == alone, "the chunks a dead worker left were not read here"
    assert not spy.alive(), "a worker outlived the rebuild"


def test_workers_that_cannot_start_leave_the_rebuild_to_the_refreshing_process(home, monkeypatch, many):
    synced(home)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 10**9)
    alone = dump(rebuilt(home, search=True).root)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)

    def refused(*args: object, **kwargs: object) -> None:
        raise BlockingIOError("Resource temporarily unavailable")  # fork's EAGAIN: too many processes

    monkeypatch.setattr(subprocess, "Popen", refused)
    assert dump(rebuilt(home, search=True).root) == alone, "the rebuild did not go on in one process"


def test_ctrl_c_keeps_the_chunks_written_and_leaves_no_worker(home, monkeypatch, many):
    made = synced(home, 1000)  # the workers are still reading (or waiting to send) at Ctrl-C
    spy = Spy(monkeypatch)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    write = refresh._write
    chunks: list[int] = []

    def interrupted(db, done):
        chunks.append(len(done))
        if len(chunks) == 3:
            raise KeyboardInterrupt
        write(db, done)

    monkeypatch.setattr(refresh, "_write", interrupted)
    with pytest.raises(KeyboardInterrupt) as interrupt:
        rebuilt(home, search=False)
    assert interrupt.tb is not None  # the rebuild's frames are still held: the workers end anyway
    assert len(spy.pids) == 2 and not spy.alive(), "a worker outlived the rebuild"
    assert len(dump(home)[0]) == 6, "the two chunks of three written before Ctrl-C were not kept"
    monkeypatch.setattr(refresh, "_write", write)
    assert sorted(c.id for c in Store(home).list()) == sorted(made), "the next listing did not finish it"


#: A rebuild in two workers that stops, after its first chunk, until it is killed.
STOPPED = """
import sys
from golem_cli.store import Store, refresh, workers
refresh.CHUNK, refresh.PARALLEL_TASKS = 3, 2
workers.cores = lambda: 2
init = workers.Pool.__init__
def started(pool, count):
    init(pool, count)
    print(" ".join(str(p.pid) for p in pool.procs), flush=True)
workers.Pool.__init__ = started
def progress(what, done, total):
    if done == 3:
        print("stopped", flush=True)
        sys.stdin.read()  # until the test ends this process
from pathlib import Path
Store(Path(sys.argv[1]), progress=progress).list()
"""


def test_sigterm_ends_the_refreshing_process_and_its_workers(home):
    synced(home, 1000)  # each worker's results fill its pipe: it is still there, waiting to send
    with subprocess.Popen(
        [sys.executable, "-c", STOPPED, str(home)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert proc.stdout.readline() == "stopped\n"
        assert len(pids) == 2 and all(_running(pid) for pid in pids)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == -signal.SIGTERM
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)  # polling the processes themselves: they are not this test's children
    assert not any(_running(pid) for pid in pids), "a worker outlived its refreshing process"
    assert len(dump(home)[0]) == 1 + 3, "the saved one's row and the chunk written before the signal were not kept"


def large_results(*args: object):
    """A worker's reading whose every chunk's results are larger than a pipe holds."""
    return lambda data: bytes(300_000)


def test_a_worker_goes_on_while_the_refreshing_process_writes():
    """A chunk's results are read off the worker's pipe as they come (up to ``AHEAD``), not
    when the refreshing process asks for them: a worker never sits idle on a full pipe while
    the chunk before is written."""
    pool = workers.pool(2)
    assert pool is not None
    results = workers.run(pool, [b""] * 8, start=f"{__name__}:large_results", args=[])
    assert next(results) == bytes(300_000)  # and nothing more asked for: the "writing" goes on
    try:
        for proc in pool.procs:  # each sent its four chunks (1.2 MB) and ended
            assert proc.wait(timeout=30) == 0
    finally:
        results.close()
    assert not any(_running(proc.pid) for proc in pool.procs)


def test_a_first_rebuild_starts_its_workers_before_it_works_out_the_tasks(home, monkeypatch, many):
    """Filling an empty index, the workers import golem while the refreshing process sorts the
    scan into tasks (their start is not added to the rebuild's time); a later refresh starts
    them only once its tasks say there are enough files to decode."""
    synced(home)
    spy = Spy(monkeypatch)
    monkeypatch.setattr(refresh, "PARALLEL_TASKS", 2)
    started_first: list[int] = []
    tasks = refresh.Refresh._tasks

    def noted(self: refresh.Refresh, *args: object) -> list[refresh.Task]:
        started_first.append(len(spy.pids))  # the workers started so far
        return tasks(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(refresh.Refresh, "_tasks", noted)
    store = rebuilt(home, search=False)
    assert started_first == [2] and len(spy.pids) == 2
    for n in range(3):  # synced in after the rebuild
        store.messages_path(f"01a228ea-1414-732e-9d7a-7c1f891f{n:04x}").write_bytes(
            dump_history([Message("user", "new")])
        )
    Store(home).list()
    assert started_first == [2, 2] and len(spy.pids) == 4  # 3 new files: a pool after the tasks
