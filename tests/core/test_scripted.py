"""The scripted test model (tests/scripted.py): what the other tests build their runs on."""

from __future__ import annotations

import asyncio
import time

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.core.model import (
    ModelRequest,
    ResponseAccumulator,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from golem_cli.core.usage import Usage

from tests.scripted import ScriptedModel, Step, call, cut, fail, reply


def run(coro):
    return asyncio.run(coro)


async def collect(stream):
    return [event async for event in stream]


def request_of(*contents: str, system: str = "") -> ModelRequest:
    messages = [Message(role="system", content=system)] if system else []
    roles = ["user", "assistant"]
    messages += [Message(role=roles[i % 2], content=c) for i, c in enumerate(contents)]
    return ModelRequest(messages=messages)


def test_scripted_plays_steps_in_order_and_records_requests():
    model = ScriptedModel([reply("first"), reply("second", usage=Usage(input_tokens=3, output_tokens=4))])
    messages = [Message(role="user", content="hi")]
    req = ModelRequest(messages=messages)
    assert run(model.request(req)).message.content == "first"
    messages.append(Message(role="user", content="mutated after the call"))
    second = run(model.request(ModelRequest(messages=messages)))
    assert second.usage == Usage(input_tokens=3, output_tokens=4) and second.finish_reason == "stop"
    assert [len(r.messages) for r in model.requests] == [1, 2]  # snapshots, not aliases
    with pytest.raises(ModelError, match="no step for request 3"):
        run(model.request(req))
    assert len(model.requests) == 3


def test_scripted_stream_order_thinking_text_then_calls():
    step = Step(
        text="hello world",
        thinking=[ThinkingBlock(text="hmm", signature="sig"), ThinkingBlock(redacted="R")],
        tool_calls=[ToolCall(id="c1", name="roll", args='{"sides": 6}')],
        chunk=5,
    )
    events = run(collect(ScriptedModel([step]).stream(request_of("go"))))
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "ThinkingDelta", "ThinkingDelta", "ThinkingDelta",
        "TextDelta", "TextDelta", "TextDelta",
        "ToolCallDelta", "ToolCallDelta", "ToolCallDelta",
        "StreamDone",
    ]  # fmt: skip
    assert events[1] == ThinkingDelta(index=0, signature="sig")
    assert events[2] == ThinkingDelta(index=1, redacted="R")
    assert events[6] == ToolCallDelta(index=0, id="c1", name="roll", args='{"sid')
    acc = ResponseAccumulator()
    for event in events[:-1]:
        acc.add(event)
    assert acc.text == "hello world"
    assert acc.tool_calls() == step.message().tool_calls
    assert acc.thinking() == list(step.thinking)
    assert events[-1].response.finish_reason == "tool_call"


def test_scripted_cut_stream_delivers_n_deltas_then_raises():
    model = ScriptedModel([cut("abcdefghij", after=2, tool_calls=[ToolCall(id="c", name="f", args="{}")])])
    got = []

    async def consume():
        async for event in model.stream(request_of("go")):
            got.append(event)

    with pytest.raises(ModelError, match="stream dropped"):
        run(consume())
    assert got == [TextDelta(text="abcd"), TextDelta(text="efgh")]


def test_scripted_cut_with_a_custom_error_and_a_failed_step():
    boom = ModelError("connection reset", status=502)
    model = ScriptedModel([cut("abcdef", after=1, error=boom), fail("overloaded")])
    with pytest.raises(ModelError) as info:
        run(collect(model.stream(request_of("go"))))
    assert info.value is boom
    with pytest.raises(ModelError, match="overloaded"):
        run(collect(model.stream(request_of("go"))))
    assert len(model.requests) == 2


def test_scripted_non_streamed_cut_and_error_raise():
    model = ScriptedModel([cut("abc"), fail(ModelError("down", retryable=True))])
    with pytest.raises(ModelError, match="stream dropped"):
        run(model.request(request_of("x")))
    with pytest.raises(ModelError, match="down") as info:
        run(model.request(request_of("x")))
    assert info.value.retryable


def test_scripted_delay_and_callable_steps():
    model = ScriptedModel([Step(text="ab", chunk=1, delay=0.05), lambda req: reply(f"saw {len(req.messages)}")])
    start = time.monotonic()
    run(collect(model.stream(request_of("x"))))
    assert time.monotonic() - start >= 0.1
    assert run(model.request(request_of("a", "b", "c"))).message.content == "saw 3"


def test_helpers_build_steps():
    step = call("roll", '{"sides":', id="c7")
    assert step.tool_calls == [ToolCall(id="c7", name="roll", args='{"sides":')]
    assert call("f").tool_calls[0].id == "call-f"
    assert reply("x", usage=Usage(input_tokens=1, output_tokens=2)).usage == Usage(input_tokens=1, output_tokens=2)
    assert isinstance(fail().error, ModelError)
