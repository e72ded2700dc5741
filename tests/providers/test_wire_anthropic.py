"""Anthropic request bodies: exactly spec §9.2, byte for byte, merged turns, signatures kept."""

from __future__ import annotations

import json

import pytest
from golem_cli.core.codec.history import load_history
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelRequest, ModelSettings, ToolDefinition
from golem_cli.providers.anthropic.model import DEFAULT_MAX_TOKENS
from golem_cli.providers.anthropic.wire import request_body

from tests.providers import spec_example


def body(messages: list[Message], max_tokens: int = DEFAULT_MAX_TOKENS, **kwargs: object) -> bytes:
    return request_body("claude-test", max_tokens, ModelRequest(messages=messages, **kwargs), stream=False)  # type: ignore[arg-type]


def test_spec_example_conversation_gives_the_spec_bytes() -> None:
    sent = body(load_history(spec_example.HISTORY), max_tokens=1024)
    expected = b'{"model":"claude-test","max_tokens":1024,"system":"Answer briefly.","messages":' + spec_example.ANTHROPIC_MESSAGES.encode() + b"}"
    assert sent == expected
    assert sent == body(load_history(spec_example.HISTORY), max_tokens=1024)


@pytest.mark.parametrize(
    ("args", "wire_input"),
    [
        ('{"sides":', b'"input":{"truncated_args":"{\\"sides\\":"}'),
        ("", b'"input":{}'),
        ("null", b'"input":{"truncated_args":"null"}'),
        (' {"x": "<1>"}\n', b'"input":{"x":"\\u003c1\\u003e"}'),
        ('{"n": 1.50, "s": "\\u00e9"}', b'"input":{"n":1.50,"s":"\\u00e9"}'),
    ],
)
def test_tool_input_uses_the_spec_wrapper_compacted(args: str, wire_input: bytes) -> None:
    call = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="roll", args=args)])
    assert wire_input + b"}]}" in body([Message(role="user", content="go"), call])


def test_max_tokens_is_always_sent_and_settings_win() -> None:
    user = [Message(role="user", content="hi")]
    assert json.loads(body(user))["max_tokens"] == DEFAULT_MAX_TOKENS
    request = ModelRequest(messages=user, settings=ModelSettings(max_tokens=77, temperature=1.0, top_p=0.9))
    sent = request_body("claude-test", 5, request, stream=True)
    assert list(json.loads(sent)) == ["model", "max_tokens", "messages", "temperature", "top_p", "stream"]
    assert json.loads(sent)["max_tokens"] == 77


def test_tools_and_systems() -> None:
    sent = json.loads(
        body(
            [Message(role="system", content="one"), Message(role="user", content="hi"), Message(role="system", content="two")],
            tools=[ToolDefinition(name="roll", description="", parameters={"type": "object"})],
        )
    )
    assert sent["system"] == "one\n\ntwo"
    assert sent["tools"] == [{"name": "roll", "input_schema": {"type": "object"}}]


def test_consecutive_same_role_turns_merge() -> None:
    history = [
        Message(role="user", content="first"),
        Message(role="narrator", content="unknown role is user"),
        Message(role="assistant", tool_calls=[ToolCall(id="a", name="t", args="{}"), ToolCall(id="b", name="t", args="{}")]),
        Message(role="tool", content="A", tool_call_id="a"),
        Message(role="tool", content="", tool_call_id="b", failed=True),
        Message(role="user", content="go on"),
    ]
    turns = json.loads(body(history))["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["type"] for b in turns[0]["content"]] == ["text", "text"]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "A"}]},
        {"type": "tool_result", "tool_use_id": "b", "is_error": True},  # empty: no content (ADR 0007)
        {"type": "text", "text": "go on"},
    ]


def test_what_the_api_rejects_is_not_sent_as_go_spells_it() -> None:
    """Spec §9.2 writes "content":null and [{"type":"text"}]; the API rejects both (ADR 0007)."""
    history = [
        Message(role="user", content="hi"),
        Message(role="assistant"),  # an empty reply (a refusal, once)
        Message(role="user"),  # an empty user message
        Message(role="user", content="again"),
    ]
    assert json.loads(body(history))["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "again"}]}]
    opening = json.loads(body([Message(role="assistant", content="Ahoy!"), Message(role="user", content="hi")]))["messages"]
    assert opening[0] == {"role": "user", "content": [{"type": "text", "text": "(empty message)"}]}
    empty_prompt = json.loads(body([Message(role="user", content="q"), Message(role="assistant", content="a"), Message(role="user")]))
    assert empty_prompt["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "(empty message)"}]}
    prefill = json.loads(body([Message(role="user", content="q"), Message(role="assistant", content="{")]))["messages"]
    assert prefill[-1] == {"role": "assistant", "content": [{"type": "text", "text": "{"}]}  # a prefill stays one


def test_calls_without_an_id_or_with_foreign_characters_get_a_wire_id() -> None:
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="", name="roll", args="{}"), ToolCall(id="fc:1.a", name="roll", args="{}")]),
        Message(role="tool", content="4", tool_call_id="fc:1.a", tool_name="roll"),
    ]
    turns = json.loads(body(history))["messages"]
    assert [b["id"] for b in turns[1]["content"]] == ["golem_no_id_1_0", "fc_1_a"]
    assert [(b["tool_use_id"], b["content"][0]["text"][:25]) for b in turns[2]["content"]] == [
        ("golem_no_id_1_0", "Tool call was interrupted"), ("fc_1_a", "4")
    ]


def test_a_result_after_an_intervening_message_moves_next_to_its_call() -> None:
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="c1", name="roll", args="{}")]),
        Message(role="user", content="still there?"),
        Message(role="tool", content="6", tool_call_id="c1"),
    ]
    turns = json.loads(body(history))["messages"]
    assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "text"]  # results first, as the API wants


def test_thinking_is_replayed_with_signatures_in_order() -> None:
    turn = Message(
        role="assistant",
        content="ok",
        thinking=[ThinkingBlock(text="hmm", signature="sig1"), ThinkingBlock(redacted="opaque"), ThinkingBlock(text="unsigned")],
    )
    blocks = json.loads(body([Message(role="user", content="q"), turn]))["messages"][1]["content"]
    assert blocks == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "ok"},  # unsigned reasoning is not sent (ADR 0007)
    ]


def test_documents_by_url_and_inline_pdf() -> None:
    parts = [Part(kind="document", url="https://example.com/a.txt"), Part(kind="document", data=b"%PDF", media_type="application/pdf")]
    blocks = json.loads(body([Message(role="user", parts=parts)]))["messages"][0]["content"]
    assert blocks == [
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.txt"}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="}},
    ]


@pytest.mark.parametrize("role", ["user", "tool"])
@pytest.mark.parametrize("part", [Part(kind="audio", data=b"x", media_type="audio/wav"), Part(kind="video", url="https://e/v.mp4")])
def test_audio_and_video_fail_before_sending(role: str, part: Part) -> None:
    history = [Message(role="user", content="go"), Message(role="assistant", tool_calls=[ToolCall(id="a", name="t")])]
    message = Message(role=role, content="x", parts=[part], tool_call_id="a")
    with pytest.raises(ModelError) as caught:
        body([*history, message])
    assert part.kind in str(caught.value)
    assert ("tool result" in str(caught.value)) == (role == "tool")
