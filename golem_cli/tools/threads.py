"""Running a blocking file tool off the event loop, in a thread that never holds golem up.

``asyncio.to_thread`` uses the loop's default executor, whose threads ``asyncio.run`` joins
when it ends (and the interpreter again at exit): one read stuck on a slow or hung file
system would keep golem from leaving after Ctrl-C and Ctrl-D. A daemon thread of its own per
call does not: the run stops waiting for it at once, and golem leaves without it.

The thread also turns an ``OSError`` (a name too long, permission denied, a disk full) into
``ToolFailed`` with the OS's words, so a tool's bad luck with the file system is a failed
result the model reads, never a failed turn.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.regular import os_reason

T = TypeVar("T")


async def off_thread(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a daemon thread; its ``OSError`` as ``ToolFailed``."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(value: Any, error: BaseException | None) -> None:
        if future.done():  # the run stopped waiting (Ctrl-C)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = func(*args)
        except OSError as e:
            error = ToolFailed(os_reason(e))
        except BaseException as e:  # handed to the run, which decides what it means
            error = e
        try:
            loop.call_soon_threadsafe(deliver, value, error)
        except RuntimeError:  # the loop is closed: nobody waits for this any more
            pass

    threading.Thread(target=work, name=f"golem-tool-{getattr(func, '__name__', 'call')}", daemon=True).start()
    return await future
