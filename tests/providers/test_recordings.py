"""Real provider exchanges replayed by the loopback server, cut into random pieces.

What the adapter reports is checked against what the recording says, read here directly from
the recorded body (a plain second reading, not golem's code), and a few values are spelled out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from golem_cli.core.errors import ModelError, RunError
from golem_cli.core.messages import ThinkingBlock, ToolCall

from tests.providers.helpers import anthropic_model, complete, openai_model, stream, through_agent
from tests.providerserver import ProviderServer, Scenario, load_recording, recording_paths


def _ids(path: Path) -> str:
    return path.stem


OPENAI = recording_paths("openai")
ANTHROPIC = recording_paths("anthropic")


def _data_lines(body: str) -> list[Any]:
    out = []
    for line in body.splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            out.append(json.loads(line[5:]))
    return out


def openai_expected(body: str, streamed: bool) -> dict[str, Any]:
    """Text, reasoning, calls and whether an error interrupts, read from a recorded body."""
    text, reasoning, calls, error = [], [], {}, False
    if not streamed:
        message = json.loads(body)["choices"][0]["message"]
        for call in message.get("tool_calls") or []:
            calls[len(calls)] = [call["id"], call["function"]["name"], call["function"]["arguments"]]
        think = message.get("reasoning_content") or message.get("reasoning") or ""
        return {"text": message.get("content") or "", "thinking": think, "calls": calls, "error": False}
    for chunk in _data_lines(body):
        if "error" in chunk:
            error = True
            break
        for choice in chunk.get("choices") or []:
            delta = choice["delta"]
            text.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(piece["index"], ["", "", ""])
                call[0] = call[0] or piece.get("id", "")
                call[1] = call[1] or piece["function"].get("name", "")
                call[2] += piece["function"].get("arguments", "")
    return {"text": "".join(text), "thinking": "".join(reasoning), "calls": calls, "error": error}


@pytest.mark.parametrize("path", [p for p in OPENAI if load_recording(str(p))["response"]["status"] == 200], ids=_ids)
def test_openai_success_recordings(server: ProviderServer, path: Path) -> None:
    recording = load_recording(str(path))
    body = recording["response"]["body_text"]
    streamed = recording["response"]["headers"]["content-type"].startswith("text/event-stream")
    expected = openai_expected(body, streamed)
    server.enqueue(Scenario(replay=str(path)))
    if streamed:
        out = stream(openai_model(server))
        assert (out.error is not None) == expected["error"]
        message = out.received() if expected["error"] else out.done.response.message
    else:
        message = complete(openai_model(server)).message
    assert message.content == expected["text"]
    assert message.thinking == ([ThinkingBlock(text=expected["thinking"])] if expected["thinking"] else [])
    assert message.tool_calls == [ToolCall(id=i, name=n, args=a) for i, n, a in expected["calls"].values()]


def test_openai_spot_values(server: ProviderServer) -> None:
    server.enqueue(Scenario(replay="openai-stream-text-include-usage"))
    response = stream(openai_model(server)).done.response
    assert response.message.content == "The capital of Mexico is Mexico City."
    assert (response.usage.input_tokens, response.usage.output_tokens, response.finish_reason) == (14, 8, "stop")
    server.enqueue(Scenario(replay="deepseek-stream-reasoning-content"))
    response = stream(openai_model(server)).done.response
    assert response.usage.reasoning_tokens == 198 and response.message.thinking[0].text.startswith("H")
    server.enqueue(Scenario(replay="openai-stream-parallel-tool-calls"))
    calls = stream(openai_model(server)).done.response.message.tool_calls
    assert [(c.name, c.args) for c in calls] == [("get_weather", '{"city": "Mexico City"}'), ("get_product_name", "{}")]


def test_openai_midstream_errors_keep_what_arrived(server: ProviderServer) -> None:
    server.enqueue(Scenario(replay="groq-stream-midstream-error-event"))
    out = stream(openai_model(server))
    assert out.error is not None and "Tool call validation failed" in str(out.error) and "mid-reply" in str(out.error)
    assert out.error.status == 400 and out.accumulator.thinking()[0].text.startswith("We need to call the tool")
    server.enqueue(Scenario(replay="openrouter-stream-comments-and-midstream-error"))
    out = stream(openai_model(server))
    assert out.error is not None and "Token limit reached" in str(out.error)


ERROR_HINTS = {400: "rejected", 401: "API key", 404: "model name", 429: "rate limiting"}


@pytest.mark.parametrize("path", [p for p in OPENAI + ANTHROPIC if load_recording(str(p))["response"]["status"] >= 400], ids=_ids)
def test_error_recordings(server: ProviderServer, path: Path) -> None:
    recording = load_recording(str(path))
    status = recording["response"]["status"]
    provider_message = json.loads(recording["response"]["body_text"])["error"]["message"]
    server.enqueue(*[Scenario(replay=str(path))] * 4)
    model = openai_model(server) if "openai" in path.parent.name else anthropic_model(server)
    outcome = through_agent(model, streaming=False)  # the run loop retries what the adapter calls retryable
    assert isinstance(outcome, RunError) and isinstance(outcome.cause, ModelError)
    error = outcome.cause
    assert error.status == status and error.retryable == (status == 429)
    assert provider_message in error.message and ERROR_HINTS[status] in error.hint
    assert len(server.requests) == error.attempts == (4 if status == 429 else 1)


def anthropic_expected(body: str, streamed: bool) -> dict[str, Any]:
    if not streamed:
        blocks = json.loads(body)["content"]
    else:
        blocks = {}
        for event in _data_lines(body):
            if event["type"] == "content_block_start":
                blocks[event["index"]] = dict(event["content_block"], partial="")
            elif event["type"] == "content_block_delta":
                block, delta = blocks[event["index"]], event["delta"]
                if delta["type"] == "text_delta":
                    block["text"] += delta["text"]
                elif delta["type"] == "thinking_delta":
                    block["thinking"] += delta["thinking"]
                elif delta["type"] == "signature_delta":
                    block["signature"] = delta["signature"]
                elif delta["type"] == "input_json_delta":
                    block["partial"] += delta["partial_json"]
        blocks = [blocks[i] for i in sorted(blocks)]
    thinking = [ThinkingBlock(redacted=b["data"]) if b["type"] == "redacted_thinking" else ThinkingBlock(text=b["thinking"], signature=b["signature"])
                for b in blocks if b["type"] in ("thinking", "redacted_thinking")]  # fmt: skip
    calls = [(b["id"], b["name"], b.get("partial", "") or "{}", b["input"]) for b in blocks if b["type"] == "tool_use"]
    return {"text": "\n".join(b["text"] for b in blocks if b["type"] == "text"), "thinking": thinking, "calls": calls}


@pytest.mark.parametrize("path", [p for p in ANTHROPIC if load_recording(str(p))["response"]["status"] == 200], ids=_ids)
def test_anthropic_success_recordings(server: ProviderServer, path: Path) -> None:
    recording = load_recording(str(path))
    body = recording["response"]["body_text"]
    streamed = recording["response"]["headers"]["content-type"].startswith("text/event-stream")
    expected = anthropic_expected(body, streamed)
    server.enqueue(Scenario(replay=str(path)))
    response = stream(anthropic_model(server)).done.response if streamed else complete(anthropic_model(server))
    message = response.message
    assert (message.content, message.thinking) == (expected["text"], expected["thinking"])
    assert [(c.id, c.name) for c in message.tool_calls] == [(i, n) for i, n, _, _ in expected["calls"]]
    for call, (_, _, partial, start_input) in zip(message.tool_calls, expected["calls"], strict=True):
        assert json.loads(call.args) == (json.loads(partial) if streamed else start_input)
        assert call.args in body or (streamed and call.args == partial.strip())  # the provider's spelling
    usage = json.loads(body)["usage"] if not streamed else {}
    if usage:  # golem's input counts the cached part too (core/usage.py): 0 in every recording
        whole = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
        assert (response.usage.input_tokens, response.usage.output_tokens) == (whole, usage["output_tokens"])
        assert response.usage.cache_write_1h_tokens == usage["cache_creation"]["ephemeral_1h_input_tokens"]


def test_anthropic_spot_values(server: ProviderServer) -> None:
    server.enqueue(Scenario(replay="anthropic-stream-thinking-tool-use"))
    response = stream(anthropic_model(server)).done.response
    assert response.finish_reason == "tool_call" and response.message.thinking[0].signature
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (92, 53)  # output_tokens_details
    server.enqueue(Scenario(replay="anthropic-stream-prefill-stop-sequence"))
    assert stream(anthropic_model(server)).done.response.finish_reason == "stop"
    server.enqueue(Scenario(replay="anthropic-nonstream-max-tokens"))
    assert complete(anthropic_model(server)).finish_reason == "length"
    server.enqueue(Scenario(replay="anthropic-stream-text-then-tool-use"))
    response = stream(anthropic_model(server)).done.response
    assert response.message.tool_calls == [ToolCall(id="toolu_01Lfr3kUnHMZApePPRWMv1uS", name="get_current_temperature", args='{"city": "San Francisco"}')]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (351, 85)
