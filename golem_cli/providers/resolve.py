"""From a model name (``provider:model``) and the configuration to a ready adapter.

What golem knows about a provider before any configuration are its facts: the protocol
packages declare their own (``openai.FACTS``, ``anthropic.FACTS``) and ``presets`` lists the
OpenAI-compatible services (``ollama``). ``offline:echo`` needs no network. Any other provider
name is a ``[providers.NAME]`` table of the config file (``config.schema.ProviderTable``, typed
and checked when the file was read), OpenAI-compatible unless it says ``type = "anthropic"``.

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
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from msgspec import Struct

from golem_cli.config.schema import ModelTable, ProviderTable
from golem_cli.core.errors import ModelError
from golem_cli.core.model import Model, ModelSettings
from golem_cli.providers import anthropic, keys, openai, options
from golem_cli.providers._endpoint import Endpoint, join_path
from golem_cli.providers.caching import Caching
from golem_cli.providers.facts import ProviderFacts, load_adapter, load_settings_check
from golem_cli.providers.presets import AZURE_API_VERSION, PRESETS

if TYPE_CHECKING:
    from golem_cli.providers._http_settings import HttpSettings

#: What to tell a user who has no real model configured.
SETUP_HINT = (
    "to use a real model: export OPENAI_API_KEY=... (or ANTHROPIC_API_KEY=...), run Ollama and "
    "pick ollama:MODEL, or add a [providers.NAME] table to the config file"
)

#: The wire protocols (each with the facts of its own service), by the ``type`` a table may name.
PROTOCOLS: dict[str, ProviderFacts] = {openai.FACTS.protocol: openai.FACTS, anthropic.FACTS.protocol: anthropic.FACTS}
#: Every provider golem knows without configuration, by the name used in model names.
BUILT_IN: dict[str, ProviderFacts] = {openai.FACTS.name: openai.FACTS, anthropic.FACTS.name: anthropic.FACTS, **PRESETS}
#: What a ``[providers.NAME]`` table declares; its other keys are model options (``options.OPTIONS``)
#: or a typo (``temprature``) that would otherwise be ignored without a word.
_TABLE_KEYS = tuple(key for key in ProviderTable.__struct_fields__ if key != ProviderTable.OTHERS)
_EXAMPLES = "for example openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.2 or offline:echo"
_NO_MODEL_TABLE = ModelTable()

Providers = Mapping[str, ProviderTable]


def resolve(
    name: str,
    *,
    providers: Providers | None = None,
    env: Mapping[str, str] | None = None,
    models: Mapping[str, ModelTable] | None = None,
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
        return _offline(model, lazy=lazy)
    table, facts = _table(provider, name, providers or {})
    kind = _protocol(provider, table, facts)
    api_key, key_hint = keys.api_key(provider, kind, table, facts, env)
    base_url = _base_url(provider, kind, table, facts, env)
    extra = _azure(model, base_url, table, env) if keys.is_azure(table, facts) else {}
    model_table = (models or {}).get(name)
    defaults = _defaults(name, table, model_table)
    adapter = PROTOCOLS[kind]
    caching = _caching(table, model_table, facts, base_url)

    def build() -> Model:
        return load_adapter(adapter)(
            model, api_key=api_key, base_url=base_url, provider=provider, settings=_http_settings(table),
            key_hint=key_hint, defaults=defaults, caching=caching, **extra,
        )  # fmt: skip

    if lazy:
        from golem_cli.providers.deferred import DeferredModel

        check = load_settings_check(adapter)
        check(defaults)
        return DeferredModel(name, build, check, defaults)
    chosen = build()
    check_settings = getattr(chosen, "check_settings", None)
    if check_settings is not None:
        check_settings(defaults)
    return chosen


def _table(provider: str, name: str, providers: Providers) -> tuple[ProviderTable, ProviderFacts | None]:
    """The provider's table (an empty one for a built-in provider without one) and its facts;
    ``ModelError`` for a provider golem does not know, or a key its table cannot hold."""
    table = providers.get(provider)
    facts = BUILT_IN.get(provider)
    if table is None and facts is None:
        raise ModelError(
            f"unknown provider {provider!r} in model name {name!r}",
            hint=f'{_EXAMPLES}; or add [providers.{provider}] with type = "openai" and base_url to the config file',
        )
    table = table or keys.NO_TABLE
    unknown = [key for key in table.options if key not in options.OPTIONS]
    if unknown:
        raise ModelError(
            f"unknown key {unknown[0]!r} in [providers.{provider}] of the config file",
            hint=f"a provider table takes {', '.join(_TABLE_KEYS)} and the model options {', '.join(options.OPTIONS)}",
        )
    return table, facts


def _defaults(name: str, table: ProviderTable, model_table: ModelTable | None) -> ModelSettings:
    """The model options of the provider's table, then of the model's own (which win)."""
    provider = name.partition(":")[0]
    defaults = options.settings_from(table.options.items(), f"in [providers.{provider}] of the config file")
    if model_table is None:
        return defaults
    return options.settings_from(model_table.options.items(), f'in [models."{name}"] of the config file', defaults)


def _caching(
    table: ProviderTable, model_table: ModelTable | None, facts: ProviderFacts | None, base_url: str
) -> Caching:
    """Prompt caching as the model's table, else the provider's, else the defaults say: on,
    five minutes, and the cache key where the endpoint documents it: OpenAI at its own URL,
    and Azure OpenAI (docs/adr/0024)."""
    model_table = model_table or _NO_MODEL_TABLE
    enabled = model_table.cache if model_table.cache is not None else table.cache
    ttl = model_table.cache_ttl or table.cache_ttl or "5m"
    documented = facts is not None and facts.prompt_cache_key and (facts.azure or base_url == facts.base_url)
    documented = documented or keys.is_azure(table, facts)
    send_key = table.prompt_cache_key if table.prompt_cache_key is not None else documented
    return Caching(enabled=enabled is not False, ttl=ttl, send_key=send_key)


def _azure(model: str, base_url: str, table: ProviderTable, env: Mapping[str, str]) -> dict[str, str]:
    """Azure OpenAI's URL (the model is a deployment) and key header."""
    version = table.api_version or env.get("OPENAI_API_VERSION") or AZURE_API_VERSION
    deployment = quote(model, safe="")
    path = f"/openai/deployments/{deployment}/chat/completions"
    return {"chat_url": join_path(base_url, path, f"api-version={quote(version)}"), "key_header": "api-key"}


