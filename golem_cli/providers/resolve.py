"""From a model name (``provider:model``) and the configuration to a ready adapter.

What golem knows about a provider before any configuration are its facts: the protocol
packages declare their own (``openai.FACTS``, ``anthropic.FACTS``) and ``presets`` lists the
OpenAI-compatible services (``ollama``). ``offline:echo`` needs no network. Any other provider
name is a ``[providers.NAME]`` table of the config file, OpenAI-compatible unless it says
``type = "anthropic"``.

Where values come from, first hit wins: the config table (``api_key``, ``api_key_env``,
``base_url``), then the provider's environment variables (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ...), then its facts. The config wins because those variables are shared
with other tools, while the table is golem's own. A custom endpoint never falls back to
``OPENAI_API_KEY``: that key must not travel to another host. Adapters are imported only when a
model of theirs is resolved.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from golem_cli.core.errors import ModelError
from golem_cli.core.model import Model
from golem_cli.providers import anthropic, openai, options
from golem_cli.providers._endpoint import Endpoint, join_path
from golem_cli.providers.facts import ProviderFacts, load_adapter, load_settings_check
from golem_cli.providers.presets import AZURE_API_VERSION, PRESETS

if TYPE_CHECKING:
    from golem_cli.providers._http_settings import HttpSettings

OFFLINE_MODEL = "offline:echo"

#: What to tell a user who has no real model configured.
SETUP_HINT = (
    "to use a real model: export OPENAI_API_KEY=... (or ANTHROPIC_API_KEY=...), run Ollama and "
    "pick ollama:MODEL, or add a [providers.NAME] table to the config file"
)

#: The wire protocols (each with the facts of its own service), by the ``type`` a table may name.
PROTOCOLS: dict[str, ProviderFacts] = {openai.FACTS.protocol: openai.FACTS, anthropic.FACTS.protocol: anthropic.FACTS}
#: Every provider golem knows without configuration, by the name used in model names.
BUILT_IN: dict[str, ProviderFacts] = {openai.FACTS.name: openai.FACTS, anthropic.FACTS.name: anthropic.FACTS, **PRESETS}
#: Whose key, when set, chooses the default model, in this order.
DEFAULT_PROVIDERS = (openai.FACTS, anthropic.FACTS)
#: What a ``[providers.NAME]`` table may hold besides the model options (``options.OPTIONS``):
#: anything else is a typo (``temprature``) that would otherwise be ignored without a word.
_TABLE_KEYS = ("type", "base_url", "api_key", "api_key_env", "api_version", "timeout", "connect_timeout",
               "max_retries", "max_reply_bytes", "max_idle")  # fmt: skip
_EXAMPLES = "for example openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.2 or offline:echo"

Config = Mapping[str, Mapping[str, Any]]


def resolve(
    name: str,
    *,
    providers: Config | None = None,
    env: Mapping[str, str] | None = None,
    models: Config | None = None,
    lazy: bool = False,
) -> Model:
    """The adapter for ``name``; raises ``ModelError`` (with a hint saying how to configure it)
    for a malformed name, an unknown provider, a missing key or an option it cannot take.
    With ``lazy``, an HTTP provider's adapter is built on first use (``DeferredModel``), after
    the same checks: a chat's prompt does not wait for the HTTP stack.

    Options (``temperature``, ``max_tokens``, ...) come from the provider's table and then the
    model's own table (``models["provider:model"]``), which wins."""
    env = os.environ if env is None else env
    provider, sep, model = name.partition(":")
    if not sep or not provider or not model:
        raise ModelError(f"model name {name!r} is not provider:model", hint=_EXAMPLES)
    if provider == "offline":
        return _offline(model)
    table = (providers or {}).get(provider)
    facts = BUILT_IN.get(provider)
    if table is None and facts is None:
        raise ModelError(
            f"unknown provider {provider!r} in model name {name!r}",
            hint=f'{_EXAMPLES}; or add [providers.{provider}] with type = "openai" and base_url to the config file',
        )
    table = table or {}
    unknown = [key for key in table if key not in _TABLE_KEYS and key not in options.OPTIONS]
    if unknown:
        raise ModelError(
            f"unknown key {unknown[0]!r} in [providers.{provider}] of the config file",
            hint=f"a provider table takes {', '.join(_TABLE_KEYS)} and the model options {', '.join(options.OPTIONS)}",
        )
    kind = _protocol(provider, table, facts)
    settings = _settings(provider, table)
    api_key, key_hint = _api_key(provider, kind, table, facts, env)
    base_url = _base_url(provider, kind, table, facts, env)
    extra: dict[str, str] = {}
    if _is_azure(table, facts):
        version = str(table.get("api_version") or env.get("OPENAI_API_VERSION") or AZURE_API_VERSION)
        deployment = quote(model, safe="")
        extra["chat_url"] = join_path(
            base_url, f"/openai/deployments/{deployment}/chat/completions", f"api-version={quote(version)}"
        )
        extra["key_header"] = "api-key"
    defaults = options.settings_from(options.options_in(table), f"in [providers.{provider}] of the config file")
    model_table = (models or {}).get(name) or {}
    defaults = options.settings_from(model_table.items(), f'in [models."{name}"] of the config file', defaults)
    facts = PROTOCOLS[kind]

    def build() -> Model:
        adapter = load_adapter(facts)
        return adapter(
            model, api_key=api_key, base_url=base_url, provider=provider, settings=settings, key_hint=key_hint,
            defaults=defaults, **extra,
        )  # fmt: skip

    if lazy:
        from golem_cli.providers.deferred import DeferredModel

        check = load_settings_check(facts)
        check(defaults)
        return DeferredModel(name, build, check, defaults)
    chosen = build()
    check_settings = getattr(chosen, "check_settings", None)
    if check_settings is not None:
        check_settings(defaults)
    return chosen


