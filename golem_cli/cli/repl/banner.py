"""The chat's first lines, written without rich.

They come before the prompt, and rich costs a chat's start more than anything else golem
adds to prompt_toolkit's own (ADR 0020), so it loads at the chat's first output after the
prompt. The banner is a few lines in a few styles: SGR codes in the styles rich would use
(``NO_COLOR`` drops the colours and keeps bold and dim; a pipe gets plain text). Text from
outside golem (a model name from the config) is shown without letting the terminal obey it
(``terminal_text.visible``).
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from golem_cli import __version__
from golem_cli.cli.render.console import styled
from golem_cli.cli.render.terminal_text import for_terminal, visible

if TYPE_CHECKING:
    from golem_cli.tools.toolbox import Toolbox

NEWLINE_KEY = "Alt+Enter"
HELP = f"/help for commands · {NEWLINE_KEY} for a newline · Ctrl-C stops a reply · Ctrl-D exits"

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


def show(
    *, model: str, conversation_id: str, unique: int, note: str, toolbox: Toolbox | None, lines: Sequence[str]
) -> None:
    """The banner (golem, the model, the conversation, the keys, a note on the model), the
    enabled tools, ``lines`` (a repair report, a lock taken over: text from the store, shown
    visibly) and which tool servers are starting (``Repl.begin_tool_servers`` starts them)."""
    paint = Painter()
    width = shutil.get_terminal_size().columns  # every line wrapped at words, not where the terminal cuts
    shown_model = visible(model)
    out = by_width([
        (f"golem {__version__}", paint(f"golem {__version__}", "bold")),
        (f"model {shown_model}", f"model {paint(shown_model, 'cyan')}"),
        (f"conversation {conversation_id}", f"conversation {_conversation_id(paint, conversation_id, unique)}"),
    ], width)  # fmt: skip
    out += by_width([(piece, paint(piece, "dim")) for piece in HELP.split(" · ")], width)
    if note:
        out += [paint(part, "yellow") for part in _wrapped(visible(note), width)]
    if toolbox is not None and toolbox.enabled:
        names = ", ".join(e.name for e in toolbox.enabled)
        where = getattr(toolbox.registry.sources[0], "root", None)
        place = f" in {where.path}" if where is not None else ""
        out += [paint(part, "dim") for part in _wrapped(visible(f"tools: {names}{place} · /tools to change"), width)]
    for line in lines:  # a report's line goes on under its own indent, two columns in
        indent = " " * (len(line) - len(line.lstrip(" ")))
        out += [paint(part) for part in _wrapped(for_terminal(line, sys.stdout), width, indent + "  ")]
    if toolbox is not None and toolbox.to_start():
        names = ", ".join(s.group for s in toolbox.to_start())
        out.append(paint(visible(f"Starting tool servers: {names}…"), "dim"))
    sys.stdout.write("".join(line + "\n" for line in out))
    sys.stdout.flush()


def by_width(pieces: Sequence[tuple[str, str]], width: int) -> list[str]:
    """Pieces (plain, painted) joined by `` · `` on as few lines as ``width`` allows, a line
    broken only between pieces."""
    lines: list[str] = []
    plain_len = 0
    for plain, painted in pieces:
        if lines and plain_len + 3 + len(plain) <= width:
            lines[-1] += " · " + painted
            plain_len += 3 + len(plain)
        else:
            lines.append(painted)
            plain_len = len(plain)
    return lines


def _wrapped(text: str, width: int, indent: str = "") -> list[str]:
    """Prose wrapped at words (a long path or name is left whole rather than cut), its
    continuation lines under ``indent``."""
    out: list[str] = []
    for paragraph in text.splitlines():
        out += textwrap.wrap(paragraph, width, subsequent_indent=indent, break_on_hyphens=False,
                             break_long_words=False) or [""]  # fmt: skip
    return out


def _conversation_id(paint: Painter, cid: str, unique: int) -> str:
    """The ID with its unique prefix highlighted, as ``short_ids.markup`` marks it for rich."""
    if unique >= len(cid):
        return paint(cid, "bold", "cyan")
    return paint(cid[:unique], "bold", "cyan") + paint(cid[unique:], "dim", "cyan")