def key_variables(providers: Providers | None = None) -> frozenset[str]:
    """Every environment variable golem may read a provider's key from: each built-in
    provider's and each table's ``api_key_env`` (what a command golem runs must not see)."""
    names = {facts.key_env for facts in (*BUILT_IN.values(), *PROTOCOLS.values())}
    names.update(table.api_key_env for table in (providers or {}).values() if table.api_key_env)
    return frozenset(name for name in names if name)


class ProviderStatus(Struct, frozen=True, kw_only=True):
    """What ``golem models`` shows for one provider: where it points and whether it can be
    used, never the key itself."""

    name: str
    kind: str  # "openai", "anthropic" or "offline"
    base_url: str = ""
    key: str = ""  # where the key comes from ("OPENAI_API_KEY", "api_key in ...", "" if none needed)
    problem: str = ""  # why it cannot be used now, with what to do
    preset: bool = False  # a built-in OpenAI-compatible service (presets.py), usable with just its key
    key_env: str = ""  # the environment variable its key is read from, when it has one
    example: str = ""  # a model name to try (``groq:llama-3.3-70b-versatile``)

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "type": self.kind, "base_url": self.base_url, "key": self.key,
                "usable": not self.problem, "problem": self.problem, "preset": self.preset,
                "key_env": self.key_env, "example": self.example}  # fmt: skip


def provider_statuses(providers: Providers | None = None, env: Mapping[str, str] | None = None) -> list[ProviderStatus]:
    """Every built-in and configured provider with its endpoint and whether its key is set."""
    env = os.environ if env is None else env
    providers = providers or {}
    names = [*BUILT_IN, *sorted(n for n in providers if n not in BUILT_IN and n != "offline")]
    offline = ProviderStatus(name="offline", kind="offline")
    return [offline, *(_status(name, providers.get(name) or keys.NO_TABLE, BUILT_IN.get(name), env) for name in names)]


