"""The Anthropic adapter against the loopback server: every feature, both modes."""

from __future__ import annotations

import msgspec
import pytest
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.core.model import TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.core.usage import Usage
from golem_cli.providers.anthropic.model import API_VERSION
from golem_cli.providers.anthropic.stream import Event, EventFolder

from tests.providers.helpers import anthropic_model, complete, prompt, stream
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec

TEXT = "Pelicans scoop fish with their pouches; they do not store them."
CALLS = [
    ToolCallSpec("toolu_01A", "get_weather", '{"city": "Lima", "note": "c\\"q\\u00e9", "n": 1.50}'),
    ToolCallSpec("toolu_01B", "get_time", '{"zone":"UTC"}'),
]


def test_stream_text(server: ProviderServer) -> None:
    server.enqueue(Scenario(reply=Reply(text=TEXT, input_tokens=30, output_tokens=12)))
    out = stream(anthropic_model(server))
    deltas = [e.text for e in out.events if isinstance(e, TextDelta)]
    assert len(deltas) > 5 and "".join(deltas) == TEXT
    response = out.done.response
    assert response.message == Message(role="assistant", content=TEXT)
    assert (response.finish_reason, response.usage) == ("stop", Usage(input_tokens=30, output_tokens=12))
    sent = server.requests[-1]
    assert sent.headers["anthropic-version"] == API_VERSION and sent.headers["x-api-key"] == "sk-test"
    assert sent.json["stream"] is True and sent.json["max_tokens"] > 0


def test_request_text(server: ProviderServer) -> None:
    response = complete(anthropic_model(server), prompt("ping"))
    assert response.message == Message(role="assistant", content="echo: ping")
    assert "stream" not in server.requests[-1].json


@pytest.mark.parametrize("streaming", [True, False])
def test_tool_use_keeps_argument_spelling(server: ProviderServer, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(text="Let me look.", tool_calls=CALLS)))
    expected = [ToolCall(id=c.id, name=c.name, args=c.args) for c in CALLS]
    if streaming:
        out = stream(anthropic_model(server))
        heads = [(e.id, e.name) for e in out.events if isinstance(e, ToolCallDelta) and e.id]
        assert heads == [(c.id, c.name) for c in CALLS]
        assert out.accumulator.tool_calls() == expected
        response = out.done.response
    else:
        response = complete(anthropic_model(server))
    assert response.message.tool_calls == expected
    assert (response.message.content, response.finish_reason) == ("Let me look.", "tool_call")


@pytest.mark.parametrize("streaming", [True, False])
def test_thinking_with_signature(server: ProviderServer, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(text="Two.", thinking="Count the names: one, two.", signature="EuYDsig==")))
    if streaming:
        out = stream(anthropic_model(server))
        assert "".join(e.text for e in out.events if isinstance(e, ThinkingDelta)) == "Count the names: one, two."
        assert out.accumulator.thinking() == [ThinkingBlock(text="Count the names: one, two.", signature="EuYDsig==")]
        response = out.done.response
    else:
        response = complete(anthropic_model(server))
    assert response.message.thinking == [ThinkingBlock(text="Count the names: one, two.", signature="EuYDsig==")]


@pytest.mark.parametrize("streaming", [True, False])
def test_redacted_thinking(server: ProviderServer, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(text="Hi.", redacted="EqkECkYIBxgCKkA8")))
    response = stream(anthropic_model(server)).done.response if streaming else complete(anthropic_model(server))
    assert response.message.thinking == [ThinkingBlock(redacted="EqkECkYIBxgCKkA8")]


