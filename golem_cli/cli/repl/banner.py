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
    out = [
        f"{paint(f'golem {__version__}', 'bold')} · model {paint(visible(model), 'cyan')} · "
        f"conversation {_conversation_id(paint, conversation_id, unique)}",
        paint(HELP, "dim"),
    ]
    if note:  # prose: wrapped at words, not where the terminal happens to cut
        width = shutil.get_terminal_size().columns
        for paragraph in visible(note).splitlines():
            wrapped = textwrap.wrap(paragraph, width, break_on_hyphens=False) or [""]
            out += [paint(part, "yellow") for part in wrapped]
    if toolbox is not None and toolbox.enabled:
        names = ", ".join(e.name for e in toolbox.enabled)
        where = getattr(toolbox.registry.sources[0], "root", None)
        place = f" in {where.path}" if where is not None else ""
        out.append(paint(visible(f"tools: {names}{place} · /tools to change"), "dim"))
    out += [paint(for_terminal(line, sys.stdout)) for line in lines]
    if toolbox is not None and toolbox.to_start():
        names = ", ".join(s.group for s in toolbox.to_start())
        out.append(paint(visible(f"Starting tool servers: {names}…"), "dim"))
    sys.stdout.write("".join(line + "\n" for line in out))
    sys.stdout.flush()


def _conversation_id(paint: Painter, cid: str, unique: int) -> str:
    """The ID with its unique prefix highlighted, as ``short_ids.markup`` marks it for rich."""
    if unique >= len(cid):
        return paint(cid, "bold", "cyan")
    return paint(cid[:unique], "bold", "cyan") + paint(cid[unique:], "dim", "cyan")
