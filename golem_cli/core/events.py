"""What a run reports to ``RunHooks.on_event`` beyond the model's stream events.

The stream events themselves (``TextDelta``, ``ThinkingDelta``, ``ToolCallDelta``,
``StreamDone``) are the model port's, in ``model.py``; these are the run's own, around tool
calls.
"""

from __future__ import annotations

from msgspec import Struct

from golem_cli.core.messages import Message, ToolCall

__all__ = ["ToolCallFinished", "ToolCallOutput", "ToolCallStarted"]


class ToolCallStarted(Struct, frozen=True, kw_only=True):
    """Given to ``on_event`` before a tool call executes."""

    call: ToolCall


class ToolCallFinished(Struct, frozen=True, kw_only=True):
    """Given to ``on_event`` as soon as a call's result is known (calls of one group in the
    order they finish): the result message the batch records for it, in call order."""

    call: ToolCall
    result: Message


class ToolCallOutput(Struct, frozen=True, kw_only=True):
    """Given to ``on_event`` while a call runs, each time its tool reports output
    (``ToolContext.output``): the new text, in the order it came."""

    call: ToolCall
    text: str
