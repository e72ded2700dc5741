"""A tool server's resource named ``@SERVER:URI``, read from the running server into an
attachment, the way a file is attached: text travels in the prompt framed with its name, an
image, PDF, audio or video as a media part, within the same size limit
(``tools/mcp/resources.py``). The chat (``cli/repl/resources.py``) and ``golem ask`` both
attach resources through here.

A mention in a prompt of a name that is no running server is left as text (an e-mail
address, a handle); one that names a running server must be read, or nothing is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from golem_cli.tools.mcp.resources import MENTION, ResourceContent, ResourceProblem, contents, mention

if TYPE_CHECKING:
    from golem_cli.cli.attach import Attachment
    from golem_cli.tools.toolbox import Toolbox

__all__ = ["ResourceProblem", "attachment", "is_mention", "mentioned", "read", "relist", "running"]


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


def is_mention(text: str) -> bool:
    """Whether ``text`` is one ``@SERVER:URI`` and nothing else."""
    return MENTION.fullmatch(text.strip()) is not None


def mentioned(box: Toolbox | None, text: str) -> list[str]:
    """The ``@SERVER:URI`` in ``text`` that name a running server, in order."""
    if "@" not in text:
        return []
    servers = running(box)
    return [m.group(0) for m in MENTION.finditer(text) if m.group(1) in servers]


async def read(box: Toolbox | None, named: str, *, hint: str) -> list[Attachment]:
    """The attachments of the resource ``named`` (``@SERVER:URI``), read from its running
    server; ``ResourceProblem`` says why it cannot be, starting with the name (``hint``: where
    to see the running servers, when it names none of them)."""
    from golem_cli.core.tools import ToolFailed

    match = MENTION.fullmatch(named.strip())
    if match is None:
        raise ResourceProblem(f"{named}: name a tool server's resource as @SERVER:URI")
    server, uri = match.groups()
    await relist(box)
    source = running(box).get(server)
    try:
        if source is None:
            raise ResourceProblem(_not_running(box, server, hint))
        return [attachment(server, item) for item in contents(await source.read_resource(uri))]
    except (ResourceProblem, ToolFailed) as e:
        raise ResourceProblem(f"{mention(server, uri)}: {getattr(e, 'reason', None) or e}") from e


def _not_running(box: Toolbox | None, server: str, hint: str) -> str:
    """Why ``server`` has no resource to read: it was asked for and did not start, or it is no
    running server at all."""
    if any(s.group == server for s in (box.servers() if box is not None else ())):
        return f"tool server {server!r} is not running (it did not start, or it stopped)"
    return f"no running tool server named {server!r}; {hint}"


def attachment(server: str, item: ResourceContent) -> Attachment:
    """A resource's content item as an attachment: text as a named text file, an image, PDF,
    audio or video as a media part; ``ResourceProblem`` for other bytes."""
    from golem_cli.cli.attach import TextFile, kind_of, text_of
    from golem_cli.core.messages import Part

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
