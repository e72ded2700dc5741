"""The terminal's input mode while a chat runs, and the signals that end golem meanwhile.

Between prompts (a reply streaming, a footer, a slash command's output) the terminal would
normally be in cooked mode, and that costs two things:

- Keys typed during a reply are echoed into the reply, and the line discipline consumes some
  of them (Ctrl-D is end-of-file, not a key), so type-ahead does not reach the next prompt
  as it does in a shell.
- Ctrl-C makes the line discipline flush the output queue: bytes rich already wrote (part of
  a cursor movement of the live region) never reach the screen, the region's erase misses
  lines, and the partial reply shows twice.

So from before its banner to its end the chat holds the terminal in "waiting" mode: no echo,
not canonical (every key stays queued, unread, for prompt_toolkit, which takes raw mode for
the prompt and restores this mode after it), signals on (Ctrl-C still interrupts) and
``NOFLSH`` (it flushes nothing).

The mode the terminal had comes back when the chat ends, also when SIGTERM or SIGHUP ends
golem: this is the one place golem handles those two signals.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

try:
    import termios
except ImportError:  # Windows: no terminal modes to set
    termios = None  # type: ignore[assignment]


@contextlib.contextmanager
def waiting_mode(stream: TextIO | None = None) -> Iterator[None]:
    """Hold ``stream`` (default stdin), when it is a terminal, in waiting mode for the block;
    its mode comes back after it, or before SIGTERM or SIGHUP ends golem meanwhile."""
    stream = sys.stdin if stream is None else stream
    try:
        fd = stream.fileno()
        before = termios.tcgetattr(fd)
    except (AttributeError, ValueError, OSError, termios.error):  # not a terminal (or no termios)
        yield
        return
    waiting = termios.tcgetattr(fd)
    waiting[3] = (waiting[3] & ~(termios.ICANON | termios.ECHO)) | termios.ISIG | termios.NOFLSH
    waiting[6][termios.VMIN] = 1
    waiting[6][termios.VTIME] = 0
    _set(fd, waiting)
    try:
        with restored_on_termination(lambda: _set(fd, before)):
            yield
    finally:
        _set(fd, before)


def _set(fd: int, mode: list[Any]) -> None:
    with contextlib.suppress(OSError, termios.error):  # TCSANOW: keys already typed are kept
        termios.tcsetattr(fd, termios.TCSANOW, mode)


@contextlib.contextmanager
def restored_on_termination(restore: Callable[[], None]) -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP (when left at their default, which ends the
    process) call ``restore`` first, then end golem as they would have: the exit status
    says which signal it was."""

    def restore_and_end(signum: int, frame: object) -> None:
        restore()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    taken: list[signal.Signals] = []
    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread: left alone
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, restore_and_end)
                taken.append(signum)
    try:
        yield
    finally:
        for ours in taken:
            signal.signal(ours, signal.SIG_DFL)
