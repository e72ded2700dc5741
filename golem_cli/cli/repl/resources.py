"""A tool server's resources in the chat: ``@SERVER:URI`` in a prompt, or ``/attach
@SERVER:URI``, reads the resource from the running server and attaches it to the prompt the
way a file is attached: text travels in the prompt framed with its name, an image, PDF,
audio or video as a media part, within the same size limit (``tools/mcp/resources.py``).
Tab completes ``@SERVER:`` with the URIs the running servers list and their templates'
fixed part.

A mention of a name that is no running server is left as text (an e-mail address, a
handle); a mention of one that is running but whose resource cannot be read stops the
prompt with one line saying why, so nothing is sent without what the person asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from golem_cli.tools.mcp.resources import MENTION, ResourceContent, mention

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


def running(box: Toolbox | None) -> dict[str, Any]:
    """The running tool servers' sources by name."""
    return {s.group: s for s in (box.servers() if box is not None else ()) if s.started}


async def relist(box: Toolbox | None) -> None:
    """The prompts and resources of the running servers that said they changed, read again
    (as a turn does before it starts): Tab and the commands between turns see the new lists."""
    for source in running(box).values():
        for again in (getattr(source, "relist_prompts", None), getattr(source, "relist_resources", None)):
            if again is not None:
                await again()


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
    servers = running(repl.session.toolbox)
    before = list(repl.attachments)
    for match in MENTION.finditer(text):
        if match.group(1) in servers and not await attach(repl, match.group(0), quiet=True):
            repl.attachments[:] = before  # none of this prompt's resources waits for the next one
            repl.console.print("Nothing was sent.", highlight=False, markup=False)
            return False
    return True


async def attach(repl: Repl, named: str, *, quiet: bool = False) -> bool:
    """``/attach @SERVER:URI``: the resource read and added to the next prompt's attachments;
    False (having said why) when it cannot be."""
    from golem_cli.cli.attach import describe
    from golem_cli.cli.render.terminal_text import visible
    from golem_cli.core.tools import ToolFailed
    from golem_cli.tools.mcp.resources import ResourceProblem, contents

    match = MENTION.fullmatch(named.strip())
    if match is None:
        repl.console.print("Name a tool server's resource as @SERVER:URI.", highlight=False, markup=False)
        return False
    server, uri = match.groups()
    if not await repl.tool_servers_ready():
        return False
    await relist(repl.session.toolbox)
    source = running(repl.session.toolbox).get(server)
    try:
        if source is None:
            raise ResourceProblem(f"no running tool server named {server!r}; /tools lists them")
        found = [attachment(server, item) for item in contents(await source.read_resource(uri))]
    except (ResourceProblem, ToolFailed) as e:
        repl.console.print(visible(f"{mention(server, uri)}: {getattr(e, 'reason', None) or e}"), markup=False)
        return False
    repl.attachments.extend(found)
    if not quiet:
        shown = ", ".join(describe(a) for a in found)
        repl.console.print(visible(f"Attached {shown} to your next prompt."), highlight=False, markup=False)
    return True


def attachment(server: str, item: ResourceContent) -> Attachment:
    """A resource's content item as an attachment: text as a named text file, an image, PDF,
    audio or video as a media part; ``ResourceProblem`` for other bytes."""
    from golem_cli.cli.attach import TextFile, kind_of, text_of
    from golem_cli.core.messages import Part
    from golem_cli.tools.mcp.resources import ResourceProblem

    name = mention(server, item.uri)
    if item.text is not None:
        return TextFile(name, item.text)
    kind = kind_of(item.media_type)
    if kind is not None:
        return Part(kind, data=item.data, media_type=item.media_type)
    text = text_of(item.data, item.media_type)
    if text is None:
        raise ResourceProblem(f"cannot attach {item.media_type or 'bytes of unknown type'}; "
                              "attach text, images, PDF documents, audio or video")  # fmt: skip
    return TextFile(name, text)
