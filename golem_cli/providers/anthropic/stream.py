"""Folding Anthropic stream events into golem's stream events and the final response.

A stream is ``message_start``, then per content block ``content_block_start`` /
``content_block_delta``… / ``content_block_stop``, then ``message_delta`` (stop reason, output
usage) and ``message_stop``; ``ping`` may come anywhere. Deltas carry text, thinking text, a
thinking signature, or ``partial_json`` pieces of a tool call's input. Redacted thinking
arrives whole in its ``content_block_start``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
from msgspec import Struct, field

from golem_cli.core.codec.toolargs import wire_args
from golem_cli.core.messages import ASSISTANT, Message, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelResponse, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.providers._wire import REFUSED_WITHOUT_TEXT, finish_reason
from golem_cli.providers.anthropic.wire import FINISH_REASONS, usage


class _Block(Struct, kw_only=True):
    type: str
    pieces: list[str] = field(default_factory=list)  # text, thinking text, or partial_json
    signature: str = ""
    data: str = ""
    id: str = ""
    name: str = ""
    start_input: str = ""


class Delta(msgspec.Struct):
    """A ``content_block_delta``'s or ``message_delta``'s ``delta``."""

    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    partial_json: str | None = None
    stop_reason: str | None = None


class Block(msgspec.Struct):
    """A ``content_block_start``'s ``content_block``; ``input`` raw, its spelling kept."""

    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None
    id: str | None = None
    name: str | None = None
    input: msgspec.Raw = msgspec.Raw(b"")


class Started(msgspec.Struct):
    model: Any = None
    usage: Any = None


class Event(msgspec.Struct):
    """One stream event, typed: a field of the wrong type (a tool ID that is a number) fails
    the decode, naming the field, instead of reaching a Message."""

    type: str | None = None
    index: int = 0
    content_block: Block | None = None
    delta: Delta | None = None
    message: Started | None = None
    usage: Any = None
    error: Any = None


event_decoder = msgspec.json.Decoder(Event)


class EventFolder:
    """Turns stream events into golem events and remembers everything for ``response()``."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.finish = ""
        self.stop_reason = ""
        self.stopped = False
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, _Block] = {}

    def feed(self, event: Event) -> Iterator[StreamEvent]:
        """The golem events one Anthropic event carries."""
        kind = event.type
        if kind == "content_block_delta":
            yield from self._delta(event.index, event.delta or Delta())
        elif kind == "content_block_start":
            yield from self._start(event.index, event.content_block or Block())
        elif kind == "message_start":
            message = event.message or Started()
            self.model = str(message.model or self.model)
            self._add_usage(message.usage)
        elif kind == "message_delta":
            stop = (event.delta or Delta()).stop_reason
            if stop:
                self.stop_reason = stop
                self.finish = finish_reason(stop, FINISH_REASONS)
            self._add_usage(event.usage)
        elif kind == "message_stop":
            self.stopped = True

    def _add_usage(self, raw: object) -> None:
        # message_delta repeats or updates the counts of message_start; nulls keep the old value.
        if isinstance(raw, dict):
            self._usage.update({key: value for key, value in raw.items() if value is not None})

    def _start(self, index: int, block: Block) -> Iterator[StreamEvent]:
        kind = block.type or ""
        state = self._blocks[index] = _Block(type=kind)
        if kind == "text":
            if any(b.type == "text" for i, b in self._blocks.items() if i != index):
                yield TextDelta(text="\n")  # text blocks join with a newline, as in a non-streamed reply
            yield from self._delta(index, Delta(type="text_delta", text=block.text))
        elif kind == "thinking":
            yield from self._delta(index, Delta(type="thinking_delta", thinking=block.thinking))
            yield from self._delta(index, Delta(type="signature_delta", signature=block.signature))
        elif kind == "redacted_thinking":
            state.data = block.data or ""
            yield ThinkingDelta(index=index, redacted=state.data)
        elif kind == "tool_use":
            state.id, state.name = block.id or "", block.name or ""
            raw = bytes(block.input).strip()
            if raw and raw not in (b"{}", b"null"):
                state.start_input = raw.decode("utf-8", "replace")
            yield ToolCallDelta(index=index, id=state.id, name=state.name)

    def _delta(self, index: int, delta: Delta) -> Iterator[StreamEvent]:
        state = self._blocks.get(index)
        kind = delta.type or ""
        if state is None:  # a delta without its start: keep it anyway, typed by the delta
            state = self._blocks[index] = _Block(type=_BLOCK_OF_DELTA.get(kind, ""))
        if kind == "text_delta":
            if delta.text:
                state.pieces.append(delta.text)
                yield TextDelta(text=delta.text)
        elif kind == "input_json_delta":
            if delta.partial_json:
                state.pieces.append(delta.partial_json)
                yield ToolCallDelta(index=index, args=delta.partial_json)
        elif kind == "thinking_delta":
            if delta.thinking:
                state.pieces.append(delta.thinking)
                yield ThinkingDelta(index=index, text=delta.thinking)
        elif kind == "signature_delta":
            if delta.signature:
                state.signature = delta.signature
                yield ThinkingDelta(index=index, signature=delta.signature)

    def response(self) -> ModelResponse:
        """The complete reply, once the stream has ended properly."""
        texts: list[str] = []
        thinking: list[ThinkingBlock] = []
        calls: list[ToolCall] = []
        for _, block in sorted(self._blocks.items()):
            joined = "".join(block.pieces)
            if block.type == "text":
                texts.append(joined)
            elif block.type == "thinking":
                thinking.append(ThinkingBlock(text=joined, signature=block.signature))
            elif block.type == "redacted_thinking":
                thinking.append(ThinkingBlock(redacted=block.data))
            elif block.type == "tool_use":
                # spec §9: the argument wrapper applies to Anthropic input; no pieces means {}.
                calls.append(ToolCall(id=block.id, name=block.name, args=wire_args(joined or block.start_input)))
        refusal = self.stop_reason == "refusal"
        content = "\n".join(texts) or (REFUSED_WITHOUT_TEXT if refusal else "")
        message = Message(role=ASSISTANT, content=content, tool_calls=calls, thinking=thinking)
        return ModelResponse(
            message=message, usage=usage(self._usage), finish_reason=self.finish, model_name=self.model,
            stop_reason=self.stop_reason, refusal=refusal,
        )  # fmt: skip


_BLOCK_OF_DELTA = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
    "input_json_delta": "tool_use",
}
