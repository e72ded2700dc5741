"""The order of what a request carries, in one place, so the prefix providers cache stays put.

Providers cache a request's longest prefix seen before, so whatever changes least goes first
and every part has one place: the system prompt, then project instructions (outermost
directory first), then tool servers' instructions (by server name), then the tools (by name,
whatever order their servers started or listed them in); in the messages, a conversation
summary first, then the window of the history. A part added by a later feature is a field
here that its feature fills; the session builds a ``RequestLayout`` and hands the agent what
it says. Nothing here reads a clock or counts anything: the same parts give the same request.
"""

from __future__ import annotations

from msgspec import Struct
from msgspec.structs import force_setattr

from golem_cli.core.history.processors import HistoryProcessor
from golem_cli.core.messages import Message
from golem_cli.core.tools import Tool

__all__ = ["ProjectInstructions", "RequestLayout", "ServerInstructions"]


class ProjectInstructions(Struct, frozen=True, kw_only=True):
    """A project's instruction file (``AGENTS.md`` and the like): where it was found, its text."""

    path: str
    text: str


class ServerInstructions(Struct, frozen=True, kw_only=True):
    """What a tool server asks to be told to the model (MCP's ``instructions``)."""

    server: str
    text: str


class RequestLayout(Struct, frozen=True, kw_only=True):
    """What a request carries, each part in its place. ``project`` is given outermost first
    (the order directories are walked down to the working one); ``servers`` and ``tools`` are
    put in name order here, so a caller cannot change the prefix by the order it found them.
    ``summary`` holds the messages that stand for the history before the window (from
    compaction); none yet."""

    system: str = ""
    project: tuple[ProjectInstructions, ...] = ()
    servers: tuple[ServerInstructions, ...] = ()
    tools: tuple[Tool, ...] = ()
    summary: tuple[Message, ...] = ()

    def __post_init__(self) -> None:
        force_setattr(self, "servers", tuple(sorted(self.servers, key=lambda s: s.server)))
        force_setattr(self, "tools", tuple(sorted(self.tools, key=lambda t: t.name)))

    def instructions(self) -> str:
        """The instructions text: system prompt, project instructions, servers' instructions,
        each non-empty part separated by a blank line."""
        parts = [self.system, *(p.text for p in self.project), *(s.text for s in self.servers)]
        return "\n\n".join(part for part in parts if part)

    def window(self, processor: HistoryProcessor) -> HistoryProcessor:
        """``processor`` (the trim that chooses the window) with the summary put before what it
        keeps."""
        summary = list(self.summary)
        if not summary:
            return processor

        def with_summary(history: list[Message]) -> list[Message]:
            return summary + processor(history)

        return with_summary
