"""Services that speak the OpenAI chat-completions API, known by name: ``ollama:llama3.2``,
``groq:llama-3.3-70b-versatile``, ``azure:my-deployment``.

One row per service: its base URL, the environment variable of its key, an example model.
``resolve`` reads them like the facts the protocol packages declare, so a new service is one
row, not a code path. A ``[providers.NAME]`` table in the config file overrides any value of a
row (``base_url``, ``api_key_env``, options).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from golem_cli.providers.facts import ProviderFacts

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"


def ollama_base_url(value: str) -> str:
    """``OLLAMA_HOST`` as Ollama itself reads it (``host``, ``host:port`` or a URL; a bind-all
    address means this machine), as the base URL of its OpenAI-compatible API."""
    value = value.strip()
    if not value:
        return OLLAMA_DEFAULT_HOST + "/v1"
    if "://" not in value:
        value = "http://" + value
    parts = urlsplit(value)
    host = parts.hostname or "127.0.0.1"
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    host = f"[{host}]" if ":" in host else host
    port = parts.port or (443 if parts.scheme == "https" else 11434)
    return f"{parts.scheme}://{host}:{port}{parts.path.rstrip('/')}/v1"


#: Azure OpenAI's API version when neither ``api_version`` nor ``OPENAI_API_VERSION`` says.
AZURE_API_VERSION = "2024-10-21"


def _preset(name: str, base_url: str, key_env: str, default_model: str = "") -> ProviderFacts:
    return ProviderFacts(name=name, protocol="openai", base_url=base_url, key_env=key_env, default_model=default_model)


PRESETS: dict[str, ProviderFacts] = {
    facts.name: facts
    for facts in (
        ProviderFacts(
            name="ollama",
            protocol="openai",
            base_url=OLLAMA_DEFAULT_HOST + "/v1",
            base_url_env="OLLAMA_HOST",
            read_base_url_env=ollama_base_url,
        ),
        _preset(
            "gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", "gemini-2.5-flash"
        ),
        _preset("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "openai/gpt-4o-mini"),
        _preset("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "llama-3.3-70b-versatile"),
        _preset("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", "mistral-small-latest"),
        _preset("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat"),
        _preset(
            "together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", "meta-llama/Llama-3.3-70B-Instruct-Turbo"
        ),
        _preset("xai", "https://api.x.ai/v1", "XAI_API_KEY", "grok-3-mini"),
        # The endpoint is the user's own resource (https://NAME.openai.azure.com); model = deployment.
        ProviderFacts(
            name="azure",
            protocol="openai",
            base_url="",
            key_env="AZURE_OPENAI_API_KEY",
            base_url_env="AZURE_OPENAI_ENDPOINT",
            azure=True,
            prompt_cache_key=True,
        ),  # fmt: skip
    )
}
