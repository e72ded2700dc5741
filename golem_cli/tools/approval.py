"""Who says yes: the approval policy of a chat, as the core's approval hook.

A call of a tool that needs approval runs when the whole run was approved (``--yes``), when
its tool was allowed (``--allow NAME``, the config, or ``a`` at an earlier question), or when
the person answers ``y``. Otherwise it is denied: with the person's reason when they answer
``n``, or because nobody can be asked (no terminal, a script) — never run. A denial is a
``failed`` result the model reads, so nothing is silently dropped.

The question itself is the CLI's (``ask``, given a ``Question``); this module knows nothing
of terminals. Ctrl-C at the question surfaces from ``ask`` as ``KeyboardInterrupt`` (or the
task's cancellation), which the core turns into a stop that closes the batch.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from golem_cli.core.tools import APPROVED, Approval, ApprovalRequest, ToolFailed
from golem_cli.tools.registry import Registry, ToolEntry, ToolSelectionError

Choice = Literal["yes", "always", "no"]

NO_TERMINAL = (
    "it needs the user's approval and nobody can be asked here (no terminal); "
    "the user can approve it with --yes or --allow {name}"
)


@dataclass(frozen=True, kw_only=True)
class Question:
    """What the person is shown: the tool, where it comes from, and the call."""

    tool: str
    source: str
    arguments: str  # the arguments as the model sent them, formatted
    preview: str  # the tool's own rendering (a diff, the command); "" when it has none


@dataclass(frozen=True)
class Answer:
    choice: Choice
    reason: str = ""  # a denial's reason, read by the model


Ask = Callable[[Question], Awaitable[Answer]]


class Approvals:
    """The approval hook of one chat (``RunHooks.approve``); ``allowed`` grows with ``a``
    answers and ``/tools allow`` for the rest of the session."""

    def __init__(
        self, registry: Registry, *, yes: bool = False, allow: Iterable[str] = (), ask: Ask | None = None
    ) -> None:
        self.registry = registry
        self.yes = yes
        self.allowed: set[str] = set()
        #: ``allow`` names of tool servers that have not started yet (``refresh`` reads them).
        self.waiting: list[str] = []
        self.ask = ask
        self.allow(allow)

    def allow(self, names: Iterable[str]) -> list[str]:
        """Waive approval for what ``names`` select (a destructive tool only by its own name);
        names of a tool server not started yet wait for it. Returns the tools allowed now."""
        now, waiting = self.registry.split_waiting(names)
        self.waiting.extend(waiting)
        found = self.registry.allowable(now)
        self.allowed |= found
        return sorted(found)

    def refresh(self) -> list[str]:
        """Apply the waiting names whose server has started; returns a line for each that
        selects nothing on it."""
        problems = []
        still = []
        for name in self.waiting:
            server = self.registry.waiting_for(name)
            if server is not None:
                still.append(name)
                continue
            try:
                self.allowed |= self.registry.allowable([name])
            except ToolSelectionError:
                lazy = next((s for s in self.registry.lazy_sources() if s.claims(name)), None)
                if lazy is None or not lazy.problem:  # a server that failed was reported already
                    problems.append(f"--allow {name}: {no_such_tool(self.registry, name)}")
        self.waiting = still
        return problems

    def needs_question(self, entry: ToolEntry | None) -> bool:
        if entry is None or not entry.needs_approval:
            return False
        return not (self.yes or entry.name in self.allowed)

    async def __call__(self, request: ApprovalRequest) -> Approval:
        """The call's approval; ``ToolFailed`` when it would fail anyway (its preview says
        why: an edit whose text is not in the file, a path outside the root), so nobody is
        asked about a call that cannot do what it asks."""
        entry = self.registry.entry(request.call.name)
        if not self.needs_question(entry):
            return APPROVED
        assert entry is not None
        asked = question(entry, request)
        if self.ask is None:
            return Approval(approved=False, reason=NO_TERMINAL.format(name=entry.name))
        answer = await self.ask(asked)
        if answer.choice == "always":
            self.allowed.add(entry.name)
        if answer.choice in ("yes", "always"):
            return APPROVED
        return Approval(approved=False, reason=answer.reason.strip())


def question(entry: ToolEntry, request: ApprovalRequest) -> Question:
    """What the person is asked; ``ToolFailed`` from the preview (the call will fail) passes."""
    preview = ""
    if entry.preview is not None:
        try:
            preview = entry.preview(request.args)
        except ToolFailed:
            raise
        except Exception as e:  # a broken preview must not decide the call
            preview = f"(no preview: {e})"
    return Question(tool=entry.name, source=entry.source, arguments=format_arguments(request.args), preview=preview)


def format_arguments(args: dict[str, object]) -> str:
    """``key: value`` lines, strings as they are (multi-line ones indented)."""
    lines: list[str] = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "\n" in text:
            lines.append(f"{key}:")
            lines.extend("  " + line for line in text.splitlines())
        else:
            lines.append(f"{key}: {text}")
    return "\n".join(lines)


def no_such_tool(registry: Registry, name: str) -> str:
    """Why ``name`` selects nothing, naming what the tool server it points at offers."""
    lazy = next((s for s in registry.lazy_sources() if s.claims(name)), None)
    if lazy is None:
        return f"no tool or group named {name!r}"
    offered = sorted(e.own_name or e.name for e in registry.entries() if e.group == lazy.group)
    shown = ", ".join(offered[:20]) + (", ..." if len(offered) > 20 else "")
    return f"tool server {lazy.group!r} has no tool {name!r}" + (f" (it offers {shown})" if offered else "")
