"""The terminal's input mode while the REPL is not reading a prompt.

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
The original mode comes back when the REPL ends.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def waiting_mode(stream: Any = None) -> Iterator[None]:
    """Hold ``stream`` (default stdin), when it is a terminal, in waiting mode."""
    stream = sys.stdin if stream is None else stream
    try:
        import termios

        fd = stream.fileno()
        before = termios.tcgetattr(fd)
    except (ImportError, AttributeError, ValueError, OSError):  # not a terminal, or Windows
        yield
        return
    mode = termios.tcgetattr(fd)
    mode[3] = (mode[3] & ~(termios.ICANON | termios.ECHO)) | termios.ISIG | termios.NOFLSH
    mode[6][termios.VMIN] = 1
    mode[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, mode)  # TCSANOW: keys already typed are kept
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            termios.tcsetattr(fd, termios.TCSANOW, before)
