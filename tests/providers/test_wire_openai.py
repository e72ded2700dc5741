"""OpenAI request bodies: exactly spec §9.1, byte for byte, and the same bytes every time."""

from __future__ import annotations

import json

import pytest
from golem_cli.core.codec.gojson import go_quote_q as go_q
from golem_cli.core.codec.history import load_history
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import Message, Part, ToolCall
from golem_cli.core.model import ModelRequest, ModelSettings, ToolDefinition
from golem_cli.providers.openai.wire import request_body

from tests.providers import spec_example


def body(messages: list[Message], **kwargs: object) -> bytes:
    return request_body("gpt-test", ModelRequest(messages=messages, **kwargs), stream=False)  # type: ignore[arg-type]


def test_spec_example_conversation_gives_the_spec_bytes() -> None:
    history = load_history(spec_example.HISTORY)
    assert body(history) == b'{"model":"gpt-test","messages":' + spec_example.OPENAI_MESSAGES.encode() + b"}"


def test_same_history_same_bytes_and_no_identity_on_the_wire() -> None:
    first = body(load_history(spec_example.HISTORY))
    again = body(load_history(spec_example.HISTORY))
    assert first == again
    assert b"01a028b2" not in first and b"runId" not in first and b"conversation" not in first


@pytest.mark.parametrize(
    ("args", "arguments"),
    [
        ('{"sides":', '{"truncated_args":"{\\"sides\\":"}'),
        (" [1,2] ", '{"truncated_args":" [1,2] "}'),
        ("", "{}"),
        ("null", '{"truncated_args":"null"}'),
        (' {"x": "<1>"}\n', '{"x":"\\u003c1\\u003e"}'),  # an object as it reads back once saved (ADR 0024)
    ],
)
def test_tool_call_arguments_use_the_spec_wrapper(args: str, arguments: str) -> None:
    call = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="roll", args=args)])
    sent = json.loads(body([Message(role="user", content="go"), call]))
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == arguments
    assert sent["messages"][1]["content"] == ""  # always written, even empty


def test_html_characters_are_escaped_like_go() -> None:
    call = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="roll", args=' {"x": "<1>"}\n')])
    assert b'"arguments":"{\\"x\\":\\"\\\\u003c1\\\\u003e\\"}"' in body([Message(role="user", content="a<b & c>d"), call])


def test_stream_body_asks_for_usage_and_key_order_is_fixed() -> None:
    request = ModelRequest(
        messages=[Message(role="user", content="hi")],
        tools=[ToolDefinition(name="roll", description="Roll a die.", parameters={"type": "object", "properties": {"sides": {"type": "integer"}}})],
        settings=ModelSettings(max_tokens=50, temperature=0.0, top_p=0.5),
    )
    sent = request_body("gpt-test", request, stream=True)
    assert list(json.loads(sent)) == ["model", "messages", "tools", "temperature", "top_p", "max_tokens", "stream", "stream_options"]
    assert sent.endswith(b'"temperature":0.0,"top_p":0.5,"max_tokens":50,"stream":true,"stream_options":{"include_usage":true}}')
    assert b'"tools":[{"type":"function","function":{"name":"roll","description":"Roll a die.","parameters":{"type":"object"' in sent
    assert b"stream" not in request_body("gpt-test", request, stream=False)


def test_roles_map_and_unknown_roles_become_user() -> None:
    sent = json.loads(body([Message(role="system", content="s"), Message(role="narrator", content="n")]))
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]


def test_media_parts_map_per_kind() -> None:
    parts = [
        Part(kind="document", data=b"%PDF", media_type="application/pdf"),
        Part(kind="audio", data=b"RIFF", media_type="audio/x-wav"),
        Part(kind="audio", data=b"ID3", media_type="audio/mpeg"),
    ]
    content = json.loads(body([Message(role="user", parts=parts)]))["messages"][0]["content"]
    assert content == [
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERg==", "filename": "document.pdf"}},  # ADR 0007
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
    ]


@pytest.mark.parametrize(
    "part",
    [
        Part(kind="video", url="https://example.com/v.mp4"),
        Part(kind="document", url="https://example.com/a.pdf"),
        Part(kind="document", data=b"x", media_type="text/plain"),
        Part(kind="audio", data=b"x", media_type="audio/ogg"),
    ],
)
def test_parts_the_api_cannot_carry_fail_before_sending(part: Part) -> None:
    with pytest.raises(ModelError) as caught:
        body([Message(role="user", content="see", parts=[part])])
    assert part.kind in str(caught.value) and caught.value.hint


def test_tool_result_parts_follow_the_run_in_one_framed_user_message() -> None:
    image = Part(kind="image", url="https://example.com/a.png")
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="a", name="shot"), ToolCall(id="b", name='we"ird\n')]),
        Message(role="tool", content="one", tool_call_id="a", tool_name="shot", parts=[image]),
        Message(role="tool", content="two", tool_call_id="b", tool_name='we"ird\n', parts=[image]),
        Message(role="user", content="next"),
    ]
    sent = json.loads(body(history))["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user", "user"]
    framed = sent[4]["content"]
    assert [p["type"] for p in framed] == ["text", "image_url", "text", "text", "image_url", "text"]
    assert framed[3]["text"] == '<tool_result tool_name="we\\"ird\\n" tool_call_id="b">\n'


def test_go_quote_matches_go_percent_q() -> None:
    assert go_q('a"b\\c') == '"a\\"b\\\\c"'
    assert go_q("tab\tbell\a\x01\x7f") == '"tab\\tbell\\a\\x01\\x7f"'
    assert go_q("é漢\u200b\U0001f600") == '"é漢\\u200b😀"'


def test_calls_without_an_id_and_late_results_are_paired_on_the_wire() -> None:
    """The API wants every call answered right after it, by ID (ADR 0007); stored history is untouched."""
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="", name="roll", args="{}"), ToolCall(id="c2", name="roll", args="{}")]),
        Message(role="user", content="still there?"),
        Message(role="tool", content="6", tool_call_id="c2"),
    ]
    messages = json.loads(body(history))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["golem_no_id_1_0", "c2"]
    assert [m["tool_call_id"] for m in messages[2:4]] == ["golem_no_id_1_0", "c2"]  # in call order
    assert history[1].tool_calls[0].id == ""
