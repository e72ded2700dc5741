"""One writer per conversation: refusals name the holder; dead holders' locks are taken over;
two processes never hold the same lock at once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from golem_cli.core.messages import Message
from golem_cli.store import ConversationLocked, Store, StoreError

HOLDER = """
import sys, time
from pathlib import Path
from golem_cli.store import Store
store = Store(Path(sys.argv[1]))
lock = store.lock(sys.argv[2])
print("locked", flush=True)
time.sleep(60)
"""


def start_holder(store: Store, cid: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.root), cid], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.fixture
def holder(store):
    procs = []

    def run(cid):
        p = start_holder(store, cid)
        procs.append(p)
        return p

    yield run
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def test_second_writer_is_refused_with_the_holder_named(store, holder):
    cid = store.create([Message("user", "hi")])
    proc = holder(cid)
    with pytest.raises(ConversationLocked) as info:
        store.save(cid, [Message("user", "mine")])
    err = info.value
    assert err.holder is not None and err.holder.pid == proc.pid
    assert err.holder.host == socket.gethostname()
    text = str(err)
    assert f"pid {proc.pid}" in text and socket.gethostname() in text and "since" in text
    assert f"golem fork {cid[-12:]}`" in text  # the handle every other line prints
    for attempt in (lambda: store.delete(cid), lambda: store.set_title(cid, "x"), lambda: store.lock(cid)):
        with pytest.raises(ConversationLocked):
            attempt()
    assert store.load(cid) == [Message("user", "hi")]  # reading needs no lock


def test_lock_of_a_killed_process_is_taken_over(store, holder):
    cid = store.create([Message("user", "hi")])
    proc = holder(cid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert store.lock_path(cid).exists()  # the dead process left its record behind
    with store.lock(cid) as lock:
        assert lock.took_over is not None and lock.took_over.pid == proc.pid
        store.save(cid, [Message("user", "after")])
    assert not store.lock_path(cid).exists()
    assert store.load(cid) == [Message("user", "after")]


def test_stale_record_without_a_lock_is_overwritten(store):
    cid = store.create([])
    store.locks_dir.mkdir(exist_ok=True)
    store.lock_path(cid).write_text('{"pid": 999999, "host": "elsewhere", "since": 1}')
    with store.lock(cid) as lock:
        assert lock.took_over.pid == 999999
        assert store.holder(cid).pid == os.getpid()


def test_lock_is_reentrant_in_one_process(store):
    cid = store.create([])
    with store.lock(cid):
        with store.lock(cid):
            store.save(cid, [Message("user", "a")])
        assert store.lock_path(cid).exists()
        store.save(cid, [Message("user", "b")])
    assert not store.lock_path(cid).exists()


def test_create_hold_and_release(store, holder):
    cid = store.create([Message("user", "x")], hold=True)
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(
            [sys.executable, "-c", HOLDER.replace("time.sleep(60)", ""), str(store.root), cid],
            check=True, capture_output=True,
        )  # fmt: skip
    store.release(cid)
    proc = holder(cid)  # now another process can take it
    assert proc.poll() is None


CONTENDER = """
import os, sys
from pathlib import Path
from golem_cli.store import Store, ConversationLocked
store = Store(Path(sys.argv[1])); cid = sys.argv[2]; marker = Path(sys.argv[3])
held = 0
for _ in range(int(sys.argv[4])):
    try:
        lock = store.lock(cid)
    except ConversationLocked:
        continue
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # fails if another holder is inside
        os.close(fd)
        os.unlink(marker)
        held += 1
    finally:
        lock.release()
print(held)
"""


def test_two_processes_never_hold_one_lock_at_once(store, tmp_path):
    cid = store.create([])
    marker = tmp_path / "inside"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONTENDER, str(store.root), cid, str(marker), "400"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(3)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err  # FileExistsError would mean two holders at once
    assert sum(int(out) for out, _ in results) > 0
    assert not store.lock_path(cid).exists()


def test_lock_files_live_outside_the_conversations_directory(store):
    cid = store.create([])
    mtime = os.stat(store.conversations_dir).st_mtime_ns
    time.sleep(0.01)
    with store.lock(cid):
        pass
    assert os.stat(store.conversations_dir).st_mtime_ns == mtime  # the listing index stays fresh
    assert Path(store.lock_path(cid)).parent == store.locks_dir


def test_a_symlink_planted_at_the_lock_path_is_refused_and_its_target_untouched(store, tmp_path):
    cid = store.create([Message("user", "hi")])
    target = tmp_path / "precious.txt"
    target.write_text("do not overwrite")
    store.locks_dir.mkdir(exist_ok=True)
    os.symlink(target, store.lock_path(cid))
    with pytest.raises(StoreError, match="symlink"):
        store.save(cid, [Message("user", "mine")])
    assert target.read_text() == "do not overwrite"
    assert store.holder(cid) is None  # reading the record does not follow it either
    assert store.load(cid) == [Message("user", "hi")]


def test_a_fifo_at_the_lock_path_is_refused_at_once(store):
    cid = store.create([Message("user", "hi")])
    os.mkfifo(store.lock_path(cid))
    start = time.monotonic()
    with pytest.raises(StoreError, match="special file"):
        store.save(cid, [Message("user", "mine")])
    assert store.holder(cid) is None
    assert time.monotonic() - start < 5


def test_only_the_lock_helper_takes_os_locks():
    """index.py once took flock its own way (and imported fcntl unconditionally)."""
    import ast

    import golem_cli.store

    package = Path(golem_cli.store.__file__).parent
    users = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
                if {"fcntl", "msvcrt"} & set(names):
                    users.add(path.name)
    assert users == {"locks.py"}
