"""The offline echo model: the no-configuration fallback."""

from __future__ import annotations

import asyncio

from golem_cli.core.messages import Message, Part
from golem_cli.core.model import (
    Model,
    ModelRequest,
    StreamDone,
    TextDelta,
)
from golem_cli.core.offline import EchoModel
from golem_cli.core.tokens import EstimatingCounter, estimate_text


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
