"""The tools of one chat: which are enabled now, and who approves their calls.

A ``Toolbox`` is what the session hands a run: the enabled tools (in registry order), the
approval hook, and the registry behind them (so ``/tools`` can list and change the set). It
is built once per chat from the command line and the config (``-T`` adds to ``tools = [...]``;
``--allow`` adds to ``allow = [...]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from golem_cli.core.tools import Tool
from golem_cli.tools.approval import Approvals, Ask
from golem_cli.tools.builtin import BuiltinSource, ToolSettings
from golem_cli.tools.registry import Registry, ToolEntry, ToolSource


class Toolbox:
    def __init__(self, registry: Registry, enabled: Iterable[str] = (), approvals: Approvals | None = None) -> None:
        self.registry = registry
        self._enabled: set[str] = {e.name for e in registry.select(enabled)}
        self.approvals = approvals or Approvals(registry)

    @property
    def enabled(self) -> list[ToolEntry]:
        return [e for e in self.registry.entries() if e.name in self._enabled]

    def tools(self) -> tuple[Tool, ...]:
        return tuple(e.tool for e in self.enabled)

    def enable(self, names: Iterable[str]) -> list[ToolEntry]:
        """Enable what ``names`` select; returns the entries that were not enabled yet."""
        chosen = self.registry.select(names)
        new = [e for e in chosen if e.name not in self._enabled]
        self._enabled.update(e.name for e in chosen)
        return new

    def disable(self, names: Iterable[str]) -> list[ToolEntry]:
        """Disable what ``names`` select; returns the entries that were enabled."""
        chosen = self.registry.select(names)
        gone = [e for e in chosen if e.name in self._enabled]
        self._enabled.difference_update(e.name for e in chosen)
        return gone

    def is_enabled(self, name: str) -> bool:
        return name in self._enabled


def builtin_registry(settings: ToolSettings | None = None, extra: Iterable[ToolSource] = ()) -> Registry:
    """The registry of the built-ins (plus any other sources, such as tool servers)."""
    return Registry([BuiltinSource(settings), *extra])


def toolbox(
    *,
    enabled: Iterable[str] = (),
    allow: Iterable[str] = (),
    yes: bool = False,
    ask: Ask | None = None,
    root: str | Path | None = None,
    output_limit: int | None = None,
    command_timeout: float | None = None,
) -> Toolbox:
    """A chat's toolbox over the built-ins; ``ToolSelectionError`` for an unknown name."""
    settings = ToolSettings()
    if root is not None:
        settings = ToolSettings(root=Path(root).expanduser(), output_limit=settings.output_limit)
    if output_limit is not None:
        settings = ToolSettings(settings.root, output_limit, settings.command_timeout, settings.fetch_max_bytes)
    if command_timeout is not None:
        settings = ToolSettings(settings.root, settings.output_limit, command_timeout, settings.fetch_max_bytes)
    registry = builtin_registry(settings)
    return Toolbox(registry, enabled, Approvals(registry, yes=yes, allow=allow, ask=ask))
