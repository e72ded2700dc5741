"""``/undo`` and ``/rewind``: back to before a turn, with the files the tools changed in the
turns set aside put back (store/sidecars/checkpoints.py). The turns themselves are never lost: they stay
in a fork, as ``/retry`` keeps a reply. A file someone changed since is left as it is, and said;
what commands and tool servers did cannot be undone, and that is said too."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.core.messages import Message
    from golem_cli.session import ChatSession
    from golem_cli.store.sidecars.checkpoints import Change, Reverted


class Repl(Protocol):
    """What these commands use of the REPL (slash.py's ``Repl`` has it all)."""

    session: ChatSession

    @property
    def console(self) -> Console: ...

    def id_markup(self, cid: str, *, hint: bool = False) -> str: ...


#: The tools whose changes are checkpointed; every other call's effects stay.
FILE_TOOLS = ("write_file", "edit_file")


async def undo(repl: Repl, arg: str) -> None:
    """Back to before the last turn."""
    turns = repl.session.turns()
    if not turns:
        repl.console.print("Nothing to undo yet.")
        return
    _back_to(repl, len(turns))


async def rewind(repl: Repl, arg: str) -> None:
    """``/rewind`` lists the turns; ``/rewind N`` goes back to before turn N."""
    from golem_cli.cli.render.terminal_text import visible

    session = repl.session
    turns = session.turns()
    if not turns:
        repl.console.print("Nothing to rewind yet.")
        return
    if arg.isdigit() and 1 <= int(arg) <= len(turns):
        _back_to(repl, int(arg))
        return
    changed = _changes_by_run(repl, session.history)
    for n, index in enumerate(turns, 1):
        end = turns[n] if n < len(turns) else len(session.history)
        files = sorted({_shown(c.path) for m in session.history[index:end] for c in changed.get(m.run_id, [])})
        prompt = session.history[index].content.strip().splitlines()
        line = f"  {n:>3}  {(prompt[0] if prompt else '(attachments)')[:60]}"
        repl.console.print(visible(line + (f"  (files: {', '.join(files)})" if files else "")), highlight=False,
                           markup=False, soft_wrap=True)  # fmt: skip
    repl.console.print(f"/rewind N goes back to before turn N (1-{len(turns)}), putting back the files the tools "
                       "changed since; /undo goes back one turn.", highlight=False, markup=False)  # fmt: skip


def _changes_by_run(repl: Repl, messages: list[Message]) -> dict[str, list[Change]]:
    runs = {m.run_id for m in messages if m.run_id}
    found: dict[str, list[Change]] = {}
    for change in repl.session.store.checkpoints.changes(_conversations(repl, messages), runs):
        found.setdefault(change.run, []).append(change)
    return found


def _conversations(repl: Repl, messages: list[Message]) -> list[str]:
    """Where the checkpoints of ``messages`` are: this conversation's, and those of the
    conversations they were written in (copied into a fork, they keep their stamps)."""
    return [repl.session.conversation_id, *{m.conversation_id for m in messages if m.conversation_id}]


def _back_to(repl: Repl, n: int) -> None:
    """Put back the files changed from turn ``n`` on, then rewind the conversation to before it."""
    session = repl.session
    index = session.turns()[n - 1]
    gone = session.history[index:]
    cids = _conversations(repl, gone)
    checkpoints = session.store.checkpoints
    reverted = checkpoints.revert(cids, checkpoints.changes(cids, {m.run_id for m in gone if m.run_id}))
    kept = session.rewind(index)
    repl.console.print(f"Back to before turn {n}; the turns set aside are kept in conversation "
                       f"{repl.id_markup(kept, hint=True)}.", highlight=False)  # fmt: skip
    for line in _file_lines(reverted) + _not_undone(gone):
        repl.console.print(line, highlight=False, markup=False, soft_wrap=True)


def _file_lines(reverted: Reverted) -> list[str]:
    from golem_cli.cli.render.terminal_text import visible

    def listed(paths: list[str]) -> str:
        return visible(", ".join(_shown(p) for p in paths))

    lines = []
    if reverted.restored:
        lines.append(f"Put back: {listed(reverted.restored)}.")
    if reverted.removed:
        lines.append(f"Removed again (a tool created them): {listed(reverted.removed)}.")
    if reverted.changed_since:
        lines.append(f"Left as they are, changed since the tool wrote them: {listed(reverted.changed_since)}.")
    if reverted.lost:
        lines.append(f"Not put back, their earlier content is no longer kept: {listed(reverted.lost)}.")
    lines += [f"Not put back: {visible(why)}" for why in reverted.failed]
    return lines


def _not_undone(gone: list[Message]) -> list[str]:
    """What the calls of other tools did stays: said plainly, naming them."""
    names = [c.name for m in gone for c in m.tool_calls if c.name not in FILE_TOOLS]
    if not names:
        return []
    from golem_cli.cli.render.terminal_text import visible

    counted = ", ".join(
        f"{name} ×{names.count(name)}" if names.count(name) > 1 else name for name in dict.fromkeys(names)
    )
    return [f"/undo cannot revert what commands or tool servers did ({visible(counted)}): their effects stay."]


def _shown(path: str) -> str:
    """A recorded path as the person knows it: relative to the working directory when inside it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
