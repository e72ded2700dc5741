"""Folding Anthropic stream events into golem's stream events and the final response.

A stream is ``message_start``, then per content block ``content_block_start`` /
``content_block_delta``… / ``content_block_stop``, then ``message_delta`` (stop reason, output
usage) and ``message_stop``; ``ping`` may come anywhere. Deltas carry text, thinking text, a
thinking signature, or ``partial_json`` pieces of a tool call's input. Redacted thinking
arrives whole in its ``content_block_start``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from golem_cli.core.messages import ASSISTANT, Message, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelResponse, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.core.toolargs import wire_args
from golem_cli.providers._wire import REFUSED_WITHOUT_TEXT, finish_reason
from golem_cli.providers.anthropic.wire import FINISH_REASONS, usage


@dataclass(slots=True)
class _Block:
    type: str
    pieces: list[str] = field(default_factory=list)  # text, thinking text, or partial_json
    signature: str = ""
    data: str = ""
    id: str = ""
    name: str = ""
    start_input: str = ""


class EventFolder:
    """Turns stream events into golem events and remembers everything for ``response()``."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.finish = ""
        self.stop_reason = ""
        self.stopped = False
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, _Block] = {}

    def feed(self, payload: dict[str, Any]) -> Iterator[StreamEvent]:
        """The golem events one Anthropic event carries."""
        kind = payload.get("type")
        if kind == "content_block_delta":
            yield from self._delta(payload.get("index", 0), payload.get("delta") or {})
        elif kind == "content_block_start":
            yield from self._start(payload.get("index", 0), payload.get("content_block") or {})
        elif kind == "message_start":
            message = payload.get("message") or {}
            self.model = str(message.get("model") or self.model)
            self._add_usage(message.get("usage"))
        elif kind == "message_delta":
            stop = (payload.get("delta") or {}).get("stop_reason")
            if stop:
                self.stop_reason = str(stop)
                self.finish = finish_reason(stop, FINISH_REASONS)
            self._add_usage(payload.get("usage"))
        elif kind == "message_stop":
            self.stopped = True

    def _add_usage(self, raw: object) -> None:
        # message_delta repeats or updates the counts of message_start; nulls keep the old value.
        if isinstance(raw, dict):
            self._usage.update({key: value for key, value in raw.items() if value is not None})

    def _start(self, index: int, block: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = str(block.get("type") or "")
        state = self._blocks[index] = _Block(kind)
        if kind == "text":
            if any(b.type == "text" for i, b in self._blocks.items() if i != index):
                yield TextDelta("\n")  # text blocks join with a newline, as in a non-streamed reply
            yield from self._delta(index, {"type": "text_delta", "text": block.get("text") or ""})
        elif kind == "thinking":
            yield from self._delta(index, {"type": "thinking_delta", "thinking": block.get("thinking") or ""})
            yield from self._delta(index, {"type": "signature_delta", "signature": block.get("signature") or ""})
        elif kind == "redacted_thinking":
            state.data = str(block.get("data") or "")
            yield ThinkingDelta(index=index, redacted=state.data)
        elif kind == "tool_use":
            state.id, state.name = str(block.get("id") or ""), str(block.get("name") or "")
            if block.get("input"):
                state.start_input = msgspec.json.encode(block["input"]).decode()
            yield ToolCallDelta(index=index, id=state.id, name=state.name)

    def _delta(self, index: int, delta: dict[str, Any]) -> Iterator[StreamEvent]:
        state = self._blocks.get(index)
        if state is None:  # a delta without its start: keep it anyway, typed by the delta
            state = self._blocks[index] = _Block(_BLOCK_OF_DELTA.get(str(delta.get("type")), ""))
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text") or ""
            if text:
                state.pieces.append(text)
                yield TextDelta(text)
        elif kind == "input_json_delta":
            piece = delta.get("partial_json") or ""
            if piece:
                state.pieces.append(piece)
                yield ToolCallDelta(index=index, args=piece)
        elif kind == "thinking_delta":
            text = delta.get("thinking") or ""
            if text:
                state.pieces.append(text)
                yield ThinkingDelta(index=index, text=text)
        elif kind == "signature_delta":
            signature = delta.get("signature") or ""
            if signature:
                state.signature = signature
                yield ThinkingDelta(index=index, signature=signature)

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
