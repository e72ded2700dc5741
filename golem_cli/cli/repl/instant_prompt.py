"""The chat's prompt, drawn before prompt_toolkit is imported (an "instant prompt").

Importing prompt_toolkit takes about as long as the whole start-up may (150 ms of the 200 ms
issue 13 allows, on top of the interpreter's own start), and nothing golem can do makes it
cheaper. So on a terminal the REPL draws its prompt itself, the way powerlevel10k's instant
prompt does for zsh: the banner, then ``you>``, with the terminal in holding mode
(``terminal.Modes.hold``: no echo, no signals, every key queued as the byte prompt_toolkit
reads). prompt_toolkit is then imported; as its first prompt starts (``hand_over``, a
``pre_run``, before it takes raw mode) the terminal goes to waiting mode, the cursor back to
the start of the prompt line, and prompt_toolkit draws its prompt over golem's (its first
render erases from there down) and reads the keys typed meanwhile itself: arrows, a paste,
Ctrl-C, Ctrl-D and Enter do what they do when typed later. (In waiting mode Ctrl-C is a signal
again, but by then prompt_toolkit turns SIGINT into its Ctrl-C key.)

Only where prompt_toolkit would draw a full prompt on the same terminal: stdin and stdout
terminals, ``TERM`` not ``dumb`` or ``unknown`` (prompt_toolkit's plain prompt).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from golem_cli.cli.repl.terminal import Modes

#: What prompt_toolkit draws for ``HTML("<b>you&gt;</b> ")`` (repl.PROMPT).
PROMPT = "\x1b[1myou>\x1b[0m "


class InstantPrompt:
    """golem's prompt on screen until prompt_toolkit's replaces it."""

    def __init__(self, modes: Modes, out: TextIO) -> None:
        self.modes = modes
        self.out = out
        self.shown = False

    def hold(self) -> None:
        """Queue every key from now on, unread and unechoed (before the banner is written)."""
        self.modes.hold()

    def draw(self) -> None:
        self.out.write(PROMPT)
        self.out.flush()
        self.shown = True

    def hand_over(self) -> None:
        """prompt_toolkit's prompt starts: keys go to it, and it draws over this one."""
        if not self.shown:
            return
        self.shown = False
        self.modes.wait()
        self.out.write("\r")
        self.out.flush()

    def withdraw(self) -> None:
        """The REPL ends before its prompt started (an error): the prompt is erased, so what
        is printed next starts the line."""
        if self.shown:
            self.shown = False
            self.out.write("\r\x1b[K")
            self.out.flush()


def instant_prompt(modes: Modes | None, out: TextIO | None = None) -> InstantPrompt | None:
    """An instant prompt for the terminal of ``modes``, or None where prompt_toolkit would
    not draw its prompt there."""
    out = sys.stdout if out is None else out
    if modes is None or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return None
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return InstantPrompt(modes, out)
