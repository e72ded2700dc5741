"""A scripted model for tests: plays a list of ``Step``s, one per model call, and records every
``ModelRequest`` it receives so a test can assert on exactly what was sent. A step is data:
reply text, tool calls with raw argument text, thinking, usage, an error to raise, a stream
cut after N deltas, a delay.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from golem_cli.core.errors import ModelError
from golem_cli.core.messages import ASSISTANT, Message, ThinkingBlock, ToolCall
from golem_cli.core.model import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from golem_cli.core.usage import Usage

__all__ = ["ScriptedModel", "Step", "call", "cut", "fail", "reply"]


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] if size > 0 else [text]


@dataclass(frozen=True)
class Step:
    """One scripted model call.

    ``tool_calls`` hold raw argument text, given verbatim (cut JSON allowed). ``error`` is
    raised before anything is delivered, or, with ``cut_after=N`` on a stream, after N
    deltas (default error: a dropped-stream ``ModelError``). ``delay`` is slept before every
    delta (and before a non-streamed response). ``chunk`` is the delta size in characters.
    ``finish_reason`` defaults to ``tool_call`` when there are calls, else ``stop``.
    """

    text: str = ""
    tool_calls: Sequence[ToolCall] = ()
    thinking: Sequence[ThinkingBlock] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    error: BaseException | None = None
    cut_after: int | None = None
    delay: float = 0.0
    chunk: int = 4

    def message(self) -> Message:
        return Message(
            role=ASSISTANT, content=self.text, tool_calls=list(self.tool_calls), thinking=list(self.thinking)
        )

    def response(self, model_name: str) -> ModelResponse:
        finish = self.finish_reason if self.finish_reason is not None else ("tool_call" if self.tool_calls else "stop")
        return ModelResponse(message=self.message(), usage=self.usage, finish_reason=finish, model_name=model_name)

    def events(self) -> list[StreamEvent]:
        """The deltas of this step: thinking, then text, then tool calls, in pieces."""
        events: list[StreamEvent] = []
        for index, block in enumerate(self.thinking):
            if block.redacted:
                events.append(ThinkingDelta(index=index, redacted=block.redacted))
                continue
            events.extend(ThinkingDelta(index=index, text=piece) for piece in _chunks(block.text, self.chunk))
            if block.signature:
                events.append(ThinkingDelta(index=index, signature=block.signature))
        events.extend(TextDelta(text=piece) for piece in _chunks(self.text, self.chunk) if piece)
        for index, tc in enumerate(self.tool_calls):
            pieces = _chunks(tc.args, self.chunk) or [""]
            events.append(ToolCallDelta(index=index, id=tc.id, name=tc.name, args=pieces[0]))
            events.extend(ToolCallDelta(index=index, args=piece) for piece in pieces[1:])
        return events


def reply(text: str, **kwargs: object) -> Step:
    """A plain text reply."""
    return Step(text=text, **kwargs)  # type: ignore[arg-type]


def call(name: str, args: str = "{}", id: str = "", **kwargs: object) -> Step:
    """A reply that calls one tool (``id`` defaults to ``call-<name>``)."""
    return Step(tool_calls=[ToolCall(id=id or f"call-{name}", name=name, args=args)], **kwargs)  # type: ignore[arg-type]


def fail(error: BaseException | str = "model unavailable", **kwargs: object) -> Step:
    """A call that fails before anything arrives."""
    exc = ModelError(error) if isinstance(error, str) else error
    return Step(error=exc, **kwargs)  # type: ignore[arg-type]


def cut(text: str = "", after: int = 1, tool_calls: Sequence[ToolCall] = (), **kwargs: object) -> Step:
    """A stream that dies after ``after`` deltas (raising ``error`` or a dropped-stream error)."""
    return Step(text=text, tool_calls=tool_calls, cut_after=after, **kwargs)  # type: ignore[arg-type]


ScriptItem = Step | Callable[[ModelRequest], Step]


class ScriptedModel:
    """A model that plays ``steps`` in order and records what it was asked.

    ``requests`` holds every request received (a snapshot of its messages), including calls
    that then failed. A step may also be a function of the request returning a ``Step``.
    Running out of steps raises ``ModelError`` naming the request number.
    """

    def __init__(self, steps: Sequence[ScriptItem] = (), *, name: str = "scripted:test") -> None:
        self.steps = list(steps)
        self.name = name
        self.requests: list[ModelRequest] = []

    def _next(self, request: ModelRequest) -> Step:
        snapshot = ModelRequest(messages=list(request.messages), tools=list(request.tools), settings=request.settings)
        self.requests.append(snapshot)
        index = len(self.requests) - 1
        if index >= len(self.steps):
            raise ModelError(f"scripted model: no step for request {index + 1} (script has {len(self.steps)})")
        step = self.steps[index]
        return step if isinstance(step, Step) else step(snapshot)

    async def request(self, request: ModelRequest) -> ModelResponse:
        step = self._next(request)
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.error is not None:
            raise step.error
        if step.cut_after is not None:
            raise ModelError("scripted model: stream dropped")
        return step.response(self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        step = self._next(request)
        if step.error is not None and step.cut_after is None:
            raise step.error
        for count, event in enumerate(step.events()):
            if step.cut_after is not None and count >= step.cut_after:
                break
            await asyncio.sleep(step.delay)
            yield event
        if step.cut_after is not None:
            raise step.error if step.error is not None else ModelError("scripted model: stream dropped")
        yield StreamDone(response=step.response(self.name))
