"""The chat's compaction commands (ADR 0032): ``/compact [FOCUS]``, ``/compact undo``,
``/summary`` and ``/summary edit``."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.session import ChatSession


class Repl(Protocol):
    """What these commands use of the REPL (``slash.Repl`` has more)."""

    session: ChatSession
    plain_input: bool

    @property
    def console(self) -> Console: ...


def _error(repl: Repl, exc: BaseException) -> None:
    from rich.markup import escape

    from golem_cli.cli.errors import describe
    from golem_cli.cli.render.terminal_text import visible

    repl.console.print(f"[red]error:[/red] {escape(visible(describe(exc)))}", highlight=False)


async def compact(repl: Repl, arg: str) -> None:
    from golem_cli.cli.commands.compact import compacted_line, undone_line
    from golem_cli.core.errors import GolemError

    compactor = repl.session.compactor
    if arg == "undo":
        repl.console.print(undone_line(compactor.undo()), highlight=False, markup=False)
        return
    if not await _worth_it(repl, arg):
        return
    status = repl.console.status("Writing the summary…", spinner="dots")
    with status if repl.console.is_terminal else contextlib.nullcontext():
        try:
            done = await compactor.compact(focus=arg)
        except GolemError as e:
            _error(repl, e)
            return
    show(repl, done.summary.text)
    repl.console.print(compacted_line(done), style="dim", highlight=False, markup=False)


async def _worth_it(repl: Repl, focus: str) -> bool:
    """A compaction that would cost more than a few cents says so first, and on a terminal asks."""
    from golem_cli.cli.commands.compact import cost_line
    from golem_cli.core.errors import GolemError

    try:
        line = cost_line(*repl.session.compactor.planned_cost(focus=focus))
    except GolemError:
        return True  # nothing to compact: ``compact`` says so
    if not line:
        return True
    repl.console.print(line, style="yellow", highlight=False, markup=False)
    if repl.plain_input:
        return True
    from prompt_toolkit import PromptSession

    answer = await PromptSession[str]().prompt_async("Compact? [Y/n] › ", handle_sigint=False)
    if answer.strip().lower() in ("n", "no"):
        repl.console.print("Not compacted.")
        return False
    return True


async def summary(repl: Repl, arg: str) -> None:
    from golem_cli.core.errors import GolemError

    compactor = repl.session.compactor
    found = compactor.in_force()
    for line in compactor.take_notices():
        repl.console.print(f"golem: {line}", style="yellow", highlight=False, markup=False)
    if found is None:
        repl.console.print("No summary: every message is sent as the window allows. /compact [FOCUS] makes one.")
        return
    if arg == "edit":
        from golem_cli.cli.editor import edit_text

        try:
            text = edit_text(found.summary.text).strip()
        except GolemError as e:
            _error(repl, e)
            return
        if not text or text == found.summary.text.strip():
            repl.console.print("The summary is unchanged.")
            return
        compactor.edit(text)
        repl.console.print(f"The summary of messages 1-{found.summary.number} is now the text you wrote.")
        return
    how = f"{found.summary.by}, {found.summary.model}" if found.summary.model else found.summary.by
    repl.console.print(f"Summary of messages 1-{found.summary.number} ({how}), sent instead of them:",
                       style="bold", highlight=False, markup=False)  # fmt: skip
    show(repl, found.summary.text)
    repl.console.print("/summary edit changes it in your editor; /compact undo removes it.", style="dim")


def show(repl: Repl, text: str) -> None:
    from golem_cli.cli.render.terminal_text import visible

    repl.console.print(visible(text), highlight=False, markup=False, soft_wrap=True)
