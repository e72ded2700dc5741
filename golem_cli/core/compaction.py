"""Compaction: a summary stands for the history before a compaction point (ADR 0032).

The history file is never shortened. A summary covers every message before its **point** (the
index of the first message it does not cover, which always opens a request); what a run sends
afterwards is the instructions, the summary as one clearly marked user message (never a system
message: the runtime replaces system messages with the run's instructions), then the window the
trim chooses from the messages at and after the point (the summary does not count against N).

The compaction request is the conversation's own request as far as it can be: the same
instructions, the same tools in the same order and the same cache key, so that prefix is a cache
read; then the summary in force (if any), the messages it does not cover up to the point, and
one request to summarise them. It offers no tool choice; a tool call in the answer is ignored.
Nothing here reads a clock: the same history gives the same request.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from golem_cli.core.errors import GolemError, HistoryProcessorError
from golem_cli.core.history.numbering import number_of
from golem_cli.core.history.processors import HistoryProcessor, trim_history
from golem_cli.core.history.repair import repair_history
from golem_cli.core.messages import SYSTEM, TOOL, USER, Message, opens_request
from golem_cli.core.model import Model, ModelRequest, ModelSettings, ToolDefinition
from golem_cli.core.usage import Usage

__all__ = [
    "COMPACT_MARK",
    "SUMMARY_MARK",
    "Compaction",
    "CompactionError",
    "after_point",
    "compaction_messages",
    "compaction_prompt",
    "last_number",
    "request_summary",
    "summary_message",
    "tail_start",
]

#: How the summary message begins: a model (and a person reading a request) knows what it is.
SUMMARY_MARK = "[golem: summary of the conversation so far]"
#: How the compaction request's last message begins (the offline model answers it with its
#: deterministic summary).
COMPACT_MARK = "[golem: compaction request]"
#: How many newest messages ``/compact`` keeps verbatim by default.
DEFAULT_KEEP = 6
#: A tool result longer than this is replaced, in a fold's request, by a one-line note.
LARGE_RESULT = 4096

_PROMPT = (
    "Write a summary of the conversation above (every message before this one) that lets it go on "
    "without them. Keep: what the user asked for and decided, every correction the user made, the names "
    "of files, functions, commands and other identifiers, the results of tool calls that still matter, "
    "and the tasks still open. Write it as notes, in the conversation's language, with no preamble. "
    "Do not call tools."
)


class CompactionError(GolemError):
    """A compaction that could not be made (nothing to compact, no summary in the answer); the
    conversation is unchanged."""


class Compaction(Struct, frozen=True, kw_only=True):
    """What a compaction request answered: the summary's text, the call's usage, and the model
    that wrote it."""

    text: str
    usage: Usage
    model: str
    ignored_calls: int = 0


def tail_start(history: Sequence[Message], keep: int) -> int | None:
    """Where the verbatim tail of the newest ``keep`` messages starts, by ``TrimHistory``'s
    boundary rule (the first message at or after the cut that can open a request); None when
    there is nothing before it to compact."""
    try:
        window = trim_history(max(1, keep))(list(history))
    except HistoryProcessorError:
        return None
    start = len(history) - len(window)
    first = next((i for i, m in enumerate(history) if m.role != SYSTEM), len(history))
    return start if start > first else None


def summary_message(text: str, last: int) -> Message:
    """The user message that stands for messages 1 to ``last`` (as ``golem show`` numbers
    them)."""
    covers = f"messages 1-{last}" if last > 0 else "the messages before this one"
    head = f"{SUMMARY_MARK} It stands for {covers}; the conversation goes on after it."
    return Message(role=USER, content=f"{head}\n\n{text.strip()}")


def last_number(history: Sequence[Message], point: int) -> int:
    """The number ``golem show`` gives the last message before ``point`` (0 when none)."""
    return next((n for i in range(point - 1, -1, -1) if (n := number_of(history, i)) is not None), 0)


def after_point(point: int, processor: HistoryProcessor) -> HistoryProcessor:
    """``processor`` (the trim that chooses the window) over the messages at and after the
    point: what the summary covers is never sent again."""

    def window(history: list[Message]) -> list[Message]:
        return processor(history[point:])

    return window


def compaction_prompt(focus: str = "") -> str:
    """The compaction request's last message; ``focus`` steers what the summary keeps."""
    steer = f"\n\nFocus on: {focus.strip()}" if focus.strip() else ""
    return f"{COMPACT_MARK} {_PROMPT}{steer}"


def compaction_messages(
    instructions: str,
    summary: Message | None,
    covered: Sequence[Message],
    *,
    focus: str = "",
    shrink: bool = False,
) -> list[Message]:
    """The compaction request's messages: the instructions, the summary in force, the messages
    it does not cover (repaired, system messages aside), and the request to summarise. With
    ``shrink`` (a rolling fold), a tool result over ``LARGE_RESULT`` characters is a one-line
    note of its tool and size (the file keeps it)."""
    body = [m for m in repair_history(list(covered)) if m.role != SYSTEM]
    if shrink:
        body = [_noted(m) if m.role == TOOL and len(m.content) > LARGE_RESULT else m for m in body]
    head = [Message(role=SYSTEM, content=instructions)] if instructions else []
    ask = Message(role=USER, content=compaction_prompt(focus))
    return [*head, *([summary] if summary is not None else []), *body, ask]


def _noted(result: Message) -> Message:
    from golem_cli.core.messages import replace

    note = f"[golem: a {result.tool_name or 'tool'} result of {len(result.content)} characters, left out here]"
    return replace(result, content=note)


async def request_summary(
    model: Model,
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolDefinition] = (),
    settings: ModelSettings = ModelSettings(),
    cache_key: str = "",
) -> Compaction:
    """Ask ``model`` for the summary (one call, not streamed). The tools are offered only so the
    request's prefix is the conversation's; a call in the answer is ignored. Raises
    ``ModelError`` when the call fails, ``CompactionError`` when the answer holds no text."""
    request = ModelRequest(messages=list(messages), tools=list(tools), settings=settings, cache_key=cache_key)
    response = await model.request(request)
    text = response.message.content.strip()
    if not text:
        raise CompactionError(
            "the model's answer to the compaction request held no summary; nothing was changed",
            hint="try again, or name another model with compact_model in config.toml",
        )
    return Compaction(
        text=text,
        usage=response.usage,
        model=getattr(model, "name", "") or response.model_name,
        ignored_calls=len(response.message.tool_calls),
    )


def openers(history: Sequence[Message]) -> list[int]:
    """Every index a compaction point may be (a message that can open a request)."""
    return [i for i, m in enumerate(history) if m.role != SYSTEM and opens_request(m)]