def _status(name: str, table: ProviderTable, facts: ProviderFacts | None, env: Mapping[str, str]) -> ProviderStatus:
    base_url, key, problem = "", "", ""
    try:
        kind = _protocol(name, table, facts)
        base_url = _base_url(name, kind, table, facts, env)
        value, key = keys.api_key(name, kind, table, facts, env)
        key = key if value else ""  # no key is set, and none is needed (a local server)
    except ModelError as e:
        kind = table.type or (facts.protocol if facts else "openai")
        problem = f"{e}; {e.hint}" if e.hint else str(e)
    return ProviderStatus(
        name=name, kind=kind, key=key, problem=problem, preset=name in PRESETS,
        base_url=Endpoint(name, "", base_url).shown_url if base_url else "",  # never userinfo or a query
        key_env=table.api_key_env or (facts.key_env if facts else ""),
        example=f"{name}:{facts.default_model}" if facts and facts.default_model else "",
    )  # fmt: skip


def _offline(model: str, *, lazy: bool) -> Model:
    """The offline echo model; with ``lazy`` built on first use, as an HTTP provider's adapter
    is (it takes every option, so there is nothing else to check)."""
    if model != "echo":
        raise ModelError(f"unknown offline model {model!r}", hint="the offline model is offline:echo")
    if lazy:
        from golem_cli.providers.deferred import DeferredModel

        return DeferredModel(keys.OFFLINE_MODEL, _echo, _takes_every_option, ModelSettings())
    return _echo()


def _echo() -> Model:
    try:
        from golem_cli.core.offline import EchoModel
    except ImportError:
        raise ModelError("the offline echo model is not available in this build", hint=SETUP_HINT) from None
    return EchoModel()


def _takes_every_option(settings: ModelSettings) -> None:
    pass


def _protocol(provider: str, table: ProviderTable, facts: ProviderFacts | None) -> str:
    kind = table.type or (facts.protocol if facts else "openai")
    if kind == "azure":  # Azure OpenAI speaks chat completions, at its own URLs
        return "openai"
    if kind not in PROTOCOLS:
        raise ModelError(
            f"provider {provider!r} has type {kind!r}",
            hint=f'set type = "openai" (any OpenAI-compatible server), "anthropic" or "azure" '
            f"in [providers.{provider}]",
        )
    return kind


def _base_url(
    provider: str, kind: str, table: ProviderTable, facts: ProviderFacts | None, env: Mapping[str, str]
) -> str:
    """Where the provider is: its table's ``base_url``, else its variable, else its facts;
    ``ModelError`` when there is none, or it is not a plain http(s) URL."""
    url, source = table.base_url or "", f"base_url in [providers.{provider}]"
    if not url and facts is not None:
        url, source = _url_from_env(provider, facts, env), facts.base_url_env
    if not url and kind == "anthropic":  # a named Anthropic table defaults to Anthropic itself
        url = PROTOCOLS[kind].base_url
    if not url:
        example = "https://NAME.openai.azure.com" if keys.is_azure(table, facts) else "https://host/v1"
        variable = f"export {facts.base_url_env}={example}, or " if facts and facts.base_url_env else ""
        raise ModelError(
            f"provider {provider!r} has no base URL",
            hint=f'{variable}add base_url = "{example}" to [providers.{provider}] of the config file',
        )
    _check_url(provider, source, url)
    return url


def _url_from_env(provider: str, facts: ProviderFacts, env: Mapping[str, str]) -> str:
    """A built-in provider's URL from its variable (read as its facts say), else its own."""
    value = env.get(facts.base_url_env, "") if facts.base_url_env else ""
    try:
        url = facts.read_base_url_env(value) if facts.read_base_url_env else value
    except ValueError as exc:
        raise _bad_url(provider, facts.base_url_env, str(exc)) from None
    return url or facts.base_url


def _check_url(provider: str, source: str, url: str) -> None:
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


def _bad_url(provider: str, source: str, problem: str) -> ModelError:
    return ModelError(
        f"base URL of provider {provider!r} ({source}) is not a valid URL: {problem}",
        hint="write it like https://host/v1",
    )


def _http_settings(table: ProviderTable) -> HttpSettings:
    """The table's timeouts, limits and retries over the adapter's defaults (each value was
    checked above 0 with the file, so ``or`` only replaces a value not given)."""
    from msgspec.structs import replace

    from golem_cli.providers._http_settings import HttpSettings

    defaults = HttpSettings()
    retries = defaults.retry.max_attempts - 1 if table.max_retries is None else table.max_retries
    return HttpSettings(
        timeout=table.timeout or defaults.timeout,
        connect_timeout=table.connect_timeout or defaults.connect_timeout,
        retry=replace(defaults.retry, max_attempts=retries + 1),
        max_reply_bytes=table.max_reply_bytes or defaults.max_reply_bytes,
        max_idle=table.max_idle or defaults.max_idle,
    )
