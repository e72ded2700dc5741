"""From a model name (``provider:model``) and the configuration to a ready adapter.

Built-in providers: ``openai``, ``anthropic``, ``ollama`` (OpenAI-compatible, local, no key)
and ``offline`` (``offline:echo``, no network). Any other provider name is a ``[providers.NAME]``
table of the config file, OpenAI-compatible unless it says ``type = "anthropic"``.

Where values come from, first hit wins: the config table (``api_key``, ``api_key_env``,
``base_url``), then the conventional environment variables (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, ``OLLAMA_HOST``). The
config wins because those variables are shared with other tools, while the table is golem's
own. A custom endpoint never falls back to ``OPENAI_API_KEY``: that key must not travel to
another host. Adapters are imported only when a model of theirs is resolved.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from golem_cli.core.errors import ModelError
from golem_cli.core.model import Model

if TYPE_CHECKING:
    from golem_cli.providers._http import HttpSettings

OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5"
OFFLINE_MODEL = "offline:echo"
OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"

#: What to tell a user who has no real model configured.
SETUP_HINT = (
    "to use a real model: export OPENAI_API_KEY=... (or ANTHROPIC_API_KEY=...), run Ollama and "
    "pick ollama:MODEL, or add a [providers.NAME] table to the config file"
)

_KIND = {"openai": "openai", "anthropic": "anthropic", "ollama": "openai"}
_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_BASE_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
_EXAMPLES = "for example openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.2 or offline:echo"

Config = Mapping[str, Mapping[str, Any]]


def resolve(name: str, *, providers: Config | None = None, env: Mapping[str, str] | None = None) -> Model:
    """The adapter for ``name``; raises ``ModelError`` (with a hint saying how to configure it)
    for a malformed name, an unknown provider or a missing key."""
    env = os.environ if env is None else env
    provider, sep, model = name.partition(":")
    if not sep or not provider or not model:
        raise ModelError(f"model name {name!r} is not provider:model", hint=_EXAMPLES)
    if provider == "offline":
        return _offline(model)
    table = (providers or {}).get(provider)
    if table is None and provider not in _KIND:
        raise ModelError(
            f"unknown provider {provider!r} in model name {name!r}",
            hint=f'{_EXAMPLES}; or add [providers.{provider}] with type = "openai" and base_url to the config file',
        )
    table = table or {}
    kind = str(table.get("type") or _KIND.get(provider, "openai"))
    if kind not in ("openai", "anthropic"):
        raise ModelError(
            f"provider {provider!r} has type {kind!r}",
            hint=f'set type = "openai" (any OpenAI-compatible server) or "anthropic" in [providers.{provider}]',
        )
    settings = _settings(provider, table)
    api_key, key_hint = _api_key(provider, kind, table, env)
    base_url = _base_url(provider, kind, table, env)
    if kind == "anthropic":
        from golem_cli.providers.anthropic.model import DEFAULT_MAX_TOKENS, AnthropicModel

        max_tokens = _number(provider, table, "max_tokens", DEFAULT_MAX_TOKENS, int)
        return AnthropicModel(
            model, api_key=api_key, base_url=base_url, provider=provider,
            max_tokens=max_tokens, settings=settings, key_hint=key_hint,
        )  # fmt: skip
    from golem_cli.providers.openai.model import OpenAIModel

    return OpenAIModel(
        model, api_key=api_key, base_url=base_url, provider=provider, settings=settings, key_hint=key_hint
    )


def default_model(providers: Config | None = None, env: Mapping[str, str] | None = None) -> str:
    """The model to use when the user named none: OpenAI if a key for it is configured, else
    Anthropic, else ``offline:echo`` (then show ``SETUP_HINT``)."""
    env = os.environ if env is None else env
    for provider, model in (("openai", OPENAI_DEFAULT_MODEL), ("anthropic", ANTHROPIC_DEFAULT_MODEL)):
        table = (providers or {}).get(provider) or {}
        try:
            key, _ = _api_key(provider, provider, table, env)
        except ModelError:
            continue
        if key:
            return f"{provider}:{model}"
    return OFFLINE_MODEL


@dataclass(frozen=True)
class ProviderStatus:
    """What ``golem models`` shows for one provider: where it points and whether it can be
    used, never the key itself."""

    name: str
    kind: str  # "openai", "anthropic" or "offline"
    base_url: str
    key: str  # where the key comes from ("OPENAI_API_KEY", "api_key in ...", "" if none needed)
    problem: str = ""  # why it cannot be used now, with what to do

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "type": self.kind, "base_url": self.base_url, "key": self.key,
                "usable": not self.problem, "problem": self.problem}  # type: ignore[dict-item]  # fmt: skip


def provider_statuses(providers: Config | None = None, env: Mapping[str, str] | None = None) -> list[ProviderStatus]:
    """Every built-in and configured provider with its endpoint and whether its key is set."""
    env = os.environ if env is None else env
    names = [
        "openai",
        "anthropic",
        "ollama",
        *sorted(n for n in (providers or {}) if n not in _KIND and n != "offline"),
    ]
    out = [ProviderStatus("offline", "offline", "", "", "")]
    for name in names:
        table = (providers or {}).get(name) or {}
        kind = str(table.get("type") or _KIND.get(name, "openai"))
        base_url, key, problem = "", "", ""
        try:
            base_url = _base_url(name, kind, table, env)
            _, key = _api_key(name, kind, table, env)
            if name == "ollama" and not table.get("api_key") and not table.get("api_key_env"):
                key = ""  # a local server needs none
        except ModelError as e:
            problem = f"{e}; {e.hint}" if e.hint else str(e)
        out.append(ProviderStatus(name, kind, base_url, key, problem))
    return out


def _offline(model: str) -> Model:
    if model != "echo":
        raise ModelError(f"unknown offline model {model!r}", hint="the offline model is offline:echo")
    try:
        from golem_cli.core.offline import EchoModel
    except ImportError:
        raise ModelError("the offline echo model is not available in this build", hint=SETUP_HINT) from None
    return EchoModel()


def _api_key(provider: str, kind: str, table: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str]:
    """(key, where the user configures it); a provider that needs a key and has none raises."""
    where = f"[providers.{provider}] of the config file"
    if table.get("api_key"):
        return str(table["api_key"]), f"api_key in {where}"
    variable = str(table.get("api_key_env") or _KEY_ENV.get(provider, ""))
    if variable and env.get(variable):
        return env[variable], variable
    if variable:
        raise ModelError(
            f"no API key for provider {provider!r}: {variable} is not set",
            hint=f"export {variable}=... or set api_key in {where}",
        )
    if kind == "anthropic":
        raise ModelError(f"no API key for provider {provider!r}", hint=f"set api_key or api_key_env in {where}")
    return "", f"api_key or api_key_env in {where}"  # local servers usually need none


def _base_url(provider: str, kind: str, table: Mapping[str, Any], env: Mapping[str, str]) -> str:
    url = str(table.get("base_url") or "") or env.get(_BASE_ENV.get(provider, ""), "")
    if not url and provider == "ollama":
        url = _ollama_host(env.get("OLLAMA_HOST", "")) + "/v1"
    if not url and kind == "anthropic":
        url = ANTHROPIC_BASE_URL
    if not url and provider == "openai":
        url = OPENAI_BASE_URL
    if not url:
        raise ModelError(
            f"provider {provider!r} has no base URL",
            hint=f'add base_url = "https://host/v1" to [providers.{provider}] of the config file',
        )
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise ModelError(
            f"base URL of provider {provider!r} is not an http(s) URL", hint="write it like https://host/v1"
        )
    return url


def _ollama_host(value: str) -> str:
    """``OLLAMA_HOST`` as Ollama itself reads it: ``host``, ``host:port`` or a URL; a bind-all
    address means this machine."""
    value = value.strip()
    if not value:
        return OLLAMA_DEFAULT_HOST
    if "://" not in value:
        value = "http://" + value
    parts = urlsplit(value)
    host = parts.hostname or "127.0.0.1"
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    host = f"[{host}]" if ":" in host else host
    port = parts.port or (443 if parts.scheme == "https" else 11434)
    return f"{parts.scheme}://{host}:{port}{parts.path.rstrip('/')}"


def _settings(provider: str, table: Mapping[str, Any]) -> HttpSettings:
    from golem_cli.providers._http import HttpSettings

    defaults = HttpSettings()
    return HttpSettings(
        timeout=_number(provider, table, "timeout", defaults.timeout, float),
        connect_timeout=_number(provider, table, "connect_timeout", defaults.connect_timeout, float),
        max_retries=_number(provider, table, "max_retries", defaults.max_retries, int, minimum=0),
    )


def _number(provider: str, table: Mapping[str, Any], key: str, default: Any, kind: type, minimum: float = 1e-9) -> Any:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum or kind(value) != value:
        raise ModelError(
            f"{key} = {value!r} in [providers.{provider}] is not a valid {kind.__name__}",
            hint=f"set {key} to a positive number" + (" of seconds" if "timeout" in key else ""),
        )
    return kind(value)
