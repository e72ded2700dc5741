"""A chat whose session opens after its prompt is drawn (ADR 0015).

Opening a session can take a while: a new chat resolves its model and creates the
conversation; ``resume`` of a long conversation loads and repairs it (seconds at 150,000
messages). The prompt does not wait: the command gives the REPL a ``PendingSession`` (what the
banner shows, and how to open the session), the REPL draws the prompt, and a ``SessionOpener``
opens the session in a worker thread while the person types. Every line waits for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.session import ChatSession
    from golem_cli.tools.toolbox import Toolbox

#: What opening a session gives: the session, and lines to print above the prompt (a repair report).
Opened = tuple["ChatSession", list[str]]


class PendingSession:
    """A chat shown before its session is open: what the banner says (the model by name, the
    conversation's ID and how much of it tells it apart), lines printed under the banner, and
    ``open``, which opens the session (a ``ModelError`` for a bad model name or key, a store
    error when the conversation cannot be created or read). ``release`` gives back what was
    taken for it (the conversation's lock) when the session is never opened."""

    def __init__(
        self,
        *,
        model: str,
        conversation_id: str,
        unique: int,
        open: Callable[[], Opened],
        toolbox: Toolbox | None = None,
        lines: Sequence[str] = (),
        release: Callable[[], None] | None = None,
    ) -> None:
        self.model = model
        self.conversation_id = conversation_id
        self.unique = unique
        self.open = open
        self.toolbox = toolbox
        self.lines = list(lines)
        self.release = release


class SessionOpener:
    """Opens a ``PendingSession`` once, in a worker thread, and hands the result to the event
    loop. A thread, not the event loop: a long history is decoded in many short calls, so the
    prompt goes on echoing keys while it loads; in the loop it would freeze for the whole load.
    The thread is not a daemon: it may be saving a repair when the chat ends."""

    def __init__(self, pending: PendingSession, on_opened: Callable[[asyncio.Future[Opened]], None]) -> None:
        self.pending = pending
        self._on_opened = on_opened
        self._work: concurrent.futures.Future[Opened] | None = None
        self._opened: asyncio.Future[Opened] | None = None

    def start(self) -> asyncio.Future[Opened]:
        """Start the opening (the first call only); the future of its result in the running
        loop, whose callback ``on_opened`` runs before anything awaiting it resumes."""
        if self._opened is None:
            work: concurrent.futures.Future[Opened] = concurrent.futures.Future()
            threading.Thread(target=_run, args=(self.pending.open, work), name="golem-open-session").start()
            self._work = work
            self._opened = asyncio.wrap_future(work)
            self._opened.add_done_callback(self._on_opened)
        return self._opened

    def session_at_end(self) -> ChatSession | None:
        """When the chat ends: the session to close, once an opening under way has finished;
        an opening that never started gives back what its pending session holds."""
        if self._work is None:
            if self.pending.release is not None:
                self.pending.release()
            return None
        with contextlib.suppress(BaseException):  # a failed opening released what it held; its error is reported
            return self._work.result()[0]
        return None


def _run(open: Callable[[], Opened], work: concurrent.futures.Future[Opened]) -> None:
    try:
        work.set_result(open())
    except BaseException as e:  # kept whole: whoever awaits the opening raises it
        work.set_exception(e)
