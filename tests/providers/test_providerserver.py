"""The test server itself: it must reject what the real APIs reject, accept what they accept,
and run standalone for people."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.providerserver import ProviderServer, Scenario, load_recording, recording_paths
from tests.providerserver.validate import validate_anthropic, validate_openai

REPO = Path(__file__).resolve().parents[2]
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01"}


def recorded(provider: str, status: int) -> list[Path]:
    return [p for p in recording_paths(provider) if load_recording(str(p))["response"]["status"] == status]


def test_requests_the_real_apis_accepted_pass() -> None:
    for path in recorded("openai", 200):
        assert validate_openai(load_recording(str(path))["request"]["body"]) is None, path.stem
    for path in recorded("anthropic", 200):
        assert validate_anthropic(ANTHROPIC_HEADERS, load_recording(str(path))["request"]["body"]) is None, path.stem


def test_a_request_openai_rejected_gets_the_same_answer() -> None:
    recording = load_recording("openai-error-400-missing-required-parameter")
    status, body = validate_openai(recording["request"]["body"]) or (0, {})
    expected = json.loads(recording["response"]["body_text"])
    assert (status, body) == (400, expected)


def openai_problem(messages: list[dict], **extra: object) -> str:
    problem = validate_openai({"model": "m", "messages": messages, **extra})
    assert problem is not None and problem[0] == 400 and set(problem[1]["error"]) == {"message", "type", "param", "code"}
    return problem[1]["error"]["message"]


def anthropic_problem(body: dict, headers: dict | None = None) -> str:
    problem = validate_anthropic(ANTHROPIC_HEADERS if headers is None else headers, body)
    assert problem is not None and problem[0] == 400 and problem[1]["type"] == "error"
    return problem[1]["error"]["message"]


def test_openai_rules() -> None:
    user = {"role": "user", "content": "hi"}
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    assert "must be a response to a preceeding message with 'tool_calls'" in openai_problem([user, {"role": "tool", "content": "x", "tool_call_id": "c1"}])
    assert "did not have response messages: c1" in openai_problem([user, call, user])
    assert "Invalid value: 'robot'" in openai_problem([{"role": "robot", "content": "x"}])
    assert "expected one of a string or array of objects, but got an object" in openai_problem([user, call, {"role": "tool", "content": {"error": "x"}, "tool_call_id": "c1"}])
    assert "expected a string, but got an object" in openai_problem([user, {**call, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}]}])
    assert "'stream_options' parameter is only allowed when 'stream' is enabled" in openai_problem([user], stream_options={"include_usage": True})
    assert "empty array" in openai_problem([])


def test_anthropic_rules() -> None:
    user = {"role": "user", "content": "hi"}
    base = {"model": "m", "max_tokens": 10}
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}
    assert anthropic_problem({"model": "m", "messages": [user]}) == "max_tokens: Field required"
    assert anthropic_problem({**base, "messages": [user]}, headers={}) == "anthropic-version: header is required"
    assert anthropic_problem({**base, "messages": [{"role": "system", "content": "x"}]}) == "messages.0.role: Input should be 'user' or 'assistant'"
    assert "unexpected `tool_use_id`" in anthropic_problem({**base, "messages": [user, result]})
    assert "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1" in anthropic_problem({**base, "messages": [user, use, user]})
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}
    assert anthropic_problem({**base, "messages": [user, thinking, user]}) == "messages.1.content.0.thinking.signature: Field required"
    assert anthropic_problem({**base, "messages": [user, {"role": "assistant", "content": None}, user]}) == "messages.1.content: Input should be a valid list"
    assert validate_anthropic(ANTHROPIC_HEADERS, {**base, "messages": [user, use, result]}) is None


def test_unknown_paths_get_404(server: ProviderServer) -> None:
    response = httpx.post(server.url + "/v1/embeddings", json={})
    assert response.status_code == 404 and "Unknown request URL" in response.json()["error"]["message"]


@pytest.mark.refused_bodies
def test_a_fault_scenario_still_checks_the_body(server: ProviderServer) -> None:
    """A queued fault answers without the normal checks; the body is checked all the same and a
    refusal recorded, so that the ``server`` fixture fails a test that sent it."""
    server.enqueue(Scenario(status=500), Scenario(status=500), Scenario(status=500))
    sent = [{"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]},
            {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream_options": {"include_usage": True}}]  # fmt: skip
    assert [httpx.post(server.openai_base_url + "/chat/completions", json=body).status_code for body in sent] == [500] * 3
    assert len(server.sdk_rejections) == 2 and all(r.startswith("answered by a fault scenario") for r in server.sdk_rejections)
    assert "stream_options" in server.sdk_rejections[1]


def test_standalone_command_serves_both_protocols() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.providerserver", "--port", "0"], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        base = banner.rsplit(" ", 1)[-1].strip()
        assert banner.startswith("golem provider test server on http://127.0.0.1:")
        chat = httpx.post(base + "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}, timeout=10)
        assert chat.json()["choices"][0]["message"]["content"] == "echo: hi"
        claude = httpx.post(
            base + "/v1/messages", headers=ANTHROPIC_HEADERS, timeout=10,
            json={"model": "fault:429", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
        )  # fmt: skip
        assert claude.status_code == 429 and claude.headers["retry-after"] == "1"
    finally:
        process.terminate()
        process.wait(10)
