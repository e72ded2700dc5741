"""Model names, configuration and environment to adapters; what a user is told when it fails."""

from __future__ import annotations

import pytest
from golem_cli.config.schema import ProviderTable
from golem_cli.core.errors import ModelError
from golem_cli.providers.anthropic.model import AnthropicModel
from golem_cli.providers.keys import default_model
from golem_cli.providers.openai.model import OpenAIModel
from golem_cli.providers.resolve import SETUP_HINT, resolve

from tests.providers.helpers import provider_tables


def url(model: object) -> str:
    return model._http.endpoint.url  # type: ignore[attr-defined]


def test_openai_from_the_environment() -> None:
    model = resolve("openai:gpt-4o-mini", env={"OPENAI_API_KEY": "sk-1"})
    assert isinstance(model, OpenAIModel) and model.name == "openai:gpt-4o-mini" and model.model == "gpt-4o-mini"
    assert url(model) == "https://api.openai.com/v1/chat/completions"
    assert model._http._headers["authorization"] == "Bearer sk-1"
    model = resolve("openai:gpt-4o", env={"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "https://proxy.example/v1/"})
    assert url(model) == "https://proxy.example/v1/chat/completions"


def test_anthropic_from_the_environment() -> None:
    model = resolve("anthropic:claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://localhost:9/"})
    assert isinstance(model, AnthropicModel) and url(model) == "http://localhost:9/v1/messages"
    assert model._http._headers["x-api-key"] == "sk-a" and model._http._headers["anthropic-version"] == "2023-06-01"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("", "http://127.0.0.1:11434/v1/chat/completions"),
        ("0.0.0.0", "http://127.0.0.1:11434/v1/chat/completions"),
        ("gpu-box:8080", "http://gpu-box:8080/v1/chat/completions"),
        ("https://ollama.example", "https://ollama.example:443/v1/chat/completions"),
    ],
)
def test_ollama_needs_no_key_and_reads_ollama_host(host: str, expected: str) -> None:
    model = resolve("ollama:llama3.2:3b", env={"OLLAMA_HOST": host} if host else {})
    assert isinstance(model, OpenAIModel) and model.model == "llama3.2:3b" and url(model) == expected
    assert "authorization" not in model._http._headers


def test_named_openai_compatible_endpoints_from_the_config() -> None:
    providers = {
        "groq": {"type": "openai", "base_url": "https://api.groq.com/openai/v1", "api_key_env": "GROQ_API_KEY", "timeout": 30, "max_retries": 0},
        "vllm": {"base_url": "http://10.0.0.5:8000/v1"},
        "claude2": {"type": "anthropic", "api_key": "sk-c", "max_tokens": 1024},
    }
    groq = resolve("groq:llama-3.3-70b", providers=provider_tables(providers), env={"GROQ_API_KEY": "gsk", "OPENAI_API_KEY": "sk-openai"})
    assert url(groq) == "https://api.groq.com/openai/v1/chat/completions" and groq.name == "groq:llama-3.3-70b"
    assert groq._http._headers["authorization"] == "Bearer gsk"
    assert (groq._http.settings.timeout, groq.retry_policy.max_attempts) == (30.0, 1)
    vllm = resolve("vllm:qwen", providers=provider_tables(providers), env={"OPENAI_API_KEY": "sk-openai"})
    assert "authorization" not in vllm._http._headers  # the OpenAI key never travels to another host
    claude = resolve("claude2:claude-haiku-4-5", providers=provider_tables(providers), env={})
    assert isinstance(claude, AnthropicModel) and claude.defaults.max_tokens == 1024 and url(claude) == "https://api.anthropic.com/v1/messages"


