"""SIGTERM and SIGHUP end golem the way Ctrl-C ends a turn.

Closing a terminal or an SSH session (SIGHUP), ``timeout``, ``systemd`` or ``kill`` (SIGTERM)
during a streamed reply or a tool round must keep what arrived, as Ctrl-C does: while a chat
or ``golem ask`` runs its event loop, either signal cancels what runs (the turn, else the
prompt) with a message naming the signal, so the session saves the partial reply (marked
interrupted) or the tool round (a call that was running says it was stopped by that signal),
and the chat writes turns a refused save kept in memory to ``unsaved/`` as leaving does. Then
golem ends by that same signal (``die_by``), so whoever sent it sees the status it expects.

Outside the event loop (before it starts, after it ends) the terminal's own handler restores
the terminal and ends golem at once (``terminal.restored_on_termination``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType

ENDING = (signal.SIGTERM, signal.SIGHUP)


class Termination:
    """Which ending signal arrived while the block ran (None: none did)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    @property
    def message(self) -> str:
        """The cancellation's message: the core names the signal in a stopped call's result."""
        from golem_cli.core.tools import STOP_PREFIX  # the core loads with the session, after the prompt

        return f"{STOP_PREFIX}a signal ({self.name})"


@contextlib.contextmanager
def ending_like_ctrl_c(stop: Callable[[str], object]) -> Iterator[Termination]:
    """While the block runs in the running event loop, the first SIGTERM or SIGHUP calls
    ``stop`` with the cancellation's message (a later one is ignored: the save is under way).
    The handlers golem had before come back after the block."""
    termination = Termination()
    loop = asyncio.get_running_loop()

    def heard(signum: int) -> None:
        if termination.signum is None:
            termination.signum = signum
            stop(termination.message)

    before: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
    for signum in ENDING:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            previous = signal.getsignal(signum)
            loop.add_signal_handler(signum, heard, signum)
            before[signum] = previous
    try:
        yield termination
    finally:
        for taken, previous in before.items():
            loop.remove_signal_handler(taken)
            with contextlib.suppress(TypeError, ValueError):
                signal.signal(taken, previous)


def die_by(signum: int) -> None:
    """End golem by ``signum`` as if it had not been caught (its exit status is the signal's),
    once what it printed is flushed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # not reached where the signal ends the process
