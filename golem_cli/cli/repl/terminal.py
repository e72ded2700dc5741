"""The terminal's input modes while the REPL is not reading a prompt.

Between prompts (a reply streaming, a footer, a slash command's output) the terminal would
normally be in cooked mode, and that costs two things:

- Keys typed during a reply are echoed into the reply, and the line discipline consumes some
  of them (Ctrl-D is end-of-file, not a key), so type-ahead does not reach the next prompt
  as it does in a shell.
- Ctrl-C makes the line discipline flush the output queue: bytes rich already wrote (part of
  a cursor movement of the live region) never reach the screen, the region's erase misses
  lines, and the partial reply shows twice.

So the REPL holds the terminal in "waiting" mode between prompts: no echo, not canonical (every
key stays queued, unread, for prompt-toolkit, which takes raw mode for the prompt and restores
this mode after it), signals on (Ctrl-C still interrupts) and ``NOFLSH`` (it flushes nothing).

Before the first prompt, while prompt_toolkit is being imported under a prompt drawn by golem
(``instant_prompt``), the terminal is in "holding" mode instead: the raw mode prompt_toolkit
itself takes (no echo, not canonical, no signals, no flow control, no CR/NL translation), so
every key typed meanwhile, Ctrl-C and Ctrl-D included, waits as the very byte prompt_toolkit
would have read. Linux keeps queued input across these changes (only leaving canonical mode
could regroup a line, and none of them enters it), and echo happens as a key arrives, never
again later: nothing is lost or shown twice.

The original mode comes back when the REPL ends, also when SIGTERM or SIGHUP ends it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any


class Modes:
    """The modes of one terminal: ``hold`` (before the first prompt), ``wait`` (between
    prompts) and ``restore`` (the one it had)."""

    def __init__(self, fd: int, before: list[Any]) -> None:
        import termios

        self.fd = fd
        self.before = before
        waiting = termios.tcgetattr(fd)
        waiting[3] = (waiting[3] & ~(termios.ICANON | termios.ECHO)) | termios.ISIG | termios.NOFLSH
        waiting[6][termios.VMIN] = 1
        waiting[6][termios.VTIME] = 0
        holding = termios.tcgetattr(fd)  # prompt_toolkit's raw mode (input/vt100.py)
        holding[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
        holding[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
        holding[6][termios.VMIN] = 1
        holding[6][termios.VTIME] = 0
        self._waiting, self._holding = waiting, holding

    def _set(self, mode: list[Any]) -> None:
        import termios

        with contextlib.suppress(OSError):  # TCSANOW: keys already typed are kept
            termios.tcsetattr(self.fd, termios.TCSANOW, mode)

    def hold(self) -> None:
        self._set(self._holding)

    def wait(self) -> None:
        self._set(self._waiting)

    def restore(self) -> None:
        self._set(self.before)


@contextlib.contextmanager
def waiting_mode(stream: Any = None) -> Iterator[Modes | None]:
    """Hold ``stream`` (default stdin), when it is a terminal, in waiting mode; yields its
    ``Modes`` (None when it is not a terminal)."""
    stream = sys.stdin if stream is None else stream
    try:
        import termios

        fd = stream.fileno()
        before = termios.tcgetattr(fd)
    except (ImportError, AttributeError, ValueError, OSError):  # not a terminal, or Windows
        yield None
        return
    modes = Modes(fd, before)
    modes.wait()
    try:
        with _restored_on_termination(modes):
            yield modes
    finally:
        modes.restore()


@contextlib.contextmanager
def _restored_on_termination(modes: Modes) -> Iterator[None]:
    """SIGTERM and SIGHUP (left at their default, ending the process) restore the terminal's
    mode first, then end the process as they would have."""

    def restore_and_die(signum: int, frame: object) -> None:
        modes.restore()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    taken: list[tuple[int, Any]] = []
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, restore_and_die)
                taken.append((signum, signal.SIG_DFL))
        except (ValueError, OSError):  # not the main thread
            pass
    try:
        yield
    finally:
        for taken_signum, handler in taken:
            signal.signal(taken_signum, handler)
