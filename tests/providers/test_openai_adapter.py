"""The OpenAI-compatible adapter against the loopback server: every feature, both modes."""

from __future__ import annotations

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelRequest, TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.core.usage import Usage
from golem_cli.providers.openai.model import OpenAIModel

from tests.providers.helpers import complete, openai_model, prompt, run, stream
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec

TEXT = "The quick brown fox jumps over the lazy dog, twice."
CALLS = [
    ToolCallSpec("call_a", "get_weather", '{"city": "Mexico City", "unit": "c\\"elsius\\u00e9", "n": 1.50}'),
    ToolCallSpec("call_b", "get_time", "{}"),
]


def test_stream_text_arrives_in_pieces_then_one_done(server: ProviderServer) -> None:
    server.enqueue(Scenario(reply=Reply(text=TEXT, input_tokens=21, output_tokens=9)))
    out = stream(openai_model(server))
    deltas = [e.text for e in out.events if isinstance(e, TextDelta)]
    assert len(deltas) > 5 and "".join(deltas) == TEXT
    response = out.done.response
    assert response.message == Message(role="assistant", content=TEXT)
    assert (response.finish_reason, response.usage) == ("stop", Usage(input_tokens=21, output_tokens=9))
    sent = server.requests[-1]
    assert sent.json["stream"] is True and sent.json["stream_options"] == {"include_usage": True}
    assert sent.headers["authorization"] == "Bearer sk-test"


def test_request_text(server: ProviderServer) -> None:
    response = complete(openai_model(server), prompt("ping"))
    assert response.message == Message(role="assistant", content="echo: ping")
    assert response.finish_reason == "stop" and response.model_name == "gpt-test"
    assert "stream" not in server.requests[-1].json


def test_parallel_tool_calls_are_assembled_from_pieces(server: ProviderServer) -> None:
    server.enqueue(Scenario(reply=Reply(text="Checking.", tool_calls=CALLS)))
    out = stream(openai_model(server))
    pieces = [e for e in out.events if isinstance(e, ToolCallDelta)]
    assert len([p for p in pieces if p.index == 0]) > 3  # arguments split mid-JSON
    assert [(p.id, p.name) for p in pieces if p.id] == [("call_a", "get_weather"), ("call_b", "get_time")]
    expected = [ToolCall(id=c.id, name=c.name, args=c.args) for c in CALLS]
    assert out.done.response.message.tool_calls == expected
    assert out.accumulator.tool_calls() == expected
    assert out.done.response.finish_reason == "tool_call"


def test_request_tool_calls(server: ProviderServer) -> None:
    server.enqueue(Scenario(reply=Reply(tool_calls=CALLS)))
    response = complete(openai_model(server))
    assert response.message.tool_calls == [ToolCall(id=c.id, name=c.name, args=c.args) for c in CALLS]
    assert (response.message.content, response.finish_reason) == ("", "tool_call")


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("streaming", [True, False])
def test_reasoning_content_becomes_one_unsigned_thinking_block(server: ProviderServer, streaming: bool, key: str) -> None:
    server.enqueue(Scenario(reply=Reply(text="42.", thinking="Let me think about it carefully.", reasoning_key=key)))
    if streaming:
        out = stream(openai_model(server))
        assert "".join(e.text for e in out.events if isinstance(e, ThinkingDelta)) == "Let me think about it carefully."
        response = out.done.response
    else:
        response = complete(openai_model(server))
    assert response.message.thinking == [ThinkingBlock(text="Let me think about it carefully.")]
    assert response.usage.reasoning_tokens == len("Let me think about it carefully.") // 4


