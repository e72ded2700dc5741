"""Showing a reply while it streams: markdown without flicker or slowdown.

Re-rendering the whole reply as markdown on every delta costs time that grows with the reply
(about 150 ms per render at 20 KB), so a long answer falls behind the stream. Instead the
reply is cut into blocks at blank lines outside code fences: a finished block is rendered once
and printed above a small live region, and only the open tail is live, re-rendered at most
``fps`` times a second. Inside a long code block the live region shows only its last lines.
Plain mode (``--no-markdown``, a pipe, a dumb terminal) writes the deltas as they come.

The reply is text golem did not write: on a terminal it passes ``terminal_text`` (markdown
blocks and the tail are made visible before rendering, plain deltas through a
``VisibleStream``, which is indifferent to where the stream was cut); a pipe gets it exactly.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.live import Live
    from rich.markdown import Markdown
    from rich.spinner import Spinner

    from golem_cli.cli.render.terminal_text import VisibleStream


FENCES = ("```", "~~~")


class BlockSplitter:
    """A streamed reply cut into markdown blocks as it arrives, each line read once.

    A block is finished by a blank line outside a fenced code block, or by the line that closes
    a fence; what follows the last finished block is the open block. Lines end at ``\n`` only.
    Every delta costs what it holds: the scan resumes where the last one stopped (inside a fence
    or not), so a long code block, table or paragraph streams in linear time."""

    def __init__(self) -> None:
        self._partial: list[str] = []  # pieces of the last line, not yet ended by a newline
        self._lines: list[str] = []  # the open block's complete lines, each with its newline
        self._fence = ""  # the open code fence ("```" or "~~~"), or "" outside one

    def feed(self, delta: str) -> list[str]:
        """Take the next piece of the reply; return the blocks it finished, in order."""
        finished = []
        start = 0
        while (end := delta.find("\n", start)) >= 0:
            line = delta[start : end + 1]
            if self._partial:
                line = "".join([*self._partial, line])
                self._partial = []
            self._lines.append(line)
            if self._ends_block(line.strip()):
                finished.append("".join(self._lines))
                self._lines = []
            start = end + 1
        if start < len(delta):
            self._partial.append(delta[start:])
        return finished

    def _ends_block(self, stripped: str) -> bool:
        if self._fence:
            if stripped.startswith(self._fence) and stripped.strip(self._fence[0]) == "":
                self._fence = ""
                return True  # a closed code block is a finished block
            return False
        if stripped.startswith(FENCES):
            self._fence = stripped[:3]
            return False
        return stripped == ""

    @property
    def open_block(self) -> str:
        """Everything after the last finished block."""
        return "".join(self._lines + self._partial)

    def last_lines(self, count: int) -> tuple[str, list[str], bool]:
        """For the live region: the open block's first line, its last ``count`` lines (without
        their newlines) and whether it holds more than that, without joining the whole block."""
        partial = ["".join(self._partial)] if self._partial else []
        total = len(self._lines) + len(partial)
        kept = [line[:-1] for line in self._lines[max(0, total - count) :]] + partial
        first = self._lines[0] if self._lines else "".join(partial)
        return first, kept[-count:], total > count


def split_finished(text: str) -> tuple[str, str]:
    """``text`` as (finished blocks, open block): what a ``BlockSplitter`` fed it whole holds."""
    splitter = BlockSplitter()
    return "".join(splitter.feed(text)), splitter.open_block


#: Block elements rich renders when they close, after a blank line of their own: rendered alone,
#: such a block already starts with the line that separates it from the block before.
CONTAINERS = ("bullet_list_open", "ordered_list_open", "blockquote_open", "table_open")


def wants_gap(block: Markdown) -> bool:
    """Whether rich, rendering the whole reply at once, would leave a blank line after this
    block: it does after every block element but a horizontal rule."""
    return not block.parsed or block.parsed[-1].type != "hr"


def brings_gap(block: Markdown) -> bool:
    """Whether this block, rendered alone, starts with the blank line that separates it from
    the block before (a list, a quote, a table)."""
    return bool(block.parsed) and block.parsed[0].type in CONTAINERS


#: A block longer than this is printed as plain text (a flood, a huge paste): rich needs about a
#: second per 100 KB of one paragraph.
MARKDOWN_LIMIT = 256 * 1024

#: The live region waits this many times as long as its last redraw took before it redraws again.
REDRAW_SHARE = 5


class _OpenBlock:
    """The live region's renderable: the reply's last, unfinished block as markdown, parsed only
    when drawn."""

    def __init__(self, max_lines: int) -> None:
        self.text = ""
        self.max_lines = max_lines

    def show(self, splitter: BlockSplitter) -> None:
        """Show the open block of ``splitter``: its last lines (and an open fence's first line),
        read without joining the whole block."""
        first, kept, more = splitter.last_lines(self.max_lines)
        head = first.strip()
        shown = "\n".join(kept)
        self.text = f"{head}\n{shown}" if more and head.startswith(FENCES) else shown

    def visible(self) -> str:
        lines = self.text.splitlines()
        if len(lines) <= self.max_lines:
            return self._bounded(self.text)
        head = lines[0].strip()
        kept = self._bounded("\n".join(lines[-self.max_lines :]))
        if head.startswith(FENCES):
            return "\n".join([head, kept])  # keep the fence open so code stays code
        return kept

    def _bounded(self, text: str) -> str:
        """At most what the region can show (``max_lines`` lines of a wide terminal): a reply
        that is one endless paragraph must not be re-rendered whole at every refresh."""
        limit = self.max_lines * 400
        return text if len(text) <= limit else text[-limit:]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The bottom of the rendered tail: a live region taller than the screen would be
        cropped at the top by rich, hiding exactly the newest text."""
        from rich.segment import Segment

        from golem_cli.cli.render.terminal_text import markdown

        lines = console.render_lines(markdown(self.visible()), options, pad=False)
        for line in lines[-self.max_lines :]:
            yield from line
            yield Segment.line()


class ReplyRenderer:
    """Feed it deltas; call ``finish()`` once the reply ends (also after an interruption)."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        markdown: bool = True,
        stream: TextIO | None = None,
        fps: float = 12.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.markdown = markdown and console is not None
        self.stream = stream or sys.stdout
        self.interval = 1.0 / fps
        self.clock = clock
        self._pieces: list[str] = []  # the reply so far, joined when asked for
        self._blocks = BlockSplitter()
        self._live: Live | None = None
        self._tail: _OpenBlock | None = None
        self._last_refresh = 0.0
        self._wait = self.interval  # until the next redraw: longer when a redraw is slow
        self._spinning = False
        self._spinner: Spinner | None = None
        self.renders = 0
        self._gap = False  # the block printed last wants a blank line before the next one
        self._visible: VisibleStream | None = None  # plain mode on a terminal
        if not self.markdown:
            from golem_cli.cli.render.terminal_text import VisibleStream, is_terminal

            self._visible = VisibleStream() if is_terminal(self.stream) else None

    def waiting(self, label: str = "waiting for the model…") -> None:
        """Show a spinner until the first delta arrives (a local model can take a while to
        start); it disappears without a trace. Markdown mode only: a pipe gets no noise."""
        if not self.markdown or self._live is not None:
            return
        from rich.live import Live
        from rich.spinner import Spinner

        self._spinner = Spinner("dots", text=f" {label}", style="dim")
        self._live = Live(self._spinner, console=self.console, refresh_per_second=8, transient=True)
        self._live.start()
        self._spinning = True

    def thinking(self) -> None:
        """The model is reasoning before it answers: say so on the spinner."""
        if self._spinning and self._spinner is not None:
            self._spinner.update(text=" thinking…")

    def feed(self, delta: str) -> None:
        if not delta:
            return
        if self._spinning:
            self._stop_spinner()
        self._pieces.append(delta)
        if not self.markdown:
            self.stream.write(delta if self._visible is None else self._visible.feed(delta))
            self.stream.flush()
            return
        finished = self._blocks.feed(delta)
        if finished and self._tail is not None:
            self._tail.show(self._blocks)  # the live region redraws on print: not the old tail
        for block in finished:
            self._print_block(block)
        self._update_tail(bool(finished) or delta.strip() != "")

    @property
    def text(self) -> str:
        """The reply so far."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def finish(self) -> str:
        """Render what is left and return the whole reply text."""
        if not self.markdown:
            if self._visible is not None:
                self.stream.write(self._visible.flush())
            if self.text and not self.text.endswith("\n"):
                self.stream.write("\n")
            self.stream.flush()
            return self.text
        rest = self._blocks.open_block
        if self._spinning:
            self._stop_spinner()
        if self._live is not None:
            self._tail.text = ""  # type: ignore[union-attr]
            self._live.stop()
            self._live = None
        if rest.strip():
            self._print_block(rest)
        self._blocks = BlockSplitter()
        self._gap = False  # what follows (a tool's lines, the footer) is not the reply's next block
        return self.text

    # --- markdown mode ---------------------------------------------------------------------

    def _stop_spinner(self) -> None:
        assert self._live is not None
        self._live.stop()
        self._live = None
        self._spinning = False

    def _print_block(self, text: str) -> None:
        from golem_cli.cli.render.terminal_text import markdown, visible

        if not text.strip():
            return
        assert self.console is not None
        if len(text) > MARKDOWN_LIMIT:  # rendering megabytes as markdown takes minutes: as they came
            if self._gap:
                self.console.print()
            self.console.print(visible(text.strip("\n")), markup=False, highlight=False, emoji=False)
            self._gap = True
        else:
            block = markdown(text.strip("\n"))
            if self._gap and not brings_gap(block):
                self.console.print()  # blocks printed one by one are separated as the whole reply is
            self.console.print(block)
            self._gap = wants_gap(block)
        self.renders += 1

    def _update_tail(self, changed: bool) -> None:
        """Redraw the live region with the open block, at most ``fps`` times a second; it opens
        with the first text that is not blank."""
        if self._live is None:
            if not changed or not self._blocks.open_block.strip():
                return
            from rich.live import Live

            assert self.console is not None
            self._tail = _OpenBlock(max(4, self.console.size.height - 4))
            self._tail.show(self._blocks)
            self._live = Live(self._tail, console=self.console, auto_refresh=False, transient=True)
            self._live.start()
        assert self._tail is not None
        now = self.clock()
        if now - self._last_refresh >= self._wait:
            self._last_refresh = now
            self._tail.show(self._blocks)
            began = time.perf_counter()
            self._live.refresh()
            # Redrawing takes at most a fifth of the time: highlighting a code block's last
            # lines can take tens of milliseconds, and a long reply streams for minutes.
            self._wait = max(self.interval, REDRAW_SHARE * (time.perf_counter() - began))
            self.renders += 1

    def __enter__(self) -> ReplyRenderer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finish()
