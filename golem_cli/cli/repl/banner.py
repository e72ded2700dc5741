"""The chat's first lines, written without rich.

They are on screen before the prompt, and importing rich costs more than the rest of what the
prompt needs from golem; so they are written with a few SGR codes, in the styles rich would
use (``NO_COLOR`` drops the colours and keeps bold and dim; a pipe gets plain text), and rich
loads after the prompt is shown. Text from outside golem (a model name from the config) is
shown without letting the terminal obey it (``terminal_text.visible``).
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

from golem_cli.cli.render.console import styled
from golem_cli.cli.render.terminal_text import visible

_CODES = {"bold": "1", "dim": "2", "yellow": "33", "cyan": "36"}
_COLOURS = {"yellow", "cyan"}


class Painter:
    """Wraps text in SGR codes when the output is a terminal."""

    def __init__(self, *, terminal: bool | None = None, colour: bool | None = None) -> None:
        self.terminal = styled() if terminal is None else terminal
        self.colour = not os.environ.get("NO_COLOR") if colour is None else colour

    def __call__(self, text: str, *styles: str) -> str:
        codes = [_CODES[s] for s in styles if self.colour or s not in _COLOURS]
        if not self.terminal or not codes or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"


def conversation_id(paint: Painter, cid: str, unique: int) -> str:
    """The ID with its unique prefix highlighted, as ``short_ids.markup`` marks it for rich."""
    if unique >= len(cid):
        return paint(cid, "bold", "cyan")
    return paint(cid[:unique], "bold", "cyan") + paint(cid[unique:], "dim", "cyan")


def line(text: str, *styles: str) -> None:
    """One line of golem's own text, in ``styles``."""
    sys.stdout.write(Painter()(text, *styles) + "\n")
    sys.stdout.flush()


def banner(version: str, model: str, cid: str, unique: int, help_line: str, note: str = "") -> None:
    paint = Painter()
    lines = [
        f"{paint(f'golem {version}', 'bold')} · model {paint(visible(model), 'cyan')} · "
        f"conversation {conversation_id(paint, cid, unique)}",
        paint(help_line, "dim"),
    ]
    if note:  # prose: wrapped at words, not where the terminal happens to cut
        width = shutil.get_terminal_size().columns
        for paragraph in visible(note).splitlines():
            wrapped = textwrap.wrap(paragraph, width, break_on_hyphens=False) or [""]
            lines += [paint(part, "yellow") for part in wrapped]
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()
