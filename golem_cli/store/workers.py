"""Doing a large rebuild's reading in worker processes, while the refreshing process writes.

A rebuild of the index reads, decodes and works out the row (and for a search the words) of
every file: work that depends on no other file and is nearly all of what a rebuild costs, while
SQLite takes one writer. So on a machine with more than one core, a rebuild with many files to
decode hands its chunks of tasks to one worker process per core (refresh.py), and writes each
chunk's results, in the order of the chunks, as they come back. Chunk ``k`` goes to worker
``k % workers``, all of a worker's chunks in one message at its start; the worker sends back
each chunk's results as soon as it has them, as bytes the caller encoded (msgspec), so the
refreshing process does little more than SQLite's share.

A worker is a plain ``python`` process running ``serve`` (``subprocess``, not
``multiprocessing``: a golem command may have threads, which rules out ``fork``, and
``multiprocessing``'s ``spawn`` would start a resource tracker that outlives the rebuild and
import the command's main module again). It imports golem from the same place as its parent.
It runs in its own process group, so Ctrl-C on the terminal reaches the refreshing process
alone, which stops the workers (``Pool.stop``); a worker whose refreshing process is gone
(killed, or ended by a signal) finds its pipe closed at its next read or write and ends. A
worker that dies (``Lost``) leaves the chunks it had not sent back to the caller.
"""

from __future__ import annotations

import os
import queue
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    import subprocess

#: What a worker runs: golem imported from where its parent imported it (``sys.argv[1]``).
_COMMAND = "import sys; sys.path.insert(0, sys.argv.pop(1)); from golem_cli.store.workers import serve; serve()"
#: A frame's length, before its bytes.
_LENGTH = struct.Struct("!I")
#: How long a worker asked to stop may take before it is killed (seconds).
STOP_SECONDS = 5.0
#: How many chunks' results are read from a worker before the refreshing process asks for them.
AHEAD = 8

#: Given the arguments ``run`` passes on, the function doing one chunk: its bytes in, its results' bytes out.
Start = Callable[..., Callable[[bytes], bytes]]


class Lost(Exception):
    """A worker ended before it sent back chunk ``at`` (and every chunk after it is left too)."""

    def __init__(self, at: int) -> None:
        super().__init__(f"a worker ended before chunk {at}")
        self.at = at


def cores() -> int:
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool(workers: int) -> Pool | None:
    """``workers`` processes started now, to be given their chunks by ``run`` (they import
    golem meanwhile); None when they cannot be started (no process to spare)."""
    try:
        return Pool(workers)
    except (OSError, ValueError):
        return None


def run(pool: Pool, chunks: Sequence[bytes], *, start: str, args: Sequence[object]) -> Iterator[bytes]:
    """The results of ``chunks`` (each the bytes a chunk's function takes), in order, done by
    the pool's processes, each of which calls ``start`` (``"module:function"``, a ``Start``)
    with ``args`` (msgspec-encodable) once and then the function it returns on each of its
    chunks. Raises ``Lost`` when a worker ends too early; the workers are stopped however the
    iteration ends."""
    workers = len(pool.procs)
    try:
        for w in range(workers):
            pool.send(w, msgspec.msgpack.encode([start, list(args), list(chunks[w::workers])]))
        for at in range(len(chunks)):
            data = pool.receive(at % workers)
            if data is None:
                raise Lost(at)
            yield data
    finally:
        pool.stop()


class Pool:
    """The worker processes of one rebuild."""

    def __init__(self, workers: int) -> None:
        import subprocess  # only a large rebuild needs it

        import golem_cli

        root = str(Path(golem_cli.__file__).resolve().parent.parent)
        self.procs: list[subprocess.Popen[bytes]] = []
        self._ahead: list[_Ahead] = []
        try:
            for _ in range(workers):
                self.procs.append(
                    subprocess.Popen(
                        [sys.executable, "-P", "-c", _COMMAND, root],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        process_group=0,
                    )
                )
        except BaseException:
            self.stop()
            raise

    def send(self, w: int, data: bytes) -> None:
        stdin = self.procs[w].stdin
        assert stdin is not None
        try:
            stdin.write(_LENGTH.pack(len(data)) + data)
            stdin.close()
        except OSError:
            pass  # it ended already: its first chunk is found missing

    def receive(self, w: int) -> bytes | None:
        """Worker ``w``'s next chunk of results; None when it ended without one."""
        if not self._ahead:  # read on threads from now: a worker never waits on a full pipe
            self._ahead = [_Ahead(proc.stdout) for proc in self.procs]
        return self._ahead[w].next()

    def stop(self) -> None:
        """End every worker (done or not) and wait for it; again, it does nothing more."""
        import subprocess

        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for ahead in self._ahead:
            ahead.drain()
        for proc in self.procs:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
            try:
                proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:  # pragma: no cover - a killed process does not linger
                pass


class _Ahead:
    """A worker's results read as they come, up to ``AHEAD`` frames before they are asked for,
    on a thread of their own. A chunk's results are larger than a pipe holds (64 KiB), so a
    worker read only when its chunk is wanted would wait, its core idle, while this process
    writes the chunk before."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        assert stream is not None
        self._frames: queue.Queue[bytes | None] = queue.Queue(AHEAD)
        self._thread = threading.Thread(target=self._read, args=(stream,), name="golem-worker-results", daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            frame = _frame(stream)
            self._frames.put(frame)
            if frame is None:
                return

    def next(self) -> bytes | None:
        """The next frame; None once the worker's output ended (and at every call after)."""
        frame = self._frames.get()
        if frame is None:
            self._frames.put(None)
        return frame

    def drain(self) -> None:
        """Wait for the thread to end (its worker was stopped, so its output ends), taking
        the frames it still holds so that it is never left waiting to put one."""
        while self._thread.is_alive():
            while self.next() is not None:
                pass
            self._thread.join(0.1)


def _frame(stream: IO[bytes]) -> bytes | None:
    """One length-prefixed frame from ``stream``; None at its end (or a frame cut short)."""
    try:
        head = stream.read(_LENGTH.size)
        if len(head) != _LENGTH.size:
            return None
        (size,) = _LENGTH.unpack(head)
        data = stream.read(size)
    except (OSError, ValueError):
        return None
    return data if len(data) == size else None


def serve() -> None:
    """A worker's life: its task (``run``'s message) from standard input, each chunk's results
    to standard output as it is done. Anything going wrong ends it quietly (the refreshing
    process does the chunks left): nothing of it reaches the terminal."""
    try:
        with os.fdopen(0, "rb") as stdin, os.fdopen(1, "wb") as stdout:
            message = _frame(stdin)
            if message is None:
                return
            start, args, chunks = msgspec.msgpack.decode(message, type=tuple[str, list[object], list[bytes]])
            module, name = start.split(":")
            begin: Start = getattr(__import__(module, fromlist=[name]), name)
            work = begin(*args)
            for chunk in chunks:
                result = work(chunk)
                stdout.write(_LENGTH.pack(len(result)) + result)
                stdout.flush()
    except BaseException:
        os._exit(1)
