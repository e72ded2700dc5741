"""Services that speak the OpenAI chat-completions API, known by name: ``ollama:llama3.2``.

One row per service; ``resolve`` reads them like the facts the protocol packages declare. A
``[providers.NAME]`` table in the config file overrides any value of a row.
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


PRESETS: dict[str, ProviderFacts] = {
    facts.name: facts
    for facts in (
        ProviderFacts(
            "ollama",
            "openai",
            OLLAMA_DEFAULT_HOST + "/v1",
            base_url_env="OLLAMA_HOST",
            read_base_url_env=ollama_base_url,
        ),
    )
}
