"""Keys typed just after a one-key answer to the approval question.

A lone ``y`` or ``a`` answers once no other key follows within half a second (``tool_view``).
Someone who types ``y``, hesitates, then goes on with ``es⏎`` meant the word ``yes``. But by
then the question is gone, and ``es⏎`` would wait in the terminal for the next prompt, which
would send it to the model as a turn. So for a short while after such an answer golem reads
the keys itself: the rest of the answer's word and its Enter are dropped; anything else is kept
and handed to whatever reads next (the ``you>`` prompt shows it as typed, a question ignores
the rest of the previous answer). Between prompts the terminal is in waiting mode (no echo,
every key queued), so golem sees each key as it is typed and nothing shows or is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

#: How long after the answer (or after the last key that continued its word) keys are read.
WINDOW = 2.0
_ENTER = ("\r", "\n")


class KeysAfterAnswer:
    """The keys typed after a one-key answer, for ``WINDOW`` seconds; ``take`` ends it.
    ``reads=False`` (``golem ask``: no prompt follows) reads none: they stay in the terminal."""

    def __init__(self, fd: int = 0, *, reads: bool = True) -> None:
        self.fd = fd
        self.reads = reads
        self._rest = ""  # what would finish the answer's word ("es" after "y")
        self._typed = ""  # how much of it has been typed
        self._kept = ""  # typed text that is not the answer's: for the next prompt
        self._pending = ""  # the rest of the word, once the next reader has taken over
        self._timer: asyncio.TimerHandle | None = None
        self._reading = False
        self.deadline = 0.0

    def start(self, key: str) -> None:
        """Begin reading after ``key`` answered (``y``, ``a``, ``v``, or a choice's number)."""
        from golem_cli.cli.tools.keys import ONE_KEY

        self.stop()
        if not self.reads:
            return
        word = ONE_KEY.get(key.lower(), key)
        self._rest, self._typed, self._kept, self._pending = word[len(key) :], "", "", ""
        loop = asyncio.get_running_loop()
        try:
            loop.add_reader(self.fd, self._ready)
        except (OSError, ValueError, NotImplementedError):  # not a pollable terminal
            return
        self._reading = True
        self._extend(loop)

    def _extend(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.deadline = time.monotonic() + WINDOW
        self._timer = loop.call_later(WINDOW, self.stop)

    def _ready(self) -> None:
        char = self._read_char()
        if char is None:
            return
        if char in _ENTER:  # the end of the answer's word (or a stray Enter): all dropped
            self.stop()
        elif self._rest.startswith((self._typed + char).lower()):
            self._typed += char
            self._extend(asyncio.get_running_loop())
        else:  # something else: the person is typing on, so it is theirs to keep
            self._kept = self._typed + char if char.isprintable() else ""
            self.stop()

    def _read_char(self) -> str | None:
        try:
            data = os.read(self.fd, 1)
            if not data:
                self.stop()
                return None
            extra = _utf8_length(data[0]) - 1
            if extra > 0:
                data += os.read(self.fd, extra)
        except BlockingIOError:
            return None
        except OSError:
            self.stop()
            return None
        return data.decode("utf-8", "replace")

    def stop(self) -> None:
        """Stop reading (what is typed now stays queued for the next reader)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._reading:
            self._reading = False
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self.fd)

    def take(self) -> str:
        """Stop reading before another reader starts; returns the text kept for it. While the
        window lasts, that reader ignores the rest of the answer's word (``finishes``)."""
        still = self._reading
        self.stop()
        kept, self._kept = self._kept, ""
        self._pending = self._rest[len(self._typed) :] if still else ""
        self._rest = self._typed = ""
        return kept

    def finishes(self, line: str) -> bool:
        """Whether ``line``, entered now, is the rest of the last one-key answer's word (or a
        stray Enter after it), to be dropped rather than taken as a prompt or an answer."""
        pending = self._pending
        return bool(pending) and time.monotonic() < self.deadline and pending.startswith(line.strip().lower())

    def finished(self) -> None:
        self._pending = ""


def _utf8_length(lead: int) -> int:
    if lead < 0xC0:
        return 1
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
