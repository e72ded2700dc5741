"""Anthropic Messages: ``wire`` maps requests and replies, ``stream`` folds stream events,
``model`` is the adapter.

``FACTS`` holds Anthropic's own facts; the adapter loads only when a model of this protocol is resolved.
"""

from golem_cli.providers.facts import ProviderFacts

FACTS = ProviderFacts(
    name="anthropic",
    protocol="anthropic",
    base_url="https://api.anthropic.com",
    key_env="ANTHROPIC_API_KEY",
    base_url_env="ANTHROPIC_BASE_URL",
    default_model="claude-sonnet-4-5",
    adapter="golem_cli.providers.anthropic.model:AnthropicModel",
    settings_check="golem_cli.providers.anthropic.wire:check_settings",
)
