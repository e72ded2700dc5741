"""OpenAI chat completions (and every server that speaks it): ``wire`` maps requests and
replies, ``stream`` folds streamed chunks, ``model`` is the adapter.

``FACTS`` holds OpenAI's own facts; the adapter loads only when a model of this protocol is resolved.
"""

from golem_cli.providers.facts import ProviderFacts

FACTS = ProviderFacts(
    name="openai",
    protocol="openai",
    base_url="https://api.openai.com/v1",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    default_model="gpt-4o-mini",
    adapter="golem_cli.providers.openai.model:OpenAIModel",
    settings_check="golem_cli.providers.openai.wire:check_settings",
    prompt_cache_key=True,
)
