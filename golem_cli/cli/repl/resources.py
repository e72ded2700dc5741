"""A tool server's resources in the chat: ``@SERVER:URI`` in a prompt, or ``/attach
@SERVER:URI``, reads the resource from the running server and attaches it to the prompt
(``cli/tools/resources.py``). Tab completes ``@SERVER:`` with the URIs the running servers
list and their templates' fixed part.

A mention of a name that is no running server is left as text (an e-mail address, a
handle); a mention of one that is running but whose resource cannot be read stops the
prompt with one line saying why, so nothing is sent without what the person asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from golem_cli.cli.tools.resources import ResourceProblem, is_mention, mentioned, read, running
from golem_cli.tools.mcp.resources import MENTION

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.cli.attach import Attachment
    from golem_cli.core.messages import Part
    from golem_cli.session import ChatSession, TurnOutcome
    from golem_cli.tools.toolbox import Toolbox


class Repl(Protocol):
    """What a server's prompt or resource needs of the chat (``cli.repl.loop.Repl``; the slash
    commands' wider view of it, ``slash.Repl``, imports this module)."""

    session: ChatSession
    attachments: list[Attachment]

    @property
    def console(self) -> Console: ...

    async def ask(self, text: str, parts: Sequence[Part] | None = None) -> TurnOutcome | None: ...

    async def tool_servers_ready(self) -> bool: ...


def listed(box: Toolbox | None) -> Iterator[tuple[str, str, str]]:
    """``(server, uri or template, description)`` of every resource and template the running
    servers list (a template's URI keeps its ``{variables}``)."""
    for server, source in running(box).items():
        for item in getattr(source, "resource_list", None) or []:
            yield server, str(item.get("uri", "")), str(item.get("name") or item.get("description") or "")
        for item in getattr(source, "template_list", None) or []:
            yield server, str(item.get("uriTemplate", "")), str(item.get("name") or "template")


async def attach_mentions(repl: Repl, text: str) -> bool:
    """The resources ``text`` mentions (``@SERVER:URI`` of a running server) added to the
    next prompt's attachments; False (having said why) when one cannot be read."""
    if "@" not in text or MENTION.search(text) is None:
        return True
    if not await repl.tool_servers_ready():
        return False
    before = list(repl.attachments)
    for named in mentioned(repl.session.toolbox, text):
        if not await attach(repl, named, quiet=True):
            repl.attachments[:] = before  # none of this prompt's resources waits for the next one
            repl.console.print("Nothing was sent.", highlight=False, markup=False)
            return False
    return True


async def attach(repl: Repl, named: str, *, quiet: bool = False) -> bool:
    """``/attach @SERVER:URI``: the resource read and added to the next prompt's attachments;
    False (having said why) when it cannot be."""
    from golem_cli.cli.attach import describe
    from golem_cli.cli.render.terminal_text import visible

    if not is_mention(named):
        repl.console.print("Name a tool server's resource as @SERVER:URI.", highlight=False, markup=False)
        return False
    if not await repl.tool_servers_ready():
        return False
    try:
        found = await read(repl.session.toolbox, named, hint="/tools lists them")
    except ResourceProblem as e:
        repl.console.print(visible(str(e)), markup=False)
        return False
    repl.attachments.extend(found)
    if not quiet:
        shown = ", ".join(describe(a) for a in found)
        repl.console.print(visible(f"Attached {shown} to your next prompt."), highlight=False, markup=False)
    return True