@pytest.mark.parametrize("streaming", [True, False])
def test_usage_includes_cached_tokens(server: ProviderServer, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(text="hi", input_tokens=120, output_tokens=3, cache_read_tokens=100)))
    response = stream(openai_model(server)).done.response if streaming else complete(openai_model(server))
    assert response.usage == Usage(input_tokens=120, output_tokens=3, cache_read_tokens=100)


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize(
    ("wire", "golem"), [("stop", "stop"), ("length", "length"), ("content_filter", "content_filter"), ("function_call", "tool_call"), ("brand_new", "other")]
)
def test_finish_reasons(server: ProviderServer, streaming: bool, wire: str, golem: str) -> None:
    server.enqueue(Scenario(reply=Reply(text="x", finish=wire)))
    response = stream(openai_model(server)).done.response if streaming else complete(openai_model(server))
    assert response.finish_reason == golem


def test_tool_results_round_trip_through_strict_validation(server: ProviderServer) -> None:
    history = [
        Message(role="user", content="weather?"),
        Message(role="assistant", tool_calls=[ToolCall(id="call_a", name="get_weather", args='{"city":"Oslo"}')]),
        Message(role="tool", content="-3 C", tool_call_id="call_a", tool_name="get_weather"),
    ]
    response = complete(openai_model(server), prompt("and now?", history))
    assert response.message.content == "echo: and now?"


def test_failed_tool_result_is_accepted(server: ProviderServer) -> None:
    history = [
        Message(role="user", content="archive it"),
        Message(role="assistant", tool_calls=[ToolCall(id="call_a", name="archive", args="{}")]),
        Message(role="tool", content="mailbox is read-only", tool_call_id="call_a", failed=True),
    ]
    result = complete(openai_model(server), prompt("ok?", history))
    # Spec §9.1 embeds {"error": ...} as an object, which the real API rejects with 400
    # invalid_type (the server mirrors it); golem sends the same JSON as text (ADR 0003).
    assert server.requests[-1].json["messages"][2]["content"] == '{"error":"mailbox is read-only"}'
    assert not isinstance(result, ModelError), str(result)


def test_tool_message_without_its_call_gets_the_real_400(server: ProviderServer) -> None:
    history = [Message(role="user", content="hi"), Message(role="tool", content="orphan", tool_call_id="call_x")]
    error = complete(openai_model(server), prompt("next", history))
    assert isinstance(error, ModelError) and error.status == 400 and not error.retryable
    assert "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'" in str(error)
    assert "HTTP 400" in str(error) and "gpt-test" in str(error) and server.url in str(error)
    assert len(server.requests) == 1


def test_servers_without_keys_get_no_authorization_header(server: ProviderServer) -> None:
    server.reset(api_key=None)
    model = OpenAIModel("llama3.2", base_url=server.openai_base_url, provider="ollama")
    assert complete(model).message.content == "echo: hello there"
    assert "authorization" not in server.requests[-1].headers
    assert model.name == "ollama:llama3.2"


def test_same_request_same_bytes_and_one_client_per_adapter(server: ProviderServer) -> None:
    model = openai_model(server)
    history = [Message(role="user", content="a <b> & c"), Message(role="assistant", content="d")]

    async def three_calls() -> None:
        await model.request(prompt("again", history))
        client = model._http._client
        await model.request(prompt("again", history))
        [event async for event in model.stream(prompt("again", history))]
        assert model._http._client is client
        await model.aclose()

    run(three_calls())
    assert server.requests[0].body == server.requests[1].body
    assert server.requests[2].body == server.requests[0].body[:-1] + b',"stream":true,"stream_options":{"include_usage":true}}'


def test_adapter_is_an_async_context_manager_and_hides_the_key(server: ProviderServer) -> None:
    async def use() -> str:
        async with openai_model(server, key="sk-test") as model:
            response = await model.request(prompt("x"))
        assert model._http._client is None
        return response.message.content

    assert run(use()) == "echo: x"
    assert "sk-test" not in repr(openai_model(server))


def test_request_model_has_no_identity_fields(server: ProviderServer) -> None:
    response = complete(openai_model(server), ModelRequest(messages=[Message(role="user", content="hi", run_id="r1", conversation_id="c1")]))
    assert b"r1" not in server.requests[-1].body and b"c1" not in server.requests[-1].body
    assert (response.message.run_id, response.message.conversation_id) == ("", "")