@pytest.mark.parametrize("streaming", [True, False])
def test_usage_with_cache_tokens(server: ProviderServer, streaming: bool) -> None:
    """Anthropic counts the cached input apart from ``input_tokens`` (the server sends 5 + 8 +
    7); golem's input is all of it, and the one-hour writes are a part of the writes."""
    reply = Reply(text="ok", input_tokens=20, output_tokens=4, cache_read_tokens=8, cache_write_tokens=7,
                  cache_write_1h_tokens=3)  # fmt: skip
    server.enqueue(Scenario(reply=reply))
    response = stream(anthropic_model(server)).done.response if streaming else complete(anthropic_model(server))
    assert response.usage == Usage(
        input_tokens=20, output_tokens=4, cache_read_tokens=8, cache_write_tokens=7, cache_write_1h_tokens=3
    )
    assert response.usage.uncached_input_tokens == 5 and response.usage.cache_share == 0.4


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize(
    ("wire", "golem"),
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "tool_call"),
     ("refusal", "content_filter"), ("pause_turn", "other")],
)  # fmt: skip
def test_stop_reasons(server: ProviderServer, streaming: bool, wire: str, golem: str) -> None:
    server.enqueue(Scenario(reply=Reply(text="x", finish=wire)))
    response = stream(anthropic_model(server)).done.response if streaming else complete(anthropic_model(server))
    assert response.finish_reason == golem


def test_thinking_and_tool_results_replay_through_strict_validation(server: ProviderServer) -> None:
    history = [
        Message(role="user", content="version?"),
        Message(
            role="assistant",
            thinking=[ThinkingBlock(text="Call the tool.", signature="EoQDsig"), ThinkingBlock(redacted="RW5j")],
            tool_calls=[ToolCall(id="toolu_1", name="fixed_version", args=""), ToolCall(id="toolu_2", name="other", args='{"a":1}')],
        ),
        Message(role="tool", content="0.32a0", tool_call_id="toolu_1"),
        Message(role="tool", content="boom", tool_call_id="toolu_2", failed=True),
    ]
    response = complete(anthropic_model(server), prompt("joke please", history))
    assert response.message.content == "echo: joke please"
    turns = server.requests[-1].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0] == {"type": "thinking", "thinking": "Call the tool.", "signature": "EoQDsig"}
    assert turns[2]["content"][1]["is_error"] is True and turns[2]["content"][2] == {"type": "text", "text": "joke please", "cache_control": {"type": "ephemeral"}}


def test_result_without_its_call_gets_the_real_400(server: ProviderServer) -> None:
    history = [Message(role="user", content="hi"), Message(role="assistant", content="hello")]
    error = complete(anthropic_model(server), prompt("x", [*history, Message(role="tool", content="late", tool_call_id="toolu_9")]))
    assert error.status == 400 and not error.retryable
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9" in str(error)


def test_two_text_blocks_join_with_a_newline_in_both_modes() -> None:
    folder = EventFolder("m")
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "one"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}}},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": "two"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
    ]
    typed = [msgspec.json.decode(msgspec.json.encode(event), type=Event) for event in events]
    streamed = "".join(e.text for event in typed for e in folder.feed(event) if isinstance(e, TextDelta))
    response = folder.response()
    assert streamed == response.message.content == "one\ntwo"
    assert response.message.tool_calls == [ToolCall(id="t", name="n", args="{}")]


@pytest.mark.parametrize(
    ("data", "stored", "sent"),
    [
        (b"\x89PNG\r\n\x1a\nrest", "", "image/png"),
        (b"\xff\xd8\xff\xe0rest", "application/octet-stream", "image/jpeg"),
        (b"RIFF\x00\x00\x00\x00WEBPrest", "", "image/webp"),
        (b"GIF89arest", "image/gif", "image/gif"),
        (b"\x00", "application/pdf", None),  # found by test_generated_histories: a body the API refuses
        (b"", "image/png", None),  # neither bytes nor a URL
    ],
)
def test_an_inline_image_goes_with_a_type_the_api_takes_or_not_at_all(data: bytes, stored: str, sent: str | None) -> None:
    from golem_cli.core.errors import ModelError
    from golem_cli.core.messages import Part
    from golem_cli.core.model import ModelRequest
    from golem_cli.providers.anthropic import wire

    from tests.providerserver.sdk import sdk_problem

    message = Message(role="user", content="see", parts=[Part(kind="image", data=data, media_type=stored)])
    request = ModelRequest(messages=[message])
    if sent is None:
        with pytest.raises(ModelError, match="cannot carry the image part 0"):
            wire.request_body("claude-sonnet-4-5", 1024, request, stream=True)
        return
    body = msgspec.json.decode(wire.request_body("claude-sonnet-4-5", 1024, request, stream=True))
    assert body["messages"][0]["content"][1]["source"]["media_type"] == sent
    assert sdk_problem("anthropic", body) is None
