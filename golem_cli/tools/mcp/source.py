"""A tool server as a tool source (``mcp:<server>``): its tools as ``ToolEntry``\\ s.

This module does not import the MCP SDK (slow to import, ADR 0012): a chat that enables no
tool server never pays for it. ``start`` imports it, through ``connection``.

What golem makes of a server's tool:

* its name for the model is ``SERVER__TOOL`` (``naming``); its own name selects it as
  ``SERVER.TOOL``;
* its description and input schema go to the model as the server wrote them, within bounds
  (``MAX_DESCRIPTION`` characters, ``MAX_SCHEMA`` bytes of schema; a tool over them is left
  out with a notice);
* every call needs the user's approval, unless the config's ``allow`` names the tool or a
  pattern matches it, or ``allow_read_only = true`` and the server says the tool is
  read-only (``readOnlyHint``), or the user allows it (``--allow``, ``a``, ``--yes``);
* the server's own claims (annotations) never waive a question by themselves: a tool the
  server calls destructive (``destructiveHint: true``) is asked about even when an ``allow``
  pattern or group matches it, unless its own name is allowed; a tool that claims to be both
  read-only and destructive is treated as destructive. The question shows what the server
  claims.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golem_cli.config.schema import McpServerTable
from golem_cli.core.tools import SchemaTool, ToolContext, ToolFailed, ToolResult
from golem_cli.tools.mcp.arguments import schema_problem
from golem_cli.tools.mcp.config import ServerConfig, server_configs
from golem_cli.tools.mcp.hooks import ServerHooks
from golem_cli.tools.mcp.naming import model_name
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT
from golem_cli.tools.registry import ToolEntry

if TYPE_CHECKING:
    from golem_cli.tools.mcp.connection import Connection

MAX_DESCRIPTION = 4000
MAX_SCHEMA = 64 * 1024
MAX_OWN_NAME = 256
#: The most of a server's instructions the model is given.
MAX_INSTRUCTIONS = 2048
CUT_MARK = "[golem: the server's instructions were cut here at 2 KB]"


class McpSource:
    """The tools of one configured server (see the module docstring)."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        notify: Callable[[str], None] = lambda line: None,
        hooks: ServerHooks | None = None,
        root: Path | None = None,
    ) -> None:
        self.config = config
        self.name = f"mcp:{config.name}"
        self.group = config.name
        self.output_limit = output_limit
        self.notify = notify
        self.hooks = hooks or ServerHooks()
        self.root = root
        self.started = False
        self.problem = ""
        self._entries: list[ToolEntry] = []
        self._connection: Connection | None = None
        #: Its prompts, resources and resource templates as it listed them, read at start and
        #: when it says they changed (for the chat's slash commands, ``@SERVER:URI`` and Tab).
        self.prompt_list: list[dict[str, Any]] = []
        self.resource_list: list[dict[str, Any]] = []
        self.template_list: list[dict[str, Any]] = []

    def claims(self, selector: str) -> bool:
        """Whether ``selector`` names this server or tools of it."""
        selector = selector.strip()
        return selector == self.group or selector.startswith((f"{self.group}.", f"{self.group}__"))

    def entries(self) -> Sequence[ToolEntry]:
        return list(self._entries)

    async def start(self) -> None:
        """Connect and list the tools; ``ServerFailed`` (with the reason) when it cannot."""
        if self.started:
            return
        transport = None
        if self.config.table.command is not None:
            # The server starts while the SDK is imported: the two overlap (ADR 0012).
            from golem_cli.tools.mcp.transport import StdioTransport

            transport = StdioTransport(self.config)
            with contextlib.suppress(OSError):  # the connection's start says why, in words
                await transport.spawn()
        try:
            module = await asyncio.to_thread(importlib.import_module, "golem_cli.tools.mcp.connection")
        except BaseException:
            if transport is not None:
                await transport.abandon()
            raise
        connection: Connection = module.Connection(
            self.config, self.notify, transport=transport, hooks=self.hooks, root=self.root
        )
        try:
            listing = await connection.start()
        except Exception as e:
            self.problem = str(e)
            raise
        self._connection = connection
        self._entries = list(self._build(listing))
        self.started = True
        await self._read_prompts()
        await self._read_resources()

    async def _read_prompts(self) -> None:
        """The prompts it offers, kept for the chat's slash commands and their completion."""
        try:
            self.prompt_list = await self.prompts()
        except Exception as e:  # its prompts are a convenience: the tools work without them
            from golem_cli.tools.mcp.connection import describe_error

            self.notify(f"tool server {self.group!r} did not list its prompts: {describe_error(e)}")

    async def _read_resources(self) -> None:
        """The resources and templates it offers, kept for ``@SERVER:URI`` and its completion."""
        try:
            self.resource_list, self.template_list = await self.resources()
        except Exception as e:  # a convenience too: a resource can be read by its URI without a listing
            from golem_cli.tools.mcp.connection import describe_error

            self.notify(f"tool server {self.group!r} did not list its resources: {describe_error(e)}")

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.close()

    @property
    def instructions(self) -> str:
        """The server's instructions for the model, at most ``MAX_INSTRUCTIONS`` bytes (cut with
        a mark); "" when it gave none or its table says ``instructions = false``."""
        if self._connection is None or not self.config.table.instructions:
            return ""
        text = self._connection.instructions.strip()
        raw = text.encode("utf-8")
        if len(raw) <= MAX_INSTRUCTIONS:
            return text
        return raw[:MAX_INSTRUCTIONS].decode("utf-8", "ignore").rstrip() + "\n" + CUT_MARK

    async def prompts(self) -> list[dict[str, Any]]:
        """The started server's prompts (``prompts/list``) as JSON objects."""
        return await self._connection.list_prompts() if self._connection is not None else []

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """The messages of its prompt ``name`` with ``arguments``; ``ToolFailed`` when it cannot."""
        if self._connection is None:
            raise ToolFailed(f"tool server {self.group!r} is not running: {self.problem or 'it was not started'}")
        return await self._connection.get_prompt(name, arguments)

    async def relist_prompts(self) -> bool:
        """Its prompts read again when it said they changed; whether it had."""
        return await self._relist("prompts", self._read_prompts)

    async def relist_resources(self) -> bool:
        """Its resources read again when it said they changed; whether it had."""
        return await self._relist("resources", self._read_resources)

    async def _relist(self, kind: str, read: Callable[[], Awaitable[None]]) -> bool:
        connection = self._connection
        if connection is None or kind not in connection.changed:
            return False
        connection.changed.discard(kind)
        await read()
        return True

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """Its resource ``uri`` (``ReadResourceResult`` as JSON); ``ToolFailed`` when it cannot."""
        if self._connection is None:
            raise ToolFailed(f"tool server {self.group!r} is not running: {self.problem or 'it was not started'}")
        return await self._connection.read_resource(uri)

    async def complete(self, ref: dict[str, str], argument: str, value: str, given: dict[str, str]) -> list[str]:
        """The server's completions for an argument of a prompt or a resource template ([] if none)."""
        if self._connection is None:
            return []
        return await self._connection.complete(ref, argument, value, given)

    async def resources(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The started server's resources and resource templates as JSON objects."""
        return await self._connection.list_resources() if self._connection is not None else ([], [])

    def changed(self) -> set[str]:
        """The lists the server said have changed since they were read (``tools``...)."""
        return set(self._connection.changed) if self._connection is not None else set()

    async def relist(self) -> bool:
        """Read the server's tools again when it said they changed; whether they did."""
        connection = self._connection
        if connection is None or "tools" not in connection.changed:
            return False
        connection.changed.discard("tools")
        before = [(e.name, e.tool.description, e.tool.parameters) for e in self._entries]
        try:
            listing = await connection.list_tools()
        except Exception as e:  # the server's fault: keep what it offered before, and say so
            from golem_cli.tools.mcp.connection import describe_error

            self.notify(f"tool server {self.group!r} changed its tools but could not list them: {describe_error(e)}")
            return False
        self._entries = list(self._build(listing))
        return before != [(e.name, e.tool.description, e.tool.parameters) for e in self._entries]

    # --- the entries -------------------------------------------------------------------------

    def _build(self, listing: list[dict[str, Any]]) -> Iterator[ToolEntry]:
        taken: set[str] = set()
        for tool in listing:
            own = tool.get("name")
            if not isinstance(own, str) or not own or len(own) > MAX_OWN_NAME:
                continue  # nothing to call it by, nor to name it in a notice
            if not self.config.offers(own):
                continue
            name = model_name(self.group, own)
            why = self._unusable(tool, name, taken)
            if why:
                self.notify(f"tool server {self.group!r}: {own!r} left out: {why}")
                continue
            taken.add(name)
            yield self._entry(tool, own, name)

    def _unusable(self, tool: dict[str, Any], name: str, taken: set[str]) -> str:
        if name in taken:
            return f"its name for the model, {name}, is taken by another of its tools"
        schema = tool.get("inputSchema", {"type": "object"})
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            return "its input schema is not a JSON object schema"
        if len(json.dumps(schema)) > MAX_SCHEMA:
            return f"its input schema is larger than {MAX_SCHEMA // 1024} KiB"
        return ""

    def _entry(self, tool: dict[str, Any], own: str, name: str) -> ToolEntry:
        annotations = tool.get("annotations")
        hints: dict[str, Any] = annotations if isinstance(annotations, dict) else {}
        read_only = hints.get("readOnlyHint") is True and hints.get("destructiveHint") is not True
        destructive = hints.get("destructiveHint") is True
        config = self.config
        waived = config.allows(own) or (not destructive and config.allows_by_pattern(own))
        waived = waived or (config.table.allow_read_only and read_only)
        description = str(tool.get("description") or tool.get("title") or "")[:MAX_DESCRIPTION]
        schema = dict(tool.get("inputSchema") or {"type": "object"})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        claim = "read-only" if read_only else "destructive" if destructive else ""

        async def call(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
            return await self._call(own, arguments, context.call_id)

        def preview(arguments: dict[str, Any]) -> str:
            from golem_cli.tools.approval import format_arguments

            shown = format_arguments(arguments) or "(no arguments)"
            return f"{shown}\n(the server says this tool is {claim})" if claim else shown

        return ToolEntry(
            tool=SchemaTool(name, description, schema, call, check=lambda arguments: schema_problem(schema, arguments)),
            source=self.name, group=self.group, needs_approval=not waived,
            preview=preview, own_name=own, destructive=destructive,
        )  # fmt: skip

    async def _call(self, own: str, arguments: dict[str, Any], call_id: str = "") -> ToolResult:
        if self._connection is None:
            raise ToolFailed(f"tool server {self.group!r} is not running: {self.problem or 'it was not started'}")
        from golem_cli.tools.mcp.results import tool_result

        return tool_result(await self._connection.call(own, arguments, call_id), limit=self.output_limit,
                           server=self.group)  # fmt: skip


def server_sources(
    tables: Mapping[str, McpServerTable],
    *,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    notify: Callable[[str], None] = lambda line: None,
    hooks: ServerHooks | None = None,
    root: Path | None = None,
    tokens: Path | None = None,
) -> list[McpSource]:
    """A source for every enabled ``[mcp_servers.NAME]`` table (none started), sharing
    ``hooks``; ``root`` is the root they are offered (the tool root), ``tokens`` where their
    OAuth tokens are."""
    hooks = hooks or ServerHooks()
    return [
        McpSource(config, output_limit=output_limit, notify=notify, hooks=hooks, root=root)
        for config in server_configs(tables, tokens).values()
        if config.table.enabled
    ]
