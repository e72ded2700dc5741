"""The offline models: the echo fallback and the scripted test model."""

from __future__ import annotations

import asyncio
import time

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall
from golem_cli.core.model import (
    Model,
    ModelRequest,
    ResponseAccumulator,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from golem_cli.core.offline import EchoModel, ScriptedModel, Step, call, cut, fail, reply
from golem_cli.core.tokens import EstimatingCounter, counter_for, estimate_text
from golem_cli.core.usage import Usage


def run(coro):
    return asyncio.run(coro)


async def collect(stream):
    return [event async for event in stream]


def request_of(*contents: str, system: str = "") -> ModelRequest:
    messages = [Message(role="system", content=system)] if system else []
    roles = ["user", "assistant"]
    messages += [Message(role=roles[i % 2], content=c) for i, c in enumerate(contents)]
    return ModelRequest(messages=messages)


# --- echo ---------------------------------------------------------------------------------


def test_echo_is_a_model_and_says_what_it_is():
    model = EchoModel()
    assert isinstance(model, Model)
    assert model.name == "offline:echo"
    response = run(model.request(request_of("hello there")))
    text = response.message.content
    assert text.startswith("You said: hello there\n\n")
    assert "offline echo model" in text and "not a language model" in text
    assert "1 message in this request" in text
    assert response.finish_reason == "stop" and response.message.role == "assistant"


def test_echo_reply_is_deterministic_and_counts_messages():
    model = EchoModel()
    req = request_of("one", "two", "three", system="be brief")
    first = run(model.request(req)).message.content
    assert run(model.request(req)).message.content == first
    assert "You said: three" in first and "4 messages" in first


def test_echo_handles_empty_prompts_and_attachments():
    model = EchoModel()
    assert run(model.request(request_of(""))).message.content.startswith("You said nothing.")
    parts = [Part(kind="image", url="https://x/a.png"), Part(kind="document", url="https://x/b.pdf")]
    req = ModelRequest(messages=[Message(role="user", content="look", parts=parts)])
    assert "(with 2 attachments: image, document)" in run(model.request(req)).message.content


def test_echo_streams_several_deltas_that_add_up_to_the_reply():
    model = EchoModel()
    req = request_of("stream me please")
    events = run(collect(model.stream(req)))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3
    assert isinstance(events[-1], StreamDone)
    assert "".join(d.text for d in deltas) == events[-1].response.message.content
    assert events[-1].response == run(model.request(req))


def test_echo_usage_is_the_offline_estimate():
    model = EchoModel()
    req = request_of("count my tokens")
    response = run(model.request(req))
    assert response.usage.input_tokens == EstimatingCounter().count(req.messages) > 0
    assert response.usage.output_tokens == estimate_text(response.message.content)
    assert counter_for(model).count(req.messages) == response.usage.input_tokens


# --- scripted -------------------------------------------------------------------------------


def test_scripted_plays_steps_in_order_and_records_requests():
    model = ScriptedModel([reply("first"), reply("second", usage=Usage(3, 4))])
    messages = [Message(role="user", content="hi")]
    req = ModelRequest(messages=messages)
    assert run(model.request(req)).message.content == "first"
    messages.append(Message(role="user", content="mutated after the call"))
    second = run(model.request(ModelRequest(messages=messages)))
    assert second.usage == Usage(3, 4) and second.finish_reason == "stop"
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
    assert got == [TextDelta("abcd"), TextDelta("efgh")]


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
    assert reply("x", usage=Usage(1, 2)).usage == Usage(1, 2)
    assert isinstance(fail().error, ModelError)
