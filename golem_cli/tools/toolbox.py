"""The tools of one chat: which are enabled now, and who approves their calls.

A ``Toolbox`` is what the session hands a run: the enabled tools (in registry order), the
approval hook, and the registry behind them (so ``/tools`` can list and change the set). It
is built once per chat from the command line and the config (``-T`` adds to ``tools = [...]``;
``--allow`` adds to ``allow = [...]``).

Tool servers know their tools only once started, and starting one costs a process or a
connection, so a server starts only when a name selects its tools (``-T github``,
``-T github.search``, ``tools = ["github"]``, ``/tools enable github``). Those names wait in
the toolbox until ``start`` (run by the chat once its event loop runs) starts the servers
they name, all at once, each within its own timeout. A server that fails is one line in what
``start`` returns, and the chat goes on without it; ``close`` stops every server started.

A server may change its tools while it runs (``notifications/tools/list_changed``): between
turns, ``refresh_servers`` lists them again, and a tool it added is enabled when the names
that enabled its server's tools (its group, a pattern) select it. The order stays the
registry's, so a request's tools are the same bytes while nothing changed (the provider's
prompt cache survives). What the servers say for the model (their ``instructions``) is
``instructions()``; ``hooks`` is how they reach the user (``tools/mcp/hooks.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from golem_cli.config.schema import CommandEnvTable
from golem_cli.core.layout import RequestLayout, ServerInstructions
from golem_cli.core.tools import Tool
from golem_cli.tools.approval import Approvals, Ask, no_such_tool
from golem_cli.tools.builtin import BuiltinSource, ToolSettings
from golem_cli.tools.command_env import CommandEnv, server_credentials
from golem_cli.tools.mcp.hooks import ServerHooks
from golem_cli.tools.registry import LazySource, Registry, ToolEntry, ToolSelectionError, ToolSource
from golem_cli.tools.rules import URL

if TYPE_CHECKING:
    from golem_cli.config.schema import McpServerTable


class Toolbox:
    def __init__(
        self,
        registry: Registry,
        enabled: Iterable[str] = (),
        approvals: Approvals | None = None,
        hooks: ServerHooks | None = None,
    ) -> None:
        self.registry = registry
        self._enabled: set[str] = set()
        #: The names that enabled tools (a tool a server adds later is enabled when they select it).
        self._chosen: list[str] = []
        #: Tools disabled by the person: a name above no longer enables them.
        self._refused: set[str] = set()
        self.hooks = hooks or ServerHooks()
        #: Names of tools of servers that have not started yet (``start`` starts them).
        self.waiting: list[str] = []
        self.enable(enabled)
        self.approvals = approvals or Approvals(registry)
        #: Lines about tool servers that happened between turns (one stopped), for the CLI
        #: to show and clear.
        self.notices: list[str] = []

    @property
    def enabled(self) -> list[ToolEntry]:
        return [e for e in self.registry.entries() if e.name in self._enabled]

    def tools(self) -> tuple[Tool, ...]:
        return tuple(e.tool for e in self.enabled)

    def enable(self, names: Iterable[str]) -> list[ToolEntry]:
        """Enable what ``names`` select; returns the entries that were not enabled yet. Names
        of a tool server not started yet wait for ``start``."""
        names = list(names)
        now, waiting = self.registry.split_waiting(names)
        self.waiting.extend(waiting)
        chosen = self.registry.select(now)
        new = [e for e in chosen if e.name not in self._enabled]
        self._enabled.update(e.name for e in chosen)
        self._refused.difference_update(e.name for e in chosen)
        self._chosen.extend(n.strip() for n in names if n.strip())
        return new

    def disable(self, names: Iterable[str]) -> list[ToolEntry]:
        """Disable what ``names`` select; returns the entries that were enabled."""
        chosen = self.registry.select(names)
        gone = [e for e in chosen if e.name in self._enabled]
        self._enabled.difference_update(e.name for e in chosen)
        self._refused.update(e.name for e in chosen)
        return gone

    @property
    def chosen(self) -> list[str]:
        """The names that enabled this chat's tools, each once, in the order given."""
        return list(dict.fromkeys(self._chosen))

    @property
    def refused(self) -> list[str]:
        """The tools the person disabled."""
        return sorted(self._refused)

    def is_enabled(self, name: str) -> bool:
        return name in self._enabled

    # --- tool servers ------------------------------------------------------------------------

    def to_start(self) -> list[LazySource]:
        """The servers the waiting names select tools of."""
        found: list[LazySource] = []
        for name in self.waiting:
            source = self.registry.waiting_for(name)
            if source is not None and source not in found:
                found.append(source)
        return found

    async def start(
        self, sources: Iterable[LazySource] | None = None, *, each: Callable[[LazySource, str], None] | None = None
    ) -> list[str]:
        """Start the servers the waiting names need (or ``sources``), in parallel, and
        enable what the names select. Returns one line per server that failed and per name
        that selects nothing; the chat goes on without them. ``each`` hears every server as
        it is ready or has failed (with its line, else ""), before the others are."""
        todo = list(self.to_start() if sources is None else sources)

        async def start_one(source: LazySource) -> str:
            try:
                await source.start()
            except Exception as e:
                source.problem = source.problem or str(e)
                line = f"tool server {source.group!r} did not start: {source.problem}"
            else:
                line = ""
                self.registry.refresh()  # its tools, for whoever hears of it now
            if each is not None:
                each(source, line)
            return line

        problems: list[str] = []
        if todo:
            outcomes = await asyncio.gather(*(start_one(s) for s in todo), return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome  # Ctrl-C, cancellation: not the server's fault
                if outcome:
                    problems.append(outcome)
            self.registry.refresh()
        still: list[str] = []
        for name in self.waiting:
            waiting = self.registry.waiting_for(name)
            if waiting is not None and not waiting.problem:
                still.append(name)
                continue
            if waiting is not None:
                continue  # it failed to start: said above
            try:
                self._enabled.update(e.name for e in self.registry.select([name]))
            except ToolSelectionError:
                problems.append(f"-T {name}: {no_such_tool(self.registry, name)}")
        self.waiting = still
        problems += self.approvals.refresh()
        return problems

    def servers(self) -> list[LazySource]:
        return self.registry.lazy_sources()

    async def refresh_servers(self) -> list[str]:
        """List again the tools (prompts, resources) of the servers that said they changed (between
        turns), and enable the new tools the chat's names select. Returns a line per server
        whose tools changed, for the chat to show."""
        lines: list[str] = []
        for source in self.servers():
            if source.started:
                for relist in (getattr(source, "relist_prompts", None), getattr(source, "relist_resources", None)):
                    if relist is not None:
                        await relist()
                line = await self._relist(source)
                if line:
                    lines.append(line)
        return lines

    async def _relist(self, source: LazySource) -> str:
        relist = getattr(source, "relist", None)
        if relist is None or "tools" not in source.changed():  # type: ignore[attr-defined]
            return ""
        before = {e.name for e in self.registry.entries() if e.group == source.group}
        if not await relist():
            return ""
        self.registry.refresh()
        after = [e for e in self.registry.entries() if e.group == source.group]
        self._enable_new(after, before)
        added = [e.name for e in after if e.name not in before]
        return _change_line(source.group, added, sorted(before - {e.name for e in after}))

    def _enable_new(self, entries: list[ToolEntry], before: set[str]) -> None:
        for entry in entries:
            if entry.name in before or entry.name in self._refused:
                continue
            for name in self._chosen:
                try:
                    if entry in self.registry.select([name]):
                        self._enabled.add(entry.name)
                        break
                except ToolSelectionError:
                    continue

    def server_instructions(self) -> tuple[ServerInstructions, ...]:
        """What the started servers say for the model, each under its name (the request's
        layout puts them in name order)."""
        said = []
        for source in self.servers():
            text = getattr(source, "instructions", "")
            if source.started and isinstance(text, str) and text:
                said.append(ServerInstructions(
                    server=source.group, text=f"Instructions from the tool server {source.group!r}:\n{text}"
                ))  # fmt: skip
        return tuple(said)

    def instructions(self) -> str:
        """The servers' instructions as the request carries them ("" when none says anything)."""
        return RequestLayout(servers=self.server_instructions()).instructions()

    async def close(self) -> None:
        """Stop every tool server started, and anything a built-in tool left running."""
        await asyncio.gather(*(s.close() for s in self.registry.sources), return_exceptions=True)


def _change_line(group: str, added: list[str], removed: list[str]) -> str:
    said = [f"added {', '.join(added)}"] if added else []
    said += [f"removed {', '.join(removed)}"] if removed else []
    return f"tool server {group!r} changed its tools: {'; '.join(said) or 'their descriptions changed'}"


def builtin_registry(settings: ToolSettings | None = None, extra: Iterable[ToolSource] = ()) -> Registry:
    """The registry of the built-ins (plus any other sources, such as tool servers)."""
    return Registry([BuiltinSource(settings), *extra])


def toolbox(
    *,
    enabled: Iterable[str] = (),
    allow: Iterable[str] = (),
    deny: Iterable[str] = (),
    yes: bool = False,
    ask: Ask | None = None,
    root: str | Path | None = None,
    output_limit: int | None = None,
    command_timeout: float | None = None,
    servers: Mapping[str, McpServerTable] | None = None,
    command_env: CommandEnvTable | None = None,
    key_variables: Iterable[str] = (),
    tokens: Path | None = None,
) -> Toolbox:
    """A chat's toolbox over the built-ins and the configured tool servers (``servers``: the
    ``[mcp_servers.NAME]`` tables; none is started here); ``ToolSelectionError`` for an
    unknown name. A command runs without ``key_variables`` (where golem reads provider keys),
    the servers' credentials and what ``command_env`` removes."""
    table = command_env or CommandEnvTable()
    credentials = frozenset(key_variables) | server_credentials(servers or {})
    environment = CommandEnv(credentials=credentials, remove=table.remove, passed=table.passed)
    settings = ToolSettings(command_env=environment)
    if root is not None:
        settings = replace(settings, root=Path(root).expanduser())
    if output_limit is not None:
        settings = replace(settings, output_limit=output_limit)
    if command_timeout is not None:
        settings = replace(settings, command_timeout=command_timeout)
    notices: list[str] = []
    extra: list[ToolSource] = []
    hooks = ServerHooks()
    if servers:
        from golem_cli.tools.mcp.reader import ResourceReader
        from golem_cli.tools.mcp.source import server_sources

        sources = server_sources(servers, output_limit=settings.output_limit, notify=notices.append, hooks=hooks,
                                 root=settings.root, tokens=tokens)  # fmt: skip
        extra = [*sources, ResourceReader(lambda: sources, settings.output_limit)]  # read_resource, off unless named
    registry = builtin_registry(settings, extra)
    approvals = Approvals(registry, yes=yes, allow=allow, deny=deny, ask=ask, root=str(settings.root.resolve()))
    settings.private_urls.allows = lambda url: approvals.rules.allows("fetch_url", URL, url)
    box = Toolbox(registry, enabled, approvals, hooks)
    box.notices = notices
    return box
