"""Provider answers of the wrong shape (issue 8, item 1): a field the contract needs with the
wrong type is a clear provider error that keeps what arrived correctly, never a Message that
golem would then save and be unable to load back."""

from __future__ import annotations

import json

import pytest
from golem_cli.core._state import cut_message
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.errors import ModelError

from tests.providers.helpers import complete, make_model, stream
from tests.providerserver import ProviderServer, Scenario


def sse(*events: dict, done: bool = True) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + (b"data: [DONE]\n\n" if done else b"")


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


HELLO = chunk({"content": "Hello, "})


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"tool_calls": [{"index": 0, "id": 123, "function": {"name": "f", "arguments": ""}}]}, "id"),
        ({"tool_calls": [{"index": 0, "id": "c", "function": {"name": True, "arguments": ""}}]}, "name"),
        ({"tool_calls": [{"index": 0, "id": "c", "function": {"name": {"x": 1}, "arguments": ""}}]}, "name"),
        ({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": 5}}]}, "arguments"),
        ({"content": 42}, "content"),
        ({"reasoning_content": ["a"]}, "reasoning_content"),
    ],
)
def test_openai_stream_with_a_field_of_the_wrong_type(server: ProviderServer, bad: dict, field: str) -> None:
    server.enqueue(Scenario(sse=sse(HELLO, chunk(bad), chunk({"content": "never seen"}, "stop"))))
    out = stream(make_model("openai", server))
    assert isinstance(out.error, ModelError) and "wrong shape" in str(out.error) and field in str(out.error)
    assert "kept" not in str(out.error)  # the command says what it saved
    assert out.accumulator.text == "Hello, " and out.accumulator.done is None  # what arrived correctly
    kept = cut_message(out.accumulator)  # what the run keeps of it
    assert kept is not None and load_history(dump_history([kept])) == [kept]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"choices": {"0": {"message": {"content": "x"}}}}, "wrong shape"),
        ({"choices": [{"message": "just a string"}]}, "wrong shape"),
        ({"choices": [{"message": {"content": "x", "tool_calls": [{"id": 7, "function": {"name": "f"}}]}}]}, "id"),
        ({"choices": [{"message": {"content": "x", "tool_calls": [{"id": "c", "function": {"name": 0}}]}}]}, "name"),
        ({"choices": "none"}, "wrong shape"),
    ],
)
def test_openai_whole_reply_of_the_wrong_shape(server: ProviderServer, body: dict, says: str) -> None:
    server.enqueue(Scenario(body=json.dumps(body).encode()))
    error = complete(make_model("openai", server))
    assert isinstance(error, ModelError) and says in str(error) and "\n" not in str(error)


def anthropic_sse(*events: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


START = {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 1}}}
TEXT = [{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello, "}}]  # fmt: skip


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": 5, "name": "f", "input": {}}}, "id"),
        ({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": [], "input": {}}}, "name"),
        ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}}, "text"),
        ({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": {}}}, "thinking"),
        ({"type": "content_block_delta", "index": "zero", "delta": {"type": "text_delta", "text": "x"}}, "index"),
    ],
)
def test_anthropic_stream_with_a_field_of_the_wrong_type(server: ProviderServer, bad: dict, field: str) -> None:
    stop = [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}}, {"type": "message_stop"}]
    server.enqueue(Scenario(sse=anthropic_sse(START, *TEXT, bad, *stop)))
    out = stream(make_model("anthropic", server))
    assert isinstance(out.error, ModelError) and "wrong shape" in str(out.error) and field in str(out.error)
    assert out.accumulator.text == "Hello, " and out.accumulator.done is None


def test_anthropic_whole_reply_with_a_tool_id_that_is_a_number(server: ProviderServer) -> None:
    body = {"type": "message", "content": [{"type": "tool_use", "id": 9, "name": "f", "input": {}}], "stop_reason": "tool_use"}
    server.enqueue(Scenario(body=json.dumps(body).encode()))
    error = complete(make_model("anthropic", server))
    assert isinstance(error, ModelError) and "unreadable reply" in str(error) and "id" in str(error)
