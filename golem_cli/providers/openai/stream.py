"""Folding streamed chat-completion chunks into golem's stream events and the final response.

Chunks carry a text delta, a reasoning delta, or pieces of tool calls told apart by ``index``
(``id`` and name only on a call's first piece; arguments split anywhere, mid-JSON). With
``stream_options.include_usage`` the usage arrives in a last chunk whose ``choices`` is empty;
some servers (DeepSeek) put it on the finishing chunk instead. Both are handled.
"""

from __future__ import annotations

from collections.abc import Iterator

from golem_cli.core.messages import ASSISTANT, Message, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelResponse, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.core.usage import Usage
from golem_cli.providers._wire import finish_reason
from golem_cli.providers.openai.wire import (
    FINISH_REASONS,
    CallPiece,
    Completion,
    Function,
    WireMessage,
    arguments_text,
    reasoning_of,
    text_of,
    usage,
)


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

    def feed(self, chunk: Completion) -> Iterator[StreamEvent]:
        """The events one chunk carries, in order: reasoning, text, tool-call pieces."""
        if chunk.usage:
            self.usage = usage(chunk.usage)
        if chunk.model:
            self.model = str(chunk.model)
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        delta = choice.delta or WireMessage()
        reasoning = reasoning_of(delta)
        if reasoning:
            self._reasoning.append(reasoning)
            yield ThinkingDelta(index=0, text=reasoning)
        text = text_of(delta.content)
        if text:
            self._text.append(text)
            yield TextDelta(text=text)
        if delta.refusal:  # shown and kept like text, marked as a refusal
            self.refusal = True
            self._text.append(delta.refusal)
            yield TextDelta(text=delta.refusal)
        for piece in delta.tool_calls or ():
            yield self._call_piece(piece)
        if choice.finish_reason:
            self.stop_reason = choice.finish_reason
            self.finish = finish_reason(self.stop_reason, FINISH_REASONS)

    def _call_piece(self, piece: CallPiece) -> ToolCallDelta:
        function = piece.function or Function()
        call_id = piece.id or ""
        name = function.name or ""
        index = piece.index
        if index is None:  # servers that omit it: a new id starts a new call
            known = call_id and any(call_id == head for head, _, _ in self._calls.values())
            index = self._last_index + 1 if call_id and not known else max(self._last_index, 0)
        self._last_index = max(self._last_index, index)
        args = arguments_text(function.arguments)
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
