"""Which tools exist, where they come from, and which of them a chat enables.

A *source* provides tools: ``builtin`` (this package's file, shell and web tools) and one
``mcp:<server>`` source per configured tool server. Each tool is a ``ToolEntry``: the core
``Tool`` the run calls, its source, its group, whether a call needs the user's approval, and
how to preview a call for the approval question. The ``Registry`` puts the sources together,
checks that every name is one both providers accept (``^[a-zA-Z0-9_-]{1,64}$``) and unique
across sources, and turns what the user typed (``-T``, ``tools = [...]``, ``/tools``) into
entries.

What a name can select (``Registry.select``):

* a tool's name (``read_file``; an MCP tool's name as the model sees it, ``github__search``);
* a group: ``fs``, ``shell``, ``web`` for the built-ins, the server's name for an MCP source;
* ``SOURCE.TOOL``: a tool by its own name at its group (``github.search``);
* a pattern over those (``github.get_*``);
* ``all``: every built-in tool (tool servers are enabled by name: starting one costs).

A tool server's source is a ``LazySource``: it knows its tools only once it has started, so
a name it ``claims`` (``github``, ``github.search``) waits for that start (see ``Toolbox``),
and ``refresh`` reads the sources' entries again afterwards.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from msgspec import Struct

from golem_cli.core.errors import InputError
from golem_cli.core.tools import Tool
from golem_cli.tools.rules import Kind

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
BUILTIN = "builtin"
ALL = "all"

#: The text a call's approval question shows besides its arguments (a diff, a command).
Preview = Callable[[dict[str, Any]], str]


class ToolSelectionError(InputError):
    """A tool name that does not exist, or a source whose names clash (exit 2, bad input).
    ``name`` is the name that selects nothing (so the caller can say where it came from)."""

    name: str = ""


def _no_such(name: str, hint: str) -> ToolSelectionError:
    error = ToolSelectionError(f"no tool or group named {name!r}", hint=hint)
    error.name = name
    return error


class ToolEntry(Struct, frozen=True, kw_only=True):
    """One tool as golem offers it.

    ``tool.name`` is the name the model sees (unique, provider-valid). ``source`` is
    ``builtin`` or ``mcp:<server>``; ``group`` selects several tools at once (``fs`` or the
    server's name); ``own_name`` is the tool's name at its source (an MCP server's own tool
    name, before golem made it unique), ``group.own_name`` selects it. ``needs_approval``
    is the tool's default: the user's ``--allow``, ``--yes`` and the config may waive it.
    ``preview`` renders a call for the approval question. ``destructive``: the source says a
    call may destroy something (a tool server's ``destructiveHint``); a group or a pattern
    given to ``--allow`` does not waive its approval, only its own name does. ``matched_on``:
    what rules with a pattern match a call on (``rules.py``), and the argument holding it
    (``("command", "command")`` for ``run_command``); None when the tool takes no pattern.
    """

    tool: Tool
    source: str
    group: str
    needs_approval: bool
    preview: Preview | None = None
    own_name: str = ""
    destructive: bool = False
    matched_on: tuple[Kind, str] | None = None

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

    def named_by(self, selector: str) -> bool:
        """Whether ``selector`` is this tool's own name (not a group or a pattern)."""
        return selector in (self.name, f"{self.group}.{self.own_name or self.name}")


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


@runtime_checkable
class LazySource(ToolSource, Protocol):
    """A source that lists its tools only once started (a tool server): ``group`` is the
    group its tools will have, ``claims`` says whether a name selects some of them, and
    ``problem`` why it is not running ("" while it is, or before it was started)."""

    group: str
    started: bool
    problem: str

    def claims(self, selector: str) -> bool: ...


class Registry:
    """The tools of all sources, by name."""

    def __init__(self, sources: Sequence[ToolSource]) -> None:
        self.sources = list(sources)
        self._by_name: dict[str, ToolEntry] = {}
        self.refresh()

    def refresh(self) -> None:
        """Read every source's entries again (after a tool server started)."""
        self._by_name = {}
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
        chosen = set().union(*self._resolve(names).values())
        return [e for e in self._by_name.values() if e.name in chosen]

    def allowable(self, names: Iterable[str]) -> set[str]:
        """The tool names ``names`` waive approval for (``--allow``): what they select, but
        a destructive tool only when named itself. Unknown names raise as in ``select``."""
        allowed: set[str] = set()
        for name, found in self._resolve(names).items():
            allowed.update(n for n in found if not self._by_name[n].destructive or self._by_name[n].named_by(name))
        return allowed

    def split_waiting(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """``names`` parted into those that select tools now and those that wait for a tool
        server not started yet (``waiting_for``)."""
        now: list[str] = []
        waiting: list[str] = []
        for name in names:
            (waiting if self.waiting_for(name) is not None else now).append(name)
        return now, waiting

    def _resolve(self, names: Iterable[str]) -> dict[str, set[str]]:
        """Each non-blank name (stripped) with the tool names it selects; ``ToolSelectionError``
        naming the first that selects nothing."""
        resolved: dict[str, set[str]] = {}
        for raw in names:
            name = raw.strip()
            if not name:
                continue
            found = self._matching(name)
            if not found:
                raise _no_such(name, self.hint())
            resolved.setdefault(name, set()).update(found)
        return resolved

    def lazy_sources(self) -> list[LazySource]:
        return [s for s in self.sources if isinstance(s, LazySource)]

    def waiting_for(self, name: str) -> LazySource | None:
        """The tool server, not started yet, that ``name`` selects tools of (if any)."""
        name = name.strip()
        if not name or self._matching(name):
            return None
        return next((s for s in self.lazy_sources() if not s.started and s.claims(name)), None)

    def _matching(self, name: str) -> set[str]:
        if name in (ALL, BUILTIN):  # "builtin", the source `golem tools` shows, is all of them
            return {e.name for e in self._by_name.values() if e.source == BUILTIN}
        if any(c in name for c in "*?["):
            return {e.name for e in self._by_name.values() if fnmatch.filter(e.selectors(), name)}
        return {e.name for e in self._by_name.values() if name in e.selectors()}

    def hint(self) -> str:
        groups = ", ".join(sorted(g for g in self.groups() if g not in {s.group for s in self.lazy_sources()}))
        servers = sorted(s.group for s in self.lazy_sources())
        more = f"; tool servers: {', '.join(servers)}" if servers else ""
        return f"`golem tools` lists the tools; groups: {groups}, {ALL}{more}"
