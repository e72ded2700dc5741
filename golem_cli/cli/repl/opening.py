"""A chat whose session opens after its prompt is drawn (ADR 0015).

Opening a session can take a while: a new chat resolves its model and creates the
conversation; ``resume`` of a long conversation loads and repairs it (seconds at 150,000
messages). The prompt does not wait: the command gives the REPL a ``PendingSession`` (what the
banner shows, and how to open the session), the REPL draws the prompt, and a ``SessionOpener``
opens the session in a worker thread while the person types. Every line waits for it.

A new chat opens in two steps: its ``check`` (the model: a bad name or key ends the chat at
once) starts with the prompt, the session itself once the person's first key is on screen
(``SessionOpener.go``), so that the prompt's first echo does not share the interpreter with it.
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
    taken for it (the conversation's lock) when the session is never opened. ``check``, when
    given, runs first, as soon as the prompt is drawn (a new chat's model); ``open`` then
    waits for ``SessionOpener.go``."""

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
        check: Callable[[], None] | None = None,
    ) -> None:
        self.model = model
        self.conversation_id = conversation_id
        self.unique = unique
        self.open = open
        self.toolbox = toolbox
        self.lines = list(lines)
        self.release = release
        self.check = check


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
        self._thread: threading.Thread | None = None
        self._go = threading.Event()  # the session may open (after the pending session's check)
        self._ended = False  # the chat ended before ``go``: the session is not opened at all

    def start(self) -> asyncio.Future[Opened]:
        """Start the opening (the first call only): the pending session's check at once, the
        session after ``go`` (at once when there is no check); the future of its result in the
        running loop, whose callback ``on_opened`` runs before anything awaiting it resumes."""
        if self._opened is None:
            work: concurrent.futures.Future[Opened] = concurrent.futures.Future()
            self._thread = threading.Thread(target=self._run, args=(work,), name="golem-open-session")
            self._thread.start()
            self._work = work
            self._opened = asyncio.wrap_future(work)
            self._opened.add_done_callback(self._on_opened)
        return self._opened

    def go(self) -> None:
        """Let the session open once its check has passed (the person has started typing, or a
        line is to be acted on)."""
        self._go.set()

    def session_at_end(self) -> ChatSession | None:
        """When the chat ends: the session to close, once an opening under way has finished;
        an opening that never started gives back what its pending session holds, one still
        waiting for ``go`` opens nothing."""
        if self._work is None or self._thread is None:
            if self.pending.release is not None:
                self.pending.release()
            return None
        self._ended = True
        self._go.set()
        self._thread.join()
        if not self._work.done():  # stopped before opening: there is nothing to close
            return None
        with contextlib.suppress(BaseException):  # a failed opening released what it held; its error is reported
            return self._work.result()[0]
        return None

    def _run(self, work: concurrent.futures.Future[Opened]) -> None:
        try:
            if self.pending.check is not None:
                self.pending.check()
                self._go.wait()
                if self._ended:
                    return  # the future stays pending: the loop it would report to is gone
            work.set_result(self.pending.open())
        except BaseException as e:  # kept whole: whoever awaits the opening raises it
            work.set_exception(e)
