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
    from rich.spinner import Spinner

    from golem_cli.cli.render.terminal_text import VisibleStream


def split_finished(text: str) -> tuple[str, str]:
    """Split ``text`` into (finished blocks, open tail) at the last blank line that is not
    inside a fenced code block. A block is finished once a blank line follows it."""
    in_fence = False
    fence = ""
    cut = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        end = pos + len(line)
        stripped = line.strip()
        if not line.endswith("\n"):
            break  # the last, incomplete line belongs to the tail
        if in_fence:
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                in_fence = False
                cut = end  # a closed code block is a finished block
        elif stripped.startswith(("```", "~~~")):
            in_fence = True
            fence = stripped[:3]
        elif stripped == "":
            cut = end
        pos = end
    return text[:cut], text[cut:]


#: A block longer than this is printed as plain text (a flood, a huge paste): rich needs about a
#: second per 100 KB of one paragraph.
MARKDOWN_LIMIT = 256 * 1024


class _Tail:
    """The live region's renderable: markdown of the open tail, parsed only when drawn."""

    def __init__(self, max_lines: int) -> None:
        self.text = ""
        self.max_lines = max_lines

    def visible(self) -> str:
        lines = self.text.splitlines()
        if len(lines) <= self.max_lines:
            return self._bounded(self.text)
        head = lines[0].strip()
        kept = self._bounded("\n".join(lines[-self.max_lines :]))
        if head.startswith(("```", "~~~")):
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
        self.text = ""
        self._printed = 0  # how much of ``text`` is already rendered for good
        self._live: Live | None = None
        self._tail: _Tail | None = None
        self._last_refresh = 0.0
        self._spinning = False
        self._spinner: Spinner | None = None
        self.renders = 0
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
        self.text += delta
        if not self.markdown:
            self.stream.write(delta if self._visible is None else self._visible.feed(delta))
            self.stream.flush()
            return
        tail = self.text[self._printed :]
        if "\n" in delta:  # a block can only finish at a line break
            finished, tail = split_finished(tail)
            if finished:
                if self._tail is not None:
                    self._tail.text = tail  # the live region redraws on print: not the old tail
                self._print_block(finished)
                self._printed += len(finished)
        self._update_tail(tail)

    def finish(self) -> str:
        """Render what is left and return the whole reply text."""
        if not self.markdown:
            if self._visible is not None:
                self.stream.write(self._visible.flush())
            if self.text and not self.text.endswith("\n"):
                self.stream.write("\n")
            self.stream.flush()
            return self.text
        rest = self.text[self._printed :]
        if self._spinning:
            self._stop_spinner()
        if self._live is not None:
            self._tail.text = ""  # type: ignore[union-attr]
            self._live.stop()
            self._live = None
        if rest.strip():
            self._print_block(rest)
        self._printed = len(self.text)
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
            self.console.print(visible(text.strip("\n")), markup=False, highlight=False, emoji=False)
        else:
            self.console.print(markdown(text.strip("\n")))
        self.renders += 1

    def _update_tail(self, tail: str) -> None:
        if self._live is None:
            if not tail.strip():
                return
            from rich.live import Live

            assert self.console is not None
            self._tail = _Tail(max(4, self.console.size.height - 4))
            self._live = Live(self._tail, console=self.console, auto_refresh=False, transient=True)
            self._live.start()
        assert self._tail is not None
        self._tail.text = tail
        now = self.clock()
        if now - self._last_refresh >= self.interval:
            self._last_refresh = now
            self._live.refresh()
            self.renders += 1

    def __enter__(self) -> ReplyRenderer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finish()
