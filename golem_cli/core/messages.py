"""The provider-neutral message model: golem's ``model.Message`` and its parts.

These are the types a history is made of. Their field order and JSON names are the durable
contract shared with the Go library (spec §1.1), so they are declared once, here, as frozen
msgspec structs: the codec can decode into and encode from them directly (fast for long
histories), and no history operation can mutate a message it was given.

``forbid_unknown_fields`` only affects decoding: it makes the codec's strict fast path hand a
foreign spelling (``"Kind"``, an extra key) to the Go-semantics reader instead of dropping it.

Lists inside a message are plain lists for ergonomic construction; nothing in golem mutates
them after construction, and the property tests check that.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = [
    "ASSISTANT",
    "INTERRUPTED",
    "INTERRUPTED_REPLY_MARK",
    "SYSTEM",
    "TOOL",
    "USER",
    "Message",
    "Part",
    "ThinkingBlock",
    "ToolCall",
    "is_interrupted_reply",
    "mark_interrupted",
    "replace",
]

SYSTEM: Final = "system"
USER: Final = "user"
ASSISTANT: Final = "assistant"
TOOL: Final = "tool"

PART_KINDS: Final = ("image", "document", "audio", "video")

#: Content of the result that repair synthesizes for a call that never got one (spec §2.1).
INTERRUPTED: Final = (
    "Tool call was interrupted before execution; no result was produced. Call the tool again if you need its result."
)

#: Appended to the content of an assistant reply that was cut off (Ctrl-C, dropped stream).
#: It lives in ``content`` because the JSON contract has no field for it; it also tells the
#: model, on the next turn, that its previous answer did not finish.
INTERRUPTED_REPLY_MARK: Final = "[reply interrupted]"


class Part(msgspec.Struct, frozen=True, gc=False, omit_defaults=True, rename="camel", forbid_unknown_fields=True):
    """Non-text content: an image, document, audio or video, by URL or inline bytes."""

    kind: str
    url: str = ""
    data: bytes = b""
    media_type: str = ""


class ThinkingBlock(
    msgspec.Struct, frozen=True, gc=False, omit_defaults=True, rename="camel", forbid_unknown_fields=True
):
    """One reasoning block of an assistant turn; replayed to the provider with its signature."""

    text: str = ""
    signature: str = ""
    redacted: str = ""


class ToolCall(msgspec.Struct, frozen=True, gc=False, omit_defaults=True, rename="camel"):
    """A tool call requested by an assistant turn.

    ``args`` is the argument text exactly as the model produced it, possibly cut off
    mid-stream. Nothing in golem re-parses or rewrites it; ``""`` stands for Go's nil args.
    """

    id: str
    name: str
    args: str = ""
    signature: str = ""


class Message(msgspec.Struct, frozen=True, gc=False, omit_defaults=True, rename="camel"):
    """One message of a conversation (Go ``model.Message``)."""

    role: str
    content: str = ""
    parts: list[Part] = []
    tool_calls: list[ToolCall] = []
    tool_call_id: str = ""
    tool_name: str = ""
    failed: bool = False
    thinking: list[ThinkingBlock] = []
    run_id: str = ""
    conversation_id: str = ""


def replace(message: Message, **changes: object) -> Message:
    """A copy of ``message`` with some fields changed (messages are immutable)."""
    return msgspec.structs.replace(message, **changes)


def opens_request(message: Message) -> bool:
    """Whether a message can start a request: not a tool result, not an assistant call turn."""
    if message.role == TOOL:
        return False
    return not (message.role == ASSISTANT and message.tool_calls)


def is_interrupted_reply(message: Message) -> bool:
    """Whether an assistant message is a reply that was cut off and kept as evidence."""
    return message.role == ASSISTANT and message.content.endswith(INTERRUPTED_REPLY_MARK)


def mark_interrupted(text: str) -> str:
    """The content of a cut-off reply: what arrived, then the interruption mark."""
    return f"{text}\n\n{INTERRUPTED_REPLY_MARK}" if text else INTERRUPTED_REPLY_MARK


def unmark_interrupted(content: str) -> str:
    """What arrived of a cut-off reply: its content without the interruption mark (for output
    that says "interrupted" in its own way)."""
    if content.endswith(INTERRUPTED_REPLY_MARK):
        return content[: -len(INTERRUPTED_REPLY_MARK)].rstrip("\n")
    return content
