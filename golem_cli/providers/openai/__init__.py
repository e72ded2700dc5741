"""OpenAI chat completions (and every server that speaks it): ``wire`` maps requests and
replies, ``stream`` folds streamed chunks, ``model`` is the adapter.

``FACTS`` holds OpenAI's own facts and ``check_settings`` the options the protocol refuses: a
chat checks its model with them before the adapter, or the wire module and the codec behind it,
loads (when a model of this protocol is first used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from golem_cli.core.errors import ModelError
from golem_cli.providers.facts import ProviderFacts

if TYPE_CHECKING:
    from golem_cli.core.model import ModelSettings

FACTS = ProviderFacts(
    name="openai",
    protocol="openai",
    base_url="https://api.openai.com/v1",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    default_model="gpt-4o-mini",
    adapter="golem_cli.providers.openai.model:OpenAIModel",
    settings_check="golem_cli.providers.openai:check_settings",
    prompt_cache_key=True,
)


def check_settings(settings: ModelSettings) -> None:
    """Refuse the options chat completions has no place for, before anything is sent."""
    if settings.thinking_budget is not None:
        raise ModelError(
            "thinking_budget is an option of Anthropic models",
            hint="OpenAI-compatible reasoning models take -o reasoning_effort low|medium|high instead",
        )
