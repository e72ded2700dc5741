"""The model port: what the runtime asks of a model, and what a model answers.

Providers (OpenAI-compatible, Anthropic) and the offline models implement ``Model``. A request
carries provider-neutral messages; a response is one assistant ``Message`` plus usage. Streams
yield small events; the runtime folds them with ``ResponseAccumulator`` so that a stream cut
off by an error or by Ctrl-C still leaves the text and half-received tool calls that arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from msgspec import Struct, field

from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.core.usage import Usage

__all__ = [
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ResponseAccumulator",
    "StreamDone",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolDefinition",
]


class ToolDefinition(Struct, frozen=True, kw_only=True):
    """A tool as the model sees it: a name, a description, a JSON schema for the arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


class ModelSettings(Struct, frozen=True, kw_only=True):
    """Per-request knobs; ``None`` leaves the provider's default. Which ones a provider takes,
    and how they are spelled on its wire, is the adapter's business."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None  # Anthropic extended thinking: tokens it may think for


class ModelRequest(Struct, frozen=True, kw_only=True):
    """One model call: the instructions message (if any) first, then the repaired history and
    the new prompt, with no system messages from history (spec §8)."""

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    settings: ModelSettings = ModelSettings()
    #: Names the cache a provider may route this request to: the same for every request of
    #: a conversation and its forks (OpenAI's ``prompt_cache_key``); "" sends none.
    cache_key: str = ""


class ModelResponse(Struct, frozen=True, kw_only=True):
    """What one model call produced: an assistant message without identity stamps."""

    message: Message
    usage: Usage = Usage()
    finish_reason: str = ""  # stop, length, tool_call, content_filter, other, or "" (unknown)
    model_name: str = ""
    #: The provider's own word for why the reply ended (``max_tokens``, ``length``, ``refusal``),
    #: for people and scripts; ``finish_reason`` is the same in golem's vocabulary.
    stop_reason: str = ""
    #: The model declined to answer: ``message.content`` holds its refusal text.
    refusal: bool = False


# --- stream events -------------------------------------------------------------------------


class TextDelta(Struct, frozen=True, kw_only=True):
    text: str


class ThinkingDelta(Struct, frozen=True, kw_only=True):
    """A piece of a reasoning block; ``index`` tells blocks apart, ``signature`` and
    ``redacted`` arrive whole."""

    index: int = 0
    text: str = ""
    signature: str = ""
    redacted: str = ""


class ToolCallDelta(Struct, frozen=True, kw_only=True):
    """A piece of a tool call; ``index`` tells parallel calls apart. ``id`` and ``name`` arrive
    with the first piece, ``args`` text in fragments that may split JSON anywhere."""

    index: int
    id: str = ""
    name: str = ""
    args: str = ""


class StreamDone(Struct, frozen=True, kw_only=True):
    """The last event of a stream: the complete response as the provider reported it."""

    response: ModelResponse


StreamEvent = TextDelta | ThinkingDelta | ToolCallDelta | StreamDone


@runtime_checkable
class Model(Protocol):
    """A model golem can talk to. ``name`` is ``provider:model`` (``openai:gpt-4o-mini``)."""

    name: str

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One non-streaming call. Raises ``ModelError`` on failure."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One streaming call: deltas as they arrive, then exactly one ``StreamDone``.

        Raises ``ModelError`` when the call fails or the stream dies; the caller keeps what
        arrived through its own ``ResponseAccumulator``.
        """
        ...


class ResponseAccumulator:
    """Folds stream events into the assistant message received so far.

    Used by the runtime for every stream, so evidence survives a failure at any byte.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, list[str]] = {}
        self._call_heads: dict[int, tuple[str, str]] = {}
        self._thinking: dict[int, list[str]] = {}
        self._thinking_sig: dict[int, str] = {}
        self._thinking_redacted: dict[int, str] = {}
        self.done: ModelResponse | None = None

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ToolCallDelta):
            head_id, head_name = self._call_heads.get(event.index, ("", ""))
            self._call_heads[event.index] = (head_id or event.id, head_name or event.name)
            self._calls.setdefault(event.index, []).append(event.args)
        elif isinstance(event, ThinkingDelta):
            self._thinking.setdefault(event.index, []).append(event.text)
            if event.signature:
                self._thinking_sig[event.index] = event.signature
            if event.redacted:
                self._thinking_redacted[event.index] = event.redacted
        elif isinstance(event, StreamDone):
            self.done = event.response

    @property
    def text(self) -> str:
        return "".join(self._text)

    def tool_calls(self) -> list[ToolCall]:
        calls = []
        for index in sorted(self._calls):
            call_id, name = self._call_heads[index]
            calls.append(ToolCall(id=call_id, name=name, args="".join(self._calls[index])))
        return calls

    def thinking(self) -> list[ThinkingBlock]:
        blocks = []
        for index in sorted(set(self._thinking) | set(self._thinking_redacted)):
            redacted = self._thinking_redacted.get(index, "")
            if redacted:
                blocks.append(ThinkingBlock(redacted=redacted))
            else:
                text = "".join(self._thinking.get(index, []))
                blocks.append(ThinkingBlock(text=text, signature=self._thinking_sig.get(index, "")))
        return blocks

    def is_empty(self) -> bool:
        return not (self.text or self._calls or self._thinking or self._thinking_redacted)
