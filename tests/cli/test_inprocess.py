"""The in-process ``golem`` (``golem_main``) fails a test whose call left the process changed:
each kind of leftover it looks for, made on purpose around a real command, is named."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from golem_cli.cli import app
from golem_cli.store import locks

from tests.inprocess import run_in_process


def _env() -> Callable[[], None]:
    os.environ["GOLEM_LEFT_BEHIND"] = "1"
    return lambda: os.environ.pop("GOLEM_LEFT_BEHIND")


def _signal() -> Callable[[], None]:
    previous = signal.signal(signal.SIGUSR1, lambda *_: None)
    return lambda: signal.signal(signal.SIGUSR1, previous)


def _file() -> Callable[[], None]:
    left = open(os.path.join(os.environ["GOLEM_HOME"], "left-open"), "wb")  # left open on purpose
    return left.close


def _thread() -> Callable[[], None]:
    done = threading.Event()
    thread = threading.Thread(target=done.wait, name="left-behind")
    thread.start()
    return lambda: (done.set(), thread.join())


def _lock() -> Callable[[], None]:
    lock = locks.acquire(Path(os.environ["GOLEM_HOME"]) / "left.lock")
    return lock.release


def _cwd() -> Callable[[], None]:
    before = os.getcwd()
    os.chdir("/")
    return lambda: os.chdir(before)


def _module() -> Callable[[], None]:
    real = sys.modules["golem_cli.cli.errors"]
    sys.modules["golem_cli.cli.errors"] = type(real)("golem_cli.cli.errors")
    return lambda: sys.modules.__setitem__("golem_cli.cli.errors", real)


LEFT = {
    "environment": _env,
    "signal handlers": _signal,
    "open files": _file,
    "threads": _thread,
    "locks held": _lock,
    "working directory": _cwd,
    "module golem_cli.cli.errors": _module,
}


@pytest.fixture
def leaving(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], None]]]:
    """Undoes, after the test, what the patched command left."""
    undo: list[Callable[[], None]] = []
    yield undo
    for step in reversed(undo):
        step()


@pytest.mark.parametrize("what", sorted(LEFT))
def test_a_call_that_leaves_the_process_changed_fails_naming_what(home, monkeypatch, leaving, what):
    home.mkdir()
    real_run = app.run

    def run_and_leave(args: list[str]) -> int:
        code = real_run(args)
        leaving.append(LEFT[what]())
        return code

    monkeypatch.setattr(app, "run", run_and_leave)
    with pytest.raises(AssertionError, match="left this process changed") as failed:
        run_in_process(monkeypatch, ("list",), b"", {})
    assert what in str(failed.value), str(failed.value)


def test_a_call_that_leaves_nothing_passes_and_reads_like_a_pipe(home, monkeypatch):
    done = run_in_process(monkeypatch, ("list", "--json"), b"", {"GOLEM_DEBUG": "0"})
    assert (done.code, done.out, done.raw) == (0, "[]\n", b"[]\n")
    assert "GOLEM_DEBUG" not in os.environ  # the call's environment was its own


def test_work_left_for_the_exit_of_a_process_is_named(home, monkeypatch):
    """``ask --no-save`` leaves its temporary store for the exit to remove: in this process no
    exit follows the call, so a test of it keeps a process."""
    with pytest.raises(AssertionError, match=r"atexit callbacks: .*rmtree from _throwaway_store"):
        run_in_process(monkeypatch, ("ask", "--no-save", "-m", "offline:echo", "hi"), b"", {})
