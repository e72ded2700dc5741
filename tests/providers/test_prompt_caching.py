"""Prompt caching through the adapters and the configuration: Anthropic's breakpoints (where
they sit, their lifetime, off when the config says so), OpenAI's ``prompt_cache_key`` (where the
endpoint documents it, or where a table asks for it), and the cache figures a server reports
read back into golem's usage. Every body is validated by the server's rules and the SDK request
types (the ``server`` fixture)."""

from __future__ import annotations

from typing import Any

from golem_cli.core.messages import Message, ToolCall
from golem_cli.core.model import ModelRequest, ToolDefinition
from golem_cli.providers.anthropic.model import AnthropicModel
from golem_cli.providers.caching import Caching
from golem_cli.providers.openai.model import OpenAIModel
from golem_cli.providers.resolve import resolve

from tests.providers.helpers import FAST, complete, model_tables, provider_tables, stream
from tests.providerserver import PromptCache, ProviderServer

EPHEMERAL = {"type": "ephemeral"}
LONG = "Answer about the weather, in one sentence. " * 150
TOOLS = [
    ToolDefinition(name="get_weather", description="The weather in a city."),
    ToolDefinition(name="get_time", description="The time in a zone."),
]


def conversation(turns: int) -> list[Message]:
    """A system prompt, then ``turns`` exchanges, the second of them a tool round."""
    out = [Message(role="system", content=LONG)]
    for n in range(turns):
        out.append(Message(role="user", content=f"question {n}"))
        if n == 1:
            out.append(Message(role="assistant", tool_calls=[ToolCall(id=f"toolu_{n}", name="get_time", args="{}")]))
            out.append(Message(role="tool", content="noon", tool_call_id=f"toolu_{n}", tool_name="get_time"))
        out.append(Message(role="assistant", content=f"answer {n}"))
    return out


def claude(server: ProviderServer, caching: Caching | None = None) -> AnthropicModel:
    return AnthropicModel("claude-test", api_key="sk-test", base_url=server.url, settings=FAST, caching=caching)


def marked(body: dict[str, Any]) -> list[str]:
    """Where a body's breakpoints sit."""
    places = [f"tools.{i}" for i, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    places += [f"system.{i}" for i, b in enumerate(system if isinstance(system, list) else []) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        places += [f"messages.{i}.{j}" for j, b in enumerate(content) if "cache_control" in b]
    return places


def test_anthropic_marks_the_last_tool_the_system_prompt_the_newest_turn_and_the_one_before(server: ProviderServer) -> None:
    history = [*conversation(3), Message(role="user", content="question 3")]
    stream(claude(server), ModelRequest(messages=history, tools=TOOLS))
    body = server.requests[-1].json
    turns = len(body["messages"])
    assert marked(body) == ["tools.1", "system.0", f"messages.{turns - 3}.0", f"messages.{turns - 1}.0"]
    assert body["system"] == [{"type": "text", "text": LONG, "cache_control": EPHEMERAL}]
    assert "cache_control" not in body  # explicit breakpoints, not the automatic form (ADR 0024)


def test_after_a_tool_round_the_turn_before_is_the_prompt(server: ProviderServer) -> None:
    """In a tool round, the previous request's newest turn was the prompt: that is what the
    breakpoint before the newest sits on, on the prompt's last block."""
    history = [Message(role="user", content="what time is it?"),
               Message(role="assistant", tool_calls=[ToolCall(id="toolu_1", name="get_time", args="{}")]),
               Message(role="tool", content="noon", tool_call_id="toolu_1")]  # fmt: skip
    complete(claude(server), ModelRequest(messages=history, tools=TOOLS))
    assert marked(server.requests[-1].json) == ["tools.1", "messages.0.0", "messages.2.0"]


def test_one_hour_and_off(server: ProviderServer) -> None:
    request = ModelRequest(messages=[*conversation(2), Message(role="user", content="more")], tools=TOOLS)
    complete(claude(server, Caching(ttl="1h")), request)
    body = server.requests[-1].json
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"} == body["system"][0]["cache_control"]
    complete(claude(server, Caching(enabled=False)), request)
    body = server.requests[-1].json
    assert marked(body) == [] and isinstance(body["system"], str)


def test_the_server_reads_back_what_the_request_before_wrote(server: ProviderServer) -> None:
    """Over the loopback server's cache: a conversation's next request reads the prefix the
    previous one wrote, and golem's usage carries the figures."""
    server.prompt_cache = PromptCache()
    history = conversation(2)
    first = complete(claude(server), ModelRequest(messages=[*history, Message(role="user", content="q")], tools=TOOLS))
    assert first.usage.cache_write_tokens > 1000 and first.usage.cache_read_tokens == 0
    later = [*history, Message(role="user", content="q"), Message(role="assistant", content="a"),
             Message(role="user", content="and then?")]  # fmt: skip
    second = stream(claude(server), ModelRequest(messages=later, tools=TOOLS)).done.response
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    assert 0 < second.usage.cache_write_tokens < 50  # only the two new turns


def test_the_config_sets_caching_per_provider_and_per_model() -> None:
    providers = provider_tables({"claude": {"type": "anthropic", "api_key": "k", "cache_ttl": "1h"},
                                 "local": {"base_url": "http://127.0.0.1:9/v1", "prompt_cache_key": True}})  # fmt: skip
    models = model_tables({"claude:off": {"cache": False}, "claude:short": {"cache_ttl": "5m"}})
    got = {name: resolve(name, providers=providers, models=models, env={}) for name in
           ("claude:on", "claude:off", "claude:short", "local:m")}  # fmt: skip
    assert got["claude:on"].caching == Caching(ttl="1h")  # type: ignore[attr-defined]
    assert got["claude:off"].caching.enabled is False  # type: ignore[attr-defined]
    assert got["claude:short"].caching.ttl == "5m"  # type: ignore[attr-defined]
    assert got["local:m"].sends_cache_key is True  # type: ignore[attr-defined]


def test_the_cache_key_goes_where_the_endpoint_documents_it() -> None:
    env = {"OPENAI_API_KEY": "sk-x", "AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com",
           "GROQ_API_KEY": "g"}  # fmt: skip
    assert resolve("openai:gpt-4o-mini", env=env).sends_cache_key is True  # type: ignore[attr-defined]
    assert resolve("azure:deployment", env=env).sends_cache_key is True  # type: ignore[attr-defined]
    assert resolve("groq:llama", env=env).sends_cache_key is False  # type: ignore[attr-defined]
    moved = {**env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # OpenAI's name, another server
    assert resolve("openai:gpt-4o-mini", env=moved).sends_cache_key is False  # type: ignore[attr-defined]
    off = provider_tables({"openai": {"cache": False}})
    assert resolve("openai:gpt-4o-mini", env=env, providers=off).sends_cache_key is False  # type: ignore[attr-defined]


def test_openai_sends_the_key_when_told(server: ProviderServer) -> None:
    told = OpenAIModel("gpt-test", api_key="sk-test", base_url=server.openai_base_url, settings=FAST,
                       caching=Caching(send_key=True))  # fmt: skip
    request = ModelRequest(messages=[Message(role="user", content="hi")], cache_key="0193-root")
    complete(told, request)
    assert server.requests[-1].json["prompt_cache_key"] == "0193-root"
    stream(OpenAIModel("gpt-test", api_key="sk-test", base_url=server.openai_base_url, settings=FAST), request)
    assert "prompt_cache_key" not in server.requests[-1].json