def default_model(providers: Config | None = None, env: Mapping[str, str] | None = None) -> str:
    """The model to use when the user named none: OpenAI if a key for it is configured, else
    Anthropic, else ``offline:echo`` (then show ``SETUP_HINT``)."""
    env = os.environ if env is None else env
    for facts in DEFAULT_PROVIDERS:
        table = (providers or {}).get(facts.name) or {}
        try:
            key, _ = _api_key(facts.name, facts.protocol, table, facts, env)
        except ModelError:
            continue
        if key:
            return f"{facts.name}:{facts.default_model}"
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
    preset: bool = False  # a built-in OpenAI-compatible service (presets.py), usable with just its key
    key_env: str = ""  # the environment variable its key is read from, when it has one
    example: str = ""  # a model name to try (``groq:llama-3.3-70b-versatile``)

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "type": self.kind, "base_url": self.base_url, "key": self.key,
                "usable": not self.problem, "problem": self.problem, "preset": self.preset,
                "key_env": self.key_env, "example": self.example}  # fmt: skip


def provider_statuses(providers: Config | None = None, env: Mapping[str, str] | None = None) -> list[ProviderStatus]:
    """Every built-in and configured provider with its endpoint and whether its key is set."""
    env = os.environ if env is None else env
    names = [*BUILT_IN, *sorted(n for n in (providers or {}) if n not in BUILT_IN and n != "offline")]
    out = [ProviderStatus("offline", "offline", "", "", "")]
    for name in names:
        table = (providers or {}).get(name) or {}
        facts = BUILT_IN.get(name)
        base_url, key, problem = "", "", ""
        try:
            kind = _protocol(name, table, facts)
            base_url = _base_url(name, kind, table, facts, env)
            value, key = _api_key(name, kind, table, facts, env)
            if not value:
                key = ""  # no key is set, and none is needed (a local server)
        except ModelError as e:
            kind = str(table.get("type") or (facts.protocol if facts else "openai"))
            problem = f"{e}; {e.hint}" if e.hint else str(e)
        base_url = Endpoint(name, "", base_url).shown_url if base_url else ""  # never userinfo or a query
        key_env = str(table.get("api_key_env") or (facts.key_env if facts else ""))
        example = f"{name}:{facts.default_model}" if facts and facts.default_model else ""
        out.append(ProviderStatus(name, kind, base_url, key, problem, name in PRESETS, key_env, example))
    return out


def _offline(model: str) -> Model:
    if model != "echo":
        raise ModelError(f"unknown offline model {model!r}", hint="the offline model is offline:echo")
    try:
        from golem_cli.core.offline import EchoModel
    except ImportError:
        raise ModelError("the offline echo model is not available in this build", hint=SETUP_HINT) from None
    return EchoModel()


def _protocol(provider: str, table: Mapping[str, Any], facts: ProviderFacts | None) -> str:
    kind = str(table.get("type") or (facts.protocol if facts else "openai"))
    if kind == "azure":  # Azure OpenAI speaks chat completions, at its own URLs
        return "openai"
    if kind not in PROTOCOLS:
        raise ModelError(
            f"provider {provider!r} has type {kind!r}",
            hint=f'set type = "openai" (any OpenAI-compatible server), "anthropic" or "azure" '
            f"in [providers.{provider}]",
        )
    return kind


