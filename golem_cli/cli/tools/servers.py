"""Tool servers as the chat shows them: starting (one line), what failed (one line each),
what happened between turns (a server stopped), and stopping them when the chat ends.

What a server says is printed through ``say``, which shows it on a terminal without its
escape sequences (``terminal_text``).
"""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from golem_cli.tools.registry import LazySource
    from golem_cli.tools.toolbox import Toolbox


async def start(
    box: Toolbox, say: Callable[[str, bool], None], sources: list[LazySource] | None = None, *, quiet: bool = False
) -> None:
    """Start the servers the chat's tool names need (or ``sources``), saying what failed and,
    unless ``quiet``, what started: each server's line as soon as it is ready or has failed,
    not once the slowest is."""
    todo = box.to_start() if sources is None else sources
    if not todo and not box.waiting and not box.approvals.waiting:
        return
    began = time.monotonic()
    said: set[str] = set()

    def each(source: LazySource, problem: str) -> None:
        if problem:
            said.add(problem)
            say(problem, True)
        elif not quiet:
            say(f"Tool server ready in {time.monotonic() - began:.1f} s: {source.group} ({_tools(box, source.group)})",
                False)  # fmt: skip

    for line in await box.start(todo, each=each):
        if line not in said:  # a name that selects nothing on a server that started
            say(line, True)
    show_notices(box, say)


def _tools(box: Toolbox, group: str) -> str:
    n = sum(1 for e in box.registry.entries() if e.group == group)
    return f"{n} tool{'s' if n != 1 else ''}"


def hear(box: Toolbox, say: Callable[[str, bool], None]) -> None:
    """What the servers log (warning and above; everything with ``--debug``) said through ``say``."""
    import sys

    from golem_cli.cli.errors import debug_requested

    def log(server: str, level: str, text: str) -> None:
        say(f"tool server {server!r} ({level}): {text}", level not in ("debug", "info", "notice"))

    box.hooks.log = log
    box.hooks.debug = debug_requested(sys.argv[1:])


def show_notices(box: Toolbox | None, say: Callable[[str, bool], None]) -> None:
    """Lines the tool servers left since the last time (a server stopped), then forget them."""
    if box is None:
        return
    while box.notices:
        say(box.notices.pop(0), True)


@asynccontextmanager
async def serving(box: Toolbox | None, say: Callable[[str, bool], None]) -> AsyncIterator[None]:
    """A command's tool servers for the time of one request that is no chat turn (a
    compaction, a count of what a request carries): started quietly, their tools then part of
    what is sent as a turn's are; what they said shown, and the servers closed, at the end."""
    if box is None:
        yield
        return
    hear(box, say)
    try:
        await start(box, say, quiet=True)
        yield
    finally:
        show_notices(box, say)
        await box.close()
