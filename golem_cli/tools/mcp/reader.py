"""``read_resource``: the tool the model calls to read a running tool server's resource (one a
``resource_link`` named, ``@SERVER:URI``). It is off unless a name enables it (``-T
read_resource``, ``/tools enable read_resource``): ``all`` selects only the file, command and
web tools. It reads only from servers already running, so a call never starts one, and it
asks no question: reading is what the person enabled it for, as ``read_file`` reads files.

This module does not import the MCP SDK: the servers' connections do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from golem_cli.core.messages import Part
from golem_cli.core.tools import SchemaTool, ToolContext, ToolFailed, ToolResult
from golem_cli.tools.mcp.resources import MENTION, ResourceContent, ResourceProblem, as_text, contents
from golem_cli.tools.mcp.results import IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_IMAGES
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT
from golem_cli.tools.registry import ToolEntry

if TYPE_CHECKING:
    from golem_cli.tools.mcp.source import McpSource

NAME = "read_resource"
GROUP = "resources"
PARAMETERS = {
    "type": "object",
    "properties": {
        "resource": {"type": "string", "description": "the resource as @SERVER:URI, e.g. @docs:file:///guide.md"}
    },
    "required": ["resource"],
    "additionalProperties": False,
}


class ResourceReader:
    """The ``resources`` tool source: ``read_resource`` over the chat's tool servers."""

    name = GROUP

    def __init__(self, servers: Callable[[], Sequence[McpSource]], output_limit: int = DEFAULT_OUTPUT_LIMIT) -> None:
        self.servers = servers
        self.output_limit = output_limit
        tool = SchemaTool(
            NAME,
            "Read a resource of a running tool server, named @SERVER:URI (the way a resource link in a tool "
            "result names it): its text, or its image.",
            PARAMETERS,
            self._read,
            check=_check,
        )
        self._entries = [ToolEntry(tool=tool, source=GROUP, group=GROUP, needs_approval=False)]

    def entries(self) -> Sequence[ToolEntry]:
        return list(self._entries)

    async def start(self) -> None:
        """Nothing to start: it reads through servers started for their tools."""

    async def close(self) -> None:
        """Nothing to stop: the servers are stopped by their own sources."""

    async def _read(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        match = MENTION.fullmatch(str(arguments.get("resource", "")).strip())
        if match is None:
            raise ToolFailed("name the resource as @SERVER:URI")
        server, uri = match.groups()
        try:
            found = contents(await self._running(server).read_resource(uri))
        except ResourceProblem as e:
            raise ToolFailed(f"@{server}:{uri}: {e}") from None
        return ToolResult(text=as_text(found, self.output_limit), parts=_images(found))

    def _running(self, server: str) -> McpSource:
        source = next((s for s in self.servers() if s.group == server and s.started), None)
        if source is None:
            running = ", ".join(s.group for s in self.servers() if s.started) or "none"
            raise ToolFailed(f"no running tool server named {server!r} (running: {running})")
        return source


def _images(found: list[ResourceContent]) -> tuple[Part, ...]:
    """The images among a resource's contents that providers take, as the result's parts."""
    images = [c for c in found if c.text is None and c.media_type in IMAGE_TYPES and len(c.data) <= MAX_IMAGE_BYTES]
    return tuple(Part(kind="image", data=c.data, media_type=c.media_type) for c in images[:MAX_IMAGES])


def _check(arguments: dict[str, Any]) -> str:
    resource = arguments.get("resource")
    if not isinstance(resource, str) or MENTION.fullmatch(resource.strip()) is None:
        return "resource must be @SERVER:URI, e.g. @docs:file:///guide.md"
    return ""
