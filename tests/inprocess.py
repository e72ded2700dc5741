"""golem's real entry point, ``golem_cli.__main__.main``, called in the test's own process, and
the proof after every call that it left the process as it found it.

A command's output, exit code and files do not depend on whether the interpreter started for
it; what could make an in-process run differ from ``golem`` started by a shell is what an
earlier call left behind. So ``snapshot`` is taken before and after every call: the
environment, the signal handlers (and the wakeup fd an event loop sets), the standard streams,
the working directory, the umask, the recursion limit, the threads, the files held open, the
work golem's code leaves for the exit (``atexit``), the locks and process groups golem keeps
per process, the event loop policy, logging, the warning filters, and every module already
imported. Anything changed fails the test that made the call, naming what was left.

Standard input, output and error are a pipe's: text streams over bytes that are not a
terminal, read and written as golem reads and writes its pipes (``raw`` holds stdout's bytes).
What stays a subprocess (``golem`` in conftest.py): anything about the process itself
(signals, locks between processes, crashes, a terminal) and a read that could hang or never
end, where the subprocess's ``timeout`` turns a hang into a failure.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import io
import logging
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import golem_cli
import pytest
from golem_cli.__main__ import main
from golem_cli.store import locks
from golem_cli.tools import shell


@dataclass
class Result:
    """What one golem call gave: its exit code, its standard output and error as text, and its
    standard output's bytes."""

    code: int
    out: str
    err: str
    raw: bytes = b""


_PACKAGE = os.path.dirname(golem_cli.__file__)
_REGISTER = atexit.register
_EXIT_WORK: list[str] = []  # what golem's code asked to do at exit while a call ran


def _register_exit_work(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """``atexit.register`` while a call runs: work golem's own code leaves for the exit of a
    process (a temporary store to remove) is a leftover here, since no exit follows the call.
    A module that registers when it is first imported does it once per process, as it would."""
    caller = sys._getframe(1).f_code
    if caller.co_filename.startswith(_PACKAGE) and caller.co_name != "<module>":
        _EXIT_WORK.append(f"{getattr(func, '__qualname__', func)!s} from {caller.co_name}")
    return _REGISTER(func, *args, **kwargs)


_SIGNALS = sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP})


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def _wakeup_fd() -> int:
    current = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(current)
    return current


def _open_files() -> dict[tuple[int, int], str]:
    """The files this process's descriptors hold open, by identity (device and inode), each
    with a name for the message. Not by descriptor: SQLite keeps the descriptor of a database
    it closed while another connection of the process (the test's own ``Store``) has that file
    open; and not by name: a file the test holds open keeps its identity when golem renames it."""
    files = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            info = os.stat(int(fd))
            files[info.st_dev, info.st_ino] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used
            pass
    return files


def snapshot() -> dict[str, Any]:
    """What a call of ``main`` could leave behind in this process, by name."""
    return {
        "environment": dict(os.environ),
        "signal handlers": {signum: signal.getsignal(signum) for signum in _SIGNALS},
        "signal wakeup fd": _wakeup_fd(),
        "standard streams": (sys.stdin, sys.stdout, sys.stderr),
        "working directory": os.getcwd(),
        "umask": _umask(),
        "recursion limit": sys.getrecursionlimit(),
        "threads": set(threading.enumerate()),
        "open files": _open_files(),
        "atexit callbacks": list(_EXIT_WORK),
        "locks held": dict(locks._HELD),
        "process groups": set(shell.live_groups),
        "event loop policy": asyncio.get_event_loop_policy(),
        "gc enabled": gc.isenabled(),
        "logging handlers": list(logging.root.handlers),
        "warning filters": list(warnings.filters),
        "modules": dict(sys.modules),
    }


def _collected(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after``, taken again once the garbage is collected if golem's call left files open: a
    store's SQLite connection the command no longer reaches is closed by its finalizer, as the
    exit of a process would close it. The young generations first (what the call made), the
    whole heap only if that was not enough (a full collection of pytest's heap is slow)."""
    for generation in (1, 2):
        if after["open files"].keys() <= before["open files"].keys():
            break
        gc.collect(generation)
        after = snapshot()
    return after


def leftovers(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two snapshots; for modules, only those imported before the call
    (importing a module golem needs is what its own start would do)."""
    changed = [f"{name}: {_difference(before[name], after[name])}" for name in before
               if name not in ("modules", "open files", "threads") and before[name] != after[name]]  # fmt: skip
    started = [thread.name for thread in after["threads"] - before["threads"]]
    if started:  # one an earlier test started may have ended meanwhile
        changed.append(f"threads: started {sorted(started)}")
    added = [name for key, name in after["open files"].items() if key not in before["open files"]]
    if added:  # one the test held may have been closed meanwhile
        changed.append(f"open files: added {sorted(added)}")
    replaced = [name for name, module in before["modules"].items() if after["modules"].get(name) is not module]
    return changed + [f"module {name}" for name in replaced]


def _difference(before: Any, after: Any) -> str:
    if isinstance(before, dict | set):
        added = {key: after[key] for key in after if key not in before} if isinstance(after, dict) else after - before
        gone = [key for key in before if key not in after]
        changed = [key for key in before if key in after and isinstance(before, dict) and before[key] != after[key]]
        return f"added {added!r}, gone {gone!r}, changed {changed!r}"
    return f"{before!r} -> {after!r}"


@contextmanager
def piped(monkeypatch: pytest.MonkeyPatch, data: bytes) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """stdin holding ``data`` and stdout/stderr writing to bytes, none of them a terminal."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = {
        "stdin": io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"),
        "stdout": io.TextIOWrapper(out, encoding="utf-8"),
        "stderr": io.TextIOWrapper(err, encoding="utf-8", line_buffering=True),
    }
    with monkeypatch.context() as patched:
        for name, stream in streams.items():
            patched.setattr(sys, name, stream)
        try:
            yield out, err
        finally:
            for stream in streams.values():
                stream.flush()


def run_in_process(monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], data: bytes, env: dict[str, str]) -> Result:
    """``main(args)`` with ``env`` added to the environment for the call, checked for leftovers."""
    with monkeypatch.context() as patched:
        for name, value in env.items():
            patched.setenv(name, value)
        time.tzset()  # a process reads TZ when it starts; this one, when asked
        patched.setattr(atexit, "register", _register_exit_work)
        with piped(monkeypatch, data) as (out, err):
            before = snapshot()
            code = main(list(args))
            after = _collected(before, snapshot())
    time.tzset()
    left = leftovers(before, after)
    assert left == [], f"golem {' '.join(args)} left this process changed: {left}"
    raw = out.getvalue()
    return Result(code, raw.decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"), raw)
