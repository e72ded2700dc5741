"""Markdown whose code blocks are never wrapped: rich wraps a long line of a code block onto
the next screen line, so a command copied from the terminal breaks where rich cut it. Here a
line that does not fit is cropped instead, ending in a marker (``…``), and every line of the
block is the line the model wrote, up to where the screen ends (``/copy`` copies it whole).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.markdown import CodeBlock, Markdown
from rich.syntax import Syntax

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

CROPPED = "…"
PADDING = 1  # rich's, on each side of a code block


class CroppedCodeBlock(CodeBlock):
    """A code block whose long lines are cropped with a marker, never wrapped."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = max(options.max_width - 2 * PADDING, 2)
        lines = [crop(line, room) for line in str(self.text).rstrip().split("\n")]
        yield Syntax("\n".join(lines), self.lexer_name, theme=self.theme, word_wrap=False, padding=PADDING)


def crop(line: str, room: int) -> str:
    """``line`` when it fits in ``room`` cells, else its start and the marker."""
    if cell_len(line) <= room:
        return line
    return set_cell_size(line, room - 1) + CROPPED


class UnwrappedMarkdown(Markdown):
    """rich's Markdown with ``CroppedCodeBlock`` for fenced and indented code."""

    elements = {**Markdown.elements, "fence": CroppedCodeBlock, "code_block": CroppedCodeBlock}
