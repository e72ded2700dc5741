"""A progress bar for work the store does before it answers (bringing its index up to date).

The store reports ``(what, done, total)`` (store/refresh.py); this draws rich's progress bar on
standard error once a piece of work has taken more than a moment, and takes it away when the
work is done. Nothing is drawn when standard error is not a terminal: a pipe or a log gets no
bar and no escape sequences.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: A piece of work shorter than this shows no bar.
MOMENT = 0.5
#: The bar is redrawn at most this often.
REDRAW = 0.1


class TerminalProgress:
    """Called by the store as it goes; draws the bar when a piece of work runs long."""

    def __init__(self) -> None:
        self._what = ""
        self._started = 0.0
        self._drawn = 0.0
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, what: str, done: int, total: int) -> None:
        now = time.monotonic()
        if what != self._what:
            self._close()
            self._what, self._started = what, now
        if done >= total:
            self._close()
            self._what = ""
            return
        if self._bar is None and now - self._started >= MOMENT:
            self._open(what, total)
        if self._bar is not None and self._task is not None and now - self._drawn >= REDRAW:
            self._bar.update(self._task, completed=done, total=total)
            self._bar.refresh()
            self._drawn = now

    def _open(self, what: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        from golem_cli.cli.render.console import rich_console

        self._bar = Progress(
            TextColumn("golem: {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=rich_console(stderr=True),
            transient=True,
            auto_refresh=False,  # drawn from the calls above: no thread of its own
        )
        self._bar.start()
        self._task = self._bar.add_task(what, total=total)

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = self._task = None


def terminal_progress() -> TerminalProgress | None:
    """A progress reporter for the store when standard error is a terminal, else None."""
    try:
        return TerminalProgress() if sys.stderr.isatty() else None
    except (AttributeError, ValueError):
        return None
