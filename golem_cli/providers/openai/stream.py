"""Folding streamed chat-completion chunks into golem's stream events and the final response.

Chunks carry a text delta, a reasoning delta, or pieces of tool calls told apart by ``index``
(``id`` and name only on a call's first piece; arguments split anywhere, mid-JSON). With
``stream_options.include_usage`` the usage arrives in a last chunk whose ``choices`` is empty;
some servers (DeepSeek) put it on the finishing chunk instead. Both are handled.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from golem_cli.core.messages import ASSISTANT, Message, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelResponse, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.core.usage import Usage
from golem_cli.providers._wire import finish_reason
from golem_cli.providers.openai.wire import FINISH_REASONS, arguments_text, reasoning_of, usage


class ChunkFolder:
    """Turns chunks into events as they arrive and remembers everything for ``response()``."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.finish = ""
        self.stop_reason = ""
        self.refusal = False
        self.usage = Usage()
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, tuple[str, str, list[str]]] = {}
        self._last_index = -1

    def feed(self, chunk: dict[str, Any]) -> Iterator[StreamEvent]:
        """The events one chunk carries, in order: reasoning, text, tool-call pieces."""
        if chunk.get("usage"):
            self.usage = usage(chunk["usage"])
        if chunk.get("model"):
            self.model = str(chunk["model"])
        choices = chunk.get("choices")
        if not choices:
            return
        choice = choices[0]
        delta = choice.get("delta") or {}
        reasoning = reasoning_of(delta)
        if reasoning:
            self._reasoning.append(reasoning)
            yield ThinkingDelta(index=0, text=reasoning)
        text = delta.get("content")
        if isinstance(text, str) and text:
            self._text.append(text)
            yield TextDelta(text)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:  # shown and kept like text, marked as a refusal
            self.refusal = True
            self._text.append(refusal)
            yield TextDelta(refusal)
        for piece in delta.get("tool_calls") or ():
            yield self._call_piece(piece)
        if choice.get("finish_reason"):
            self.stop_reason = str(choice["finish_reason"])
            self.finish = finish_reason(self.stop_reason, FINISH_REASONS)

    def _call_piece(self, piece: dict[str, Any]) -> ToolCallDelta:
        function = piece.get("function") or {}
        call_id = piece.get("id") or ""
        name = function.get("name") or ""
        index = piece.get("index")
        if not isinstance(index, int):  # servers that omit it: a new id starts a new call
            known = call_id and any(call_id == head for head, _, _ in self._calls.values())
            index = self._last_index + 1 if call_id and not known else max(self._last_index, 0)
        self._last_index = max(self._last_index, index)
        args = arguments_text(function.get("arguments"))
        head_id, head_name, pieces = self._calls.get(index, ("", "", []))
        self._calls[index] = (head_id or call_id, head_name or name, pieces)
        pieces.append(args)
        return ToolCallDelta(index=index, id=call_id, name=name, args=args)

    def response(self) -> ModelResponse:
        """The complete reply, once the stream has ended properly."""
        reasoning = "".join(self._reasoning)
        calls = [ToolCall(id=i, name=n, args="".join(p)) for _, (i, n, p) in sorted(self._calls.items())]
        message = Message(
            role=ASSISTANT,
            content="".join(self._text),
            tool_calls=calls,
            thinking=[ThinkingBlock(text=reasoning)] if reasoning else [],
        )
        return ModelResponse(
            message=message, usage=self.usage, finish_reason=self.finish, model_name=self.model,
            stop_reason=self.stop_reason, refusal=self.refusal,
        )  # fmt: skip
