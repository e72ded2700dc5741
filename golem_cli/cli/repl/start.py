"""A chat's start and end: the terminal in waiting mode, the banner and the lines under it,
the REPL until the person leaves, and the session closed however the chat ends."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from golem_cli.cli.render.console import styled
from golem_cli.cli.repl import banner
from golem_cli.cli.repl.loop import Repl
from golem_cli.cli.repl.opening import PendingSession
from golem_cli.cli.repl.terminal import waiting_mode
from golem_cli.cli.signals import die_by

if TYPE_CHECKING:
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.session import ChatSession


def run_repl(
    chat: ChatSession | PendingSession,
    *,
    markdown: bool,
    note: str = "",
    lines: Sequence[str] = (),
    tools: ToolChoice | None = None,
) -> int:
    """Run the chat until the person leaves; its exit code. A pending session opens once the
    prompt is drawn (ADR 0015), or before the banner when the input is not a terminal (no
    prompt comes first). The conversation's lock is always released."""
    plain_input = not sys.stdin.isatty()
    lines = list(lines)
    if isinstance(chat, PendingSession):
        lines = chat.lines + lines
        if plain_input:
            chat, lines = _open_now(chat, lines)
    repl = Repl(chat, markdown=markdown and styled(), plain_input=plain_input, tools=tools)
    with contextlib.nullcontext() if plain_input else waiting_mode():
        try:
            _banner(chat, note, lines)
            code = asyncio.run(repl.main())
        except KeyboardInterrupt:
            repl.goodbye()
            return 130
        finally:
            repl.close()
    if repl.ended_by is not None:  # SIGTERM or SIGHUP: kept what arrived; now ended by it
        die_by(repl.ended_by)
    return code


def _open_now(pending: PendingSession, lines: list[str]) -> tuple[ChatSession, list[str]]:
    try:
        if pending.check is not None:
            pending.check()
        session, later = pending.open()
    except BaseException:
        if pending.release is not None:
            pending.release()
        raise
    return session, lines + later


def _banner(chat: ChatSession | PendingSession, note: str, lines: Sequence[str]) -> None:
    if isinstance(chat, PendingSession):
        model, cid, unique = chat.model, chat.conversation_id, chat.unique
    else:
        model, cid = chat.model.name, chat.conversation_id
        unique = chat.store.unique_prefixes([cid])[cid]
    banner.show(model=model, conversation_id=cid, unique=unique, note=note, toolbox=chat.toolbox, lines=lines)
