"""Doing chunks of independent work in worker processes, their results taken in order.

A rebuild of the index reads, decodes and works out the row of every file no sidecar describes:
work that depends on no other file and is most of what a rebuild costs, while SQLite takes one
writer. So on a machine with more than one core, a large rebuild hands its chunks to worker
processes (``concurrent.futures``) and the process that refreshes writes each chunk's results,
in the order of the chunks, as they come back (refresh.py). Only a few chunks are in flight at
once, so the results held stay bounded. A worker ignores Ctrl-C: the refreshing process alone
stops (its chunk's transaction rolled back) and the pool with it; a worker whose refreshing
process is gone ends too. A worker that dies leaves its chunk and those after it to this
process.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

_T = TypeVar("_T")
_R = TypeVar("_R")

#: Chunks handed out ahead of the one being written, per worker.
AHEAD = 2


def cores() -> int:
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def in_order(
    chunks: Sequence[_T],
    *,
    here: Callable[[_T], _R],
    there: Callable[[_T], _R],
    workers: int,
    start: Callable[..., None],
    start_args: tuple[object, ...],
) -> Iterator[_R]:
    """The result of each chunk, in order: ``there`` in ``workers`` processes (each begun with
    ``start(*start_args)``; both module-level functions, as a worker process imports them), or
    ``here`` in this process when there are fewer than two workers or two chunks, and for every
    chunk from the first one a dead worker left."""
    if workers < 2 or len(chunks) < 2:
        yield from map(here, chunks)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(workers, initializer=_worker, initargs=(start, start_args))
    pending: deque[Future[_R]] = deque()
    handed = 0
    try:
        while handed < len(chunks) or pending:
            while handed < len(chunks) and len(pending) < AHEAD * workers:
                pending.append(pool.submit(there, chunks[handed]))
                handed += 1
            future = pending.popleft()
            try:
                result = future.result()
            except BrokenProcessPool:
                left = handed - len(pending) - 1
                pool.shutdown(wait=False, cancel_futures=True)
                yield from map(here, chunks[left:])
                return
            yield result
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _worker(start: Callable[..., None], start_args: tuple[object, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the refreshing process's to handle
    threading.Thread(target=_end_with_parent, daemon=True).start()
    start(*start_args)


def _end_with_parent() -> None:
    """End this worker when the refreshing process is gone without stopping the pool (killed,
    or ended by a signal without unwinding): no one reads its results, and its siblings hold
    the pipes open, so it would wait on them for ever."""
    from multiprocessing import parent_process
    from multiprocessing.connection import wait

    parent = parent_process()
    if parent is not None:
        wait([parent.sentinel])
        os._exit(1)
