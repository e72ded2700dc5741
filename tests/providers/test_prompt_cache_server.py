"""The loopback server's prompt cache: usage reported the way each API reports it, in reply
shapes the SDKs' own response types read, and ``cache_control`` placements checked as the
Messages API checks them."""

from __future__ import annotations

from typing import Any

import httpx
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion

from tests.providerserver import PromptCache, ProviderServer
from tests.providerserver.validate import validate_anthropic

HEADERS = {"x-api-key": "sk-test", "anthropic-version": "2023-06-01"}
LONG = "You answer questions about the weather. " * 200  # about 2,000 tokens by the server's count
EPHEMERAL = {"type": "ephemeral"}


def anthropic_body(turns: list[str], *, marks: tuple[int, ...] = (-1,), system_mark: bool = True) -> dict[str, Any]:
    """A conversation of ``turns`` (user, assistant, user, ...), with breakpoints on the system
    prompt and on the messages at ``marks``."""
    messages: list[dict[str, Any]] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": text}]}
        for i, text in enumerate(turns)
    ]
    for index in marks:
        messages[index]["content"][-1]["cache_control"] = EPHEMERAL
    system: dict[str, Any] = {"type": "text", "text": LONG, **({"cache_control": EPHEMERAL} if system_mark else {})}
    return {"model": "claude-test", "max_tokens": 100, "system": [system], "messages": messages}


def post_anthropic(server: ProviderServer, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(server.url + "/v1/messages", json=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    reply = response.json()
    AnthropicMessage.model_validate(reply)  # the SDK's response type reads it
    return dict(reply["usage"])


def test_anthropic_writes_at_breakpoints_and_reads_them_back(server: ProviderServer) -> None:
    server.prompt_cache = PromptCache()
    first = post_anthropic(server, anthropic_body(["hello"]))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 2000
    assert first["cache_creation"] == {"ephemeral_5m_input_tokens": first["cache_creation_input_tokens"],
                                       "ephemeral_1h_input_tokens": 0}  # fmt: skip
    second = post_anthropic(server, anthropic_body(["hello", "hi there", "and tomorrow?"], marks=(0, -1)))
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert 0 < second["cache_creation_input_tokens"] < 50  # only the two new turns are written
    assert second["input_tokens"] == 0  # everything sits before the last breakpoint


def test_anthropic_reads_nothing_without_breakpoints_and_caches_no_short_prefix(server: ProviderServer) -> None:
    server.prompt_cache = PromptCache()
    plain = anthropic_body(["hello"], marks=(), system_mark=False)
    assert post_anthropic(server, plain)["cache_creation_input_tokens"] == 0
    assert post_anthropic(server, plain)["cache_read_input_tokens"] == 0
    short = {"model": "claude-test", "max_tokens": 100, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}]}  # fmt: skip
    assert post_anthropic(server, short)["cache_creation_input_tokens"] == 0


def test_anthropic_looks_back_twenty_blocks_from_a_breakpoint(server: ProviderServer) -> None:
    """A cached prefix more than 20 blocks before the newest breakpoint is found only through a
    breakpoint nearer to it (what the breakpoint on the turn before the newest is for)."""
    server.prompt_cache = PromptCache()
    post_anthropic(server, anthropic_body(["hello"], system_mark=False))
    turns = ["hello"] + [f"turn {n}" for n in range(22)]
    assert post_anthropic(server, anthropic_body(turns, system_mark=False))["cache_read_input_tokens"] == 0
    server.prompt_cache = PromptCache()
    post_anthropic(server, anthropic_body(["hello"], system_mark=False))
    assert post_anthropic(server, anthropic_body(turns, marks=(0, -1), system_mark=False))["cache_read_input_tokens"] > 0


def test_anthropic_automatic_form_and_one_hour_entries(server: ProviderServer) -> None:
    server.prompt_cache = PromptCache()
    automatic = {**anthropic_body(["hello"], marks=(), system_mark=False), "cache_control": EPHEMERAL}
    assert post_anthropic(server, automatic)["cache_creation_input_tokens"] > 2000
    assert post_anthropic(server, automatic)["cache_read_input_tokens"] > 2000
    hour = anthropic_body(["a new one"], marks=())
    hour["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    usage = post_anthropic(server, hour)
    assert usage["cache_creation"]["ephemeral_1h_input_tokens"] == usage["cache_creation_input_tokens"] > 2000


def test_entries_expire_after_their_ttl() -> None:
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    body = anthropic_body(["hello"])
    assert cache.anthropic(body).cache_write_tokens > 0
    now[0] = 299.0
    assert cache.anthropic(body).cache_read_tokens > 0  # and the hit refreshes the entry
    now[0] = 599.0 + 301.0
    assert cache.anthropic(body).cache_read_tokens == 0


def test_openai_caches_long_prompts_in_steps_of_128(server: ProviderServer) -> None:
    server.prompt_cache = PromptCache()
    messages = [{"role": "system", "content": LONG}, {"role": "user", "content": "hello"}]

    def post(body_messages: list[dict[str, Any]], stream: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {"model": "gpt-test", "messages": body_messages}
        if stream:
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        response = httpx.post(server.openai_base_url + "/chat/completions", json=body, headers={"authorization": "Bearer sk-test"})
        assert response.status_code == 200, response.text
        if stream:
            chunks = [line for line in response.text.splitlines() if line.startswith("data: {")]
            return dict(httpx.Response(200, content=chunks[-1][6:]).json()["usage"])
        ChatCompletion.model_validate(response.json())
        return dict(response.json()["usage"])

    first = post(messages)
    assert first["prompt_tokens_details"]["cached_tokens"] == 0 and first["prompt_tokens"] > 2000
    longer = messages + [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]
    second = post(longer, stream=True)
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 1024 and (cached - 1024) % 128 == 0 and cached <= second["prompt_tokens"]
    assert second["prompt_tokens"] - cached < 128 + 20  # all but the new turns and the step's rest
    assert post([{"role": "user", "content": "short"}])["prompt_tokens_details"]["cached_tokens"] == 0


def test_breakpoint_rules_are_the_apis() -> None:
    five = anthropic_body(["a", "b", "c", "d", "e"], marks=(0, 1, 2, 4))
    problem = validate_anthropic(HEADERS, five)
    assert problem and "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(problem)
    four = anthropic_body(["a", "b", "c"], marks=(0, 2))
    assert validate_anthropic(HEADERS, four) is None
    assert validate_anthropic(HEADERS, {**four, "cache_control": EPHEMERAL}) is None
    late_hour = anthropic_body(["a"])
    late_hour["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert "must not come after" in str(validate_anthropic(HEADERS, late_hour))
    thinking = anthropic_body(["a", "b", "c"], marks=())
    thinking["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "t", "signature": "s",
                                                  "cache_control": EPHEMERAL})  # fmt: skip
    assert "thinking.cache_control" in str(validate_anthropic(HEADERS, thinking))