def _is_azure(table: Mapping[str, Any], facts: ProviderFacts | None) -> bool:
    return table.get("type") == "azure" or (facts is not None and facts.azure and not table.get("type"))


def _api_key(
    provider: str, kind: str, table: Mapping[str, Any], facts: ProviderFacts | None, env: Mapping[str, str]
) -> tuple[str, str]:
    """(key, where the user configures it); a provider that needs a key and has none raises."""
    where = f"[providers.{provider}] of the config file"
    if table.get("api_key"):
        return str(table["api_key"]), f"api_key in {where}"
    variable = str(table.get("api_key_env") or (facts.key_env if facts else ""))
    if variable and env.get(variable):
        return env[variable], variable
    if variable:
        raise ModelError(
            f"no API key for provider {provider!r}: {variable} is not set",
            hint=f"export {variable}=... or set api_key in {where}",
        )
    if kind == "anthropic" or _is_azure(table, facts):
        raise ModelError(f"no API key for provider {provider!r}", hint=f"set api_key or api_key_env in {where}")
    return "", f"api_key or api_key_env in {where}"  # local servers usually need none


def _base_url(
    provider: str, kind: str, table: Mapping[str, Any], facts: ProviderFacts | None, env: Mapping[str, str]
) -> str:
    url = str(table.get("base_url") or "")
    source = f"base_url in [providers.{provider}]"
    if not url and facts is not None:
        value = env.get(facts.base_url_env, "") if facts.base_url_env else ""
        source = facts.base_url_env
        try:
            url = facts.read_base_url_env(value) if facts.read_base_url_env else value
        except ValueError as exc:
            raise _bad_url(provider, source, str(exc)) from None
        url = url or facts.base_url
    if not url and kind == "anthropic":  # a named Anthropic table defaults to Anthropic itself
        url = PROTOCOLS[kind].base_url
    if not url:
        example = "https://NAME.openai.azure.com" if _is_azure(table, facts) else "https://host/v1"
        variable = f"export {facts.base_url_env}={example}, or " if facts and facts.base_url_env else ""
        raise ModelError(
            f"provider {provider!r} has no base URL",
            hint=f'{variable}add base_url = "{example}" to [providers.{provider}] of the config file',
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number
    except ValueError as exc:  # http://[::1 and the like: a configuration error, not a crash
        raise _bad_url(provider, source, str(exc)) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(
            f"base URL of provider {provider!r} ({source}) is not an http(s) URL", hint="write it like https://host/v1"
        )
    if parts.username is not None or parts.password is not None:  # httpx would send it as Basic auth
        raise ModelError(
            f"base URL of provider {provider!r} ({source}) holds a user name or password, which golem does not send",
            hint=f"remove them from the URL; put the key in api_key or api_key_env of [providers.{provider}]",
        )
    return url


def _bad_url(provider: str, source: str, problem: str) -> ModelError:
    return ModelError(
        f"base URL of provider {provider!r} ({source}) is not a valid URL: {problem}",
        hint="write it like https://host/v1",
    )


def _settings(provider: str, table: Mapping[str, Any]) -> HttpSettings:
    from dataclasses import replace

    from golem_cli.providers._http_settings import HttpSettings

    defaults = HttpSettings()
    retries = _number(provider, table, "max_retries", defaults.retry.max_attempts - 1, int, minimum=0)
    return HttpSettings(
        timeout=_number(provider, table, "timeout", defaults.timeout, float),
        connect_timeout=_number(provider, table, "connect_timeout", defaults.connect_timeout, float),
        retry=replace(defaults.retry, max_attempts=retries + 1),
        max_reply_bytes=_number(provider, table, "max_reply_bytes", defaults.max_reply_bytes, int, minimum=1),
        max_idle=_number(provider, table, "max_idle", defaults.max_idle, float),
    )


def _number(provider: str, table: Mapping[str, Any], key: str, default: Any, kind: type, minimum: float = 1e-9) -> Any:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum or kind(value) != value:
        raise ModelError(
            f"{key} = {value!r} in [providers.{provider}] is not a valid {kind.__name__}",
            hint=f"set {key} to a positive number" + (" of seconds" if "timeout" in key else ""),
        )
    return kind(value)
