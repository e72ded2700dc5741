"""Which tools a chat starts with: ``-T`` on top of ``tools = [...]`` in the config, ``--allow``
on top of ``allow = [...]``, ``--yes``, and the tool servers of ``[mcp_servers.NAME]``. A chat
without any tool imports nothing of the tools layer; ``/tools`` builds the toolbox when it is
first needed. Tool servers start later, in the chat's event loop (``tool_servers.py``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.cli.tool_view import ToolView
    from golem_cli.config.settings import Settings
    from golem_cli.tools.toolbox import Toolbox


@dataclass
class ToolChoice:
    settings: Settings
    tool: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    yes: bool = False
    _box: Toolbox | None = None

    @property
    def names(self) -> list[str]:
        return [*self.settings.tools, *self.tool]

    def toolbox(self) -> Toolbox | None:
        """The chat's toolbox, or None when no tool is enabled (nothing to import)."""
        if not self.names:
            return None
        return self.ensure()

    def ensure(self) -> Toolbox:
        """The toolbox, built on first use (``ToolSelectionError`` for an unknown name)."""
        if self._box is None:
            from golem_cli.tools.toolbox import toolbox

            s = self.settings
            self._box = toolbox(
                enabled=self.names, allow=[*s.allow, *self.allow], yes=self.yes, root=s.tool_root,
                output_limit=s.tool_output_limit, command_timeout=s.command_timeout, servers=s.mcp_servers,
            )  # fmt: skip
        return self._box

    def stderr_view(self) -> ToolView:
        """For ``golem ask``: calls and results on stderr (stdout is the reply), questions on
        the terminal when there is one."""
        from golem_cli.cli.console import rich_console
        from golem_cli.cli.tool_view import ToolView

        view = ToolView(rich_console(stderr=True))
        if self._box is not None and can_ask():
            self._box.approvals.ask = view.ask
        return view


def can_ask() -> bool:
    """A person can answer a question: stdin and stderr are both a terminal."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
