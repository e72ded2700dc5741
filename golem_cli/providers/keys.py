"""Where a provider's API key comes from, and the model golem picks when none is named.

Apart from ``resolve`` because a new chat asks for its default model before its prompt is
drawn: this module needs the providers' facts and the config's table type, not the endpoints,
options and adapters that resolving a model brings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from golem_cli.config.schema import ProviderTable
from golem_cli.core.errors import ModelError
from golem_cli.providers import anthropic, openai
from golem_cli.providers.facts import ProviderFacts

OFFLINE_MODEL = "offline:echo"
#: Whose key, when set, chooses the default model, in this order.
DEFAULT_PROVIDERS = (openai.FACTS, anthropic.FACTS)
NO_TABLE = ProviderTable()


def default_model(providers: Mapping[str, ProviderTable] | None = None, env: Mapping[str, str] | None = None) -> str:
    """The model to use when the user named none: OpenAI if a key for it is configured, else
    Anthropic, else ``offline:echo`` (then show ``resolve.SETUP_HINT``)."""
    env = os.environ if env is None else env
    for facts in DEFAULT_PROVIDERS:
        table = (providers or {}).get(facts.name) or NO_TABLE
        try:
            key, _ = api_key(facts.name, facts.protocol, table, facts, env)
        except ModelError:
            continue
        if key:
            return f"{facts.name}:{facts.default_model}"
    return OFFLINE_MODEL


def is_azure(table: ProviderTable, facts: ProviderFacts | None) -> bool:
    """Whether the provider is Azure OpenAI: its table says so, or it is the built-in one."""
    return table.type == "azure" or (facts is not None and facts.azure and not table.type)


def api_key(
    provider: str, kind: str, table: ProviderTable, facts: ProviderFacts | None, env: Mapping[str, str]
) -> tuple[str, str]:
    """(key, where the user configures it); a provider that needs a key and has none raises."""
    where = f"[providers.{provider}] of the config file"
    if table.api_key:
        return table.api_key, f"api_key in {where}"
    variable = table.api_key_env or (facts.key_env if facts else "")
    if variable and env.get(variable):
        return env[variable], variable
    if variable:
        state = "is empty" if variable in env else "is not set"
        raise ModelError(
            f"no API key for provider {provider!r}: {variable} {state}",
            hint=f"export {variable}=... or set api_key in {where}",
        )
    if kind == "anthropic" or is_azure(table, facts):
        raise ModelError(f"no API key for provider {provider!r}", hint=f"set api_key or api_key_env in {where}")
    return "", f"api_key or api_key_env in {where}"  # local servers usually need none
