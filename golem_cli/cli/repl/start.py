"""A chat's start: what is on screen before the REPL's own machinery loads.

``run_repl`` writes the banner, the lines under it and, on a terminal, the instant prompt
(``instant_prompt``, ADR 0017) with the keys typed meanwhile held, and only then imports the
REPL (``repl``: asyncio, then prompt_toolkit) and runs it. So this module imports nothing a
prompt does not need.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

from golem_cli.cli.repl.opening import Opening

if TYPE_CHECKING:
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.session import ChatSession
    from golem_cli.tools.toolbox import Toolbox

NEWLINE_KEY = "Alt+Enter"


def run_repl(
    session: ChatSession | Opening,
    *,
    markdown: bool,
    note: str = "",
    report_lines: list[str] | None = None,
    tools: ToolChoice | None = None,
) -> int:
    """Run the REPL until the user leaves; always releases the conversation's lock. Given an
    ``Opening``, the prompt is shown first and the session opened right after it is drawn."""
    from golem_cli.cli.render.console import styled

    plain_input = not sys.stdin.isatty()
    before = list(report_lines or ())
    if isinstance(session, Opening):
        opening = session
        before = opening.before + before
        if plain_input:  # no prompt to show first: open, then the banner and the report
            try:
                session, later = opening.open()
            except BaseException:
                if opening.abandon is not None:
                    opening.abandon()
                raise
            before += later
    markdown = markdown and styled()
    running = False
    try:
        from golem_cli.cli.repl.terminal import waiting_mode

        with waiting_mode() if not plain_input else contextlib.nullcontext() as modes:
            # On a terminal, the prompt is drawn before the REPL (and prompt_toolkit) loads,
            # every key typed meanwhile held for it from before the banner on.
            from golem_cli.cli.repl.instant_prompt import instant_prompt

            instant = instant_prompt(modes)
            if instant is not None:
                instant.hold()
            try:
                banner(session, note)
                if before:
                    from golem_cli.cli.render.terminal_text import for_terminal
                    from golem_cli.cli.repl import banner as lines

                    for line in before:  # the prompt does not wait for rich
                        lines.line(for_terminal(line, sys.stdout))
                announce_tool_servers(session.toolbox)
                if instant is not None:
                    instant.draw()
                from golem_cli.cli.repl.loop import run_chat

                running = True
                return run_chat(session, markdown=markdown, plain_input=plain_input, tools=tools, instant=instant)
            finally:
                if instant is not None:
                    instant.withdraw()
    finally:
        if not running:  # the chat never ran: what its opening took is given back
            give_back(session)


def give_back(session: ChatSession | Opening) -> None:
    if isinstance(session, Opening):
        if session.abandon is not None:
            session.abandon()
    else:
        session.close()


def banner(session: ChatSession | Opening, note: str = "") -> None:
    """The chat's first lines: golem, the model, the conversation, the keys; the tools."""
    from golem_cli import __version__
    from golem_cli.cli.repl import banner

    if isinstance(session, Opening):
        model, cid, unique = session.model, session.conversation_id, session.unique
    else:
        model, cid = session.model.name, session.conversation_id
        unique = session.store.unique_prefixes([cid])[cid]
    box = session.toolbox
    help_line = f"/help for commands · {NEWLINE_KEY} for a newline · Ctrl-C stops a reply · Ctrl-D exits"
    banner.banner(__version__, model, cid, unique, help_line, note)
    if box is not None and box.enabled:
        from golem_cli.cli.render.terminal_text import visible

        names = ", ".join(e.name for e in box.enabled)
        where = getattr(box.registry.sources[0], "root", None)
        place = f" in {where.path}" if where is not None else ""
        banner.line(visible(f"tools: {names}{place} · /tools to change"), "dim")


def announce_tool_servers(box: Toolbox | None) -> None:
    """The line under the banner naming the tool servers that start with the chat (in the
    background, once the REPL runs: ``Repl.begin_tool_servers``)."""
    if box is not None and box.to_start():
        from golem_cli.cli.repl import banner

        names = ", ".join(s.group for s in box.to_start())
        banner.line(f"Starting tool servers: {names}…", "dim")  # before the prompt: no rich yet