def test_config_wins_over_the_shared_environment() -> None:
    providers = {"openai": {"api_key": "sk-config", "base_url": "https://gateway.example/v1"}}
    model = resolve("openai:gpt-4o", providers=provider_tables(providers), env={"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "https://other/v1"})
    assert model._http._headers["authorization"] == "Bearer sk-config" and url(model).startswith("https://gateway.example/")
    assert "api_key in [providers.openai]" in model._http.endpoint.key_hint


@pytest.mark.parametrize(
    ("name", "providers", "env", "message", "hint"),
    [
        ("openai:gpt-4o", None, {}, "no API key for provider 'openai'", "export OPENAI_API_KEY=..."),
        ("anthropic:claude", None, {}, "ANTHROPIC_API_KEY is not set", "export ANTHROPIC_API_KEY=..."),
        ("anthropic:claude", None, {"ANTHROPIC_API_KEY": ""}, "ANTHROPIC_API_KEY is empty", "export ANTHROPIC_API_KEY=..."),
        ("groq:llama", {"groq": {"base_url": "https://x/v1", "api_key_env": "GROQ_API_KEY"}}, {}, "GROQ_API_KEY is not set", "export GROQ_API_KEY"),
        ("mystery:model", None, {}, "unknown provider 'mystery'", "[providers.mystery]"),
        ("gpt-4o", None, {}, "is not provider:model", "openai:gpt-4o-mini"),
        ("local:m", {"local": {}}, {}, "has no base URL", 'base_url = "https://host/v1"'),
        ("local:m", {"local": {"base_url": "ftp://x"}}, {}, "not an http(s) URL", "https://host/v1"),
        ("offline:parrot", None, {}, "unknown offline model", "offline:echo"),
    ],
)
def test_configuration_errors_say_how_to_fix_them(name: str, providers: dict | None, env: dict, message: str, hint: str) -> None:
    with pytest.raises(ModelError) as caught:
        resolve(name, providers=provider_tables(providers), env=env)
    assert message in str(caught.value) and hint in caught.value.hint


def test_a_type_no_protocol_speaks_is_refused() -> None:
    """The config file never gets this far (its schema names the types); a program may."""
    with pytest.raises(ModelError) as caught:
        resolve("local:m", providers={"local": ProviderTable(type="gemini", base_url="http://x")}, env={})  # type: ignore[arg-type]
    assert "has type 'gemini'" in str(caught.value) and 'type = "openai"' in caught.value.hint


def test_offline_echo() -> None:
    offline = pytest.importorskip("golem_cli.core.offline")
    model = resolve("offline:echo", env={})
    assert isinstance(model, offline.EchoModel) and model.name == "offline:echo"


@pytest.mark.parametrize(
    ("providers", "env", "expected"),
    [
        (None, {}, "offline:echo"),
        (None, {"ANTHROPIC_API_KEY": "a"}, "anthropic:claude-sonnet-4-5"),
        (None, {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, "openai:gpt-4o-mini"),
        ({"anthropic": {"api_key": "a"}}, {}, "anthropic:claude-sonnet-4-5"),
        ({"openai": {"api_key_env": "MY_KEY"}}, {"MY_KEY": "k"}, "openai:gpt-4o-mini"),
        (None, {"OPENAI_API_KEY": ""}, "offline:echo"),
    ],
)
def test_default_model_follows_the_keys(providers: dict | None, env: dict, expected: str) -> None:
    assert default_model(provider_tables(providers), env) == expected
    assert "OPENAI_API_KEY" in SETUP_HINT


PRESET_URLS = {
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY"),
}


@pytest.mark.parametrize("name", sorted(PRESET_URLS))
def test_presets_work_with_just_their_key(name: str) -> None:
    base, variable = PRESET_URLS[name]
    model = resolve(f"{name}:some-model", env={variable: "k-1", "OPENAI_API_KEY": "sk-openai"})
    assert isinstance(model, OpenAIModel) and url(model) == base + "/chat/completions"
    assert model._http._headers["authorization"] == "Bearer k-1"
    with pytest.raises(ModelError) as caught:
        resolve(f"{name}:some-model", env={"OPENAI_API_KEY": "sk-openai"})  # never borrows another key
    assert variable in str(caught.value) and f"export {variable}=" in caught.value.hint
    table = resolve(f"{name}:m", providers=provider_tables({name: {"base_url": "http://proxy.local/v1"}}), env={variable: "k"})
    assert url(table) == "http://proxy.local/v1/chat/completions"  # a table overrides the preset


def test_azure_deployments_api_version_and_api_key_header() -> None:
    env = {"AZURE_OPENAI_API_KEY": "az-key", "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/"}
    model = resolve("azure:gpt-4o prod", env=env)
    assert url(model) == "https://res.openai.azure.com/openai/deployments/gpt-4o%20prod/chat/completions?api-version=2024-10-21"
    assert model._http._headers["api-key"] == "az-key" and "authorization" not in model._http._headers
    assert model._http.endpoint.shown_url == "https://res.openai.azure.com/openai/deployments/gpt-4o%20prod/chat/completions"
    later = resolve("azure:d", env={**env, "OPENAI_API_VERSION": "2025-01-01-preview"})
    assert url(later).endswith("?api-version=2025-01-01-preview")
    work = resolve("work:d", providers=provider_tables({"work": {"type": "azure", "base_url": "https://w.openai.azure.com", "api_key": "w",
                                                                 "api_version": "2024-06-01"}}), env={})  # fmt: skip
    assert url(work) == "https://w.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-06-01"
    with pytest.raises(ModelError) as caught:
        resolve("azure:d", env={"AZURE_OPENAI_API_KEY": "k"})
    assert "has no base URL" in str(caught.value) and "export AZURE_OPENAI_ENDPOINT=https://NAME.openai.azure.com" in caught.value.hint
    with pytest.raises(ModelError):
        resolve("work:d", providers=provider_tables({"work": {"type": "azure", "base_url": "https://w.openai.azure.com"}}), env={})


def test_azure_against_the_loopback_server(server) -> None:  # type: ignore[no-untyped-def]
    from tests.providers.helpers import complete

    model = resolve("azure:my-deployment", env={"AZURE_OPENAI_API_KEY": "sk-test", "AZURE_OPENAI_ENDPOINT": server.url})
    assert complete(model).message.content == "echo: hello there"
    (request,) = server.requests
    assert request.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "sk-test" and "authorization" not in request.headers
