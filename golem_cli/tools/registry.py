"""Which tools exist, where they come from, and which of them a chat enables.

A *source* provides tools: ``builtin`` (this package's file, shell and web tools) and, later,
one ``mcp:<server>`` source per configured tool server. Each tool is a ``ToolEntry``: the core
``Tool`` the run calls, its source, its group, whether a call needs the user's approval, and
how to preview a call for the approval question. The ``Registry`` puts the sources together,
checks that every name is one both providers accept (``^[a-zA-Z0-9_-]{1,64}$``) and unique
across sources, and turns what the user typed (``-T``, ``tools = [...]``, ``/tools``) into
entries.

What a name can select (``Registry.select``):

* a tool's name (``read_file``; an MCP tool's name as the model sees it, ``github__search``);
* a group: ``fs``, ``shell``, ``web`` for the built-ins, the server's name for an MCP source;
* ``SOURCE.TOOL``: a tool by its own name at its group (``github.search``);
* ``all``: every built-in tool (tool servers are enabled by name: starting one costs).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from golem_cli.core.errors import InputError
from golem_cli.core.tools import Tool

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
BUILTIN = "builtin"
ALL = "all"

#: The text a call's approval question shows besides its arguments (a diff, a command).
Preview = Callable[[dict[str, Any]], str]


class ToolSelectionError(InputError):
    """A tool name that does not exist, or a source whose names clash (exit 2, bad input)."""


@dataclass(frozen=True)
class ToolEntry:
    """One tool as golem offers it.

    ``tool.name`` is the name the model sees (unique, provider-valid). ``source`` is
    ``builtin`` or ``mcp:<server>``; ``group`` selects several tools at once (``fs`` or the
    server's name); ``own_name`` is the tool's name at its source (an MCP server's own tool
    name, before golem made it unique), ``group.own_name`` selects it. ``needs_approval``
    is the tool's default: the user's ``--allow``, ``--yes`` and the config may waive it.
    ``preview`` renders a call for the approval question.
    """

    tool: Tool
    source: str
    group: str
    needs_approval: bool
    preview: Preview | None = None
    own_name: str = ""

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def summary(self) -> str:
        """The description's first line (``golem tools`` shows it)."""
        lines = (self.tool.description or "").strip().splitlines()
        return lines[0] if lines else ""

    def selectors(self) -> set[str]:
        return {self.name, self.group, f"{self.group}.{self.own_name or self.name}"}


@runtime_checkable
class ToolSource(Protocol):
    """A provider of tools. ``entries()`` may be called before ``start`` (to list what a
    source offers) only when the source knows its tools without starting (the built-ins; an
    MCP source lists nothing until started). ``start`` and ``close`` bracket a chat that
    enables any of its tools."""

    name: str

    def entries(self) -> Sequence[ToolEntry]: ...

    def start(self) -> Awaitable[None]: ...

    def close(self) -> Awaitable[None]: ...


class Registry:
    """The tools of all sources, by name."""

    def __init__(self, sources: Sequence[ToolSource]) -> None:
        self.sources = list(sources)
        self._by_name: dict[str, ToolEntry] = {}
        for source in self.sources:
            for entry in source.entries():
                if not NAME.fullmatch(entry.name):
                    raise ToolSelectionError(
                        f"tool {entry.name!r} from {source.name} has a name providers refuse "
                        "(letters, digits, _ and -, at most 64)"
                    )
                other = self._by_name.get(entry.name)
                if other is not None:
                    raise ToolSelectionError(
                        f"tool name {entry.name!r} is offered by both {other.source} and {entry.source}"
                    )
                self._by_name[entry.name] = entry

    def entries(self) -> list[ToolEntry]:
        return list(self._by_name.values())

    def entry(self, name: str) -> ToolEntry | None:
        return self._by_name.get(name)

    def groups(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for entry in self._by_name.values():
            groups.setdefault(entry.group, []).append(entry.name)
        return groups

    def select(self, names: Iterable[str]) -> list[ToolEntry]:
        """The entries ``names`` select, in registry order; ``ToolSelectionError`` naming
        the first that selects nothing."""
        chosen: set[str] = set()
        for raw in names:
            name = raw.strip()
            if not name:
                continue
            found = self._matching(name)
            if not found:
                raise ToolSelectionError(f"no tool or group named {name!r}", hint=self.hint())
            chosen.update(found)
        return [e for e in self._by_name.values() if e.name in chosen]

    def _matching(self, name: str) -> set[str]:
        if name == ALL:
            return {e.name for e in self._by_name.values() if e.source == BUILTIN}
        return {e.name for e in self._by_name.values() if name in e.selectors()}

    def hint(self) -> str:
        groups = ", ".join(sorted(self.groups()))
        return f"`golem tools` lists the tools; groups: {groups}, {ALL}"


def tools_of(entries: Iterable[ToolEntry]) -> tuple[Tool, ...]:
    return tuple(e.tool for e in entries)
