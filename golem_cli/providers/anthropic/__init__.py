"""Anthropic Messages: ``wire`` maps requests and replies, ``stream`` folds stream events,
``model`` is the adapter.

``FACTS`` holds Anthropic's own facts and ``check_settings`` the options the protocol refuses: a
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
    name="anthropic",
    protocol="anthropic",
    base_url="https://api.anthropic.com",
    key_env="ANTHROPIC_API_KEY",
    base_url_env="ANTHROPIC_BASE_URL",
    default_model="claude-sonnet-4-5",
    adapter="golem_cli.providers.anthropic.model:AnthropicModel",
    settings_check="golem_cli.providers.anthropic:check_settings",
)

_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def check_settings(settings: ModelSettings) -> None:
    """Refuse the options the Messages API has no place for, before anything is sent."""
    if settings.seed is not None:
        raise ModelError(
            "seed is not an option of Anthropic models",
            hint="leave seed out for this model (-o seed, or /option seed to unset it in a chat)",
        )
    if settings.temperature is not None and settings.temperature > 1:
        raise ModelError(
            f"temperature {settings.temperature:g} is above 1, the most Anthropic models take",
            hint="use a temperature from 0 to 1",
        )
    if settings.reasoning_effort and settings.reasoning_effort not in _EFFORTS:
        raise ModelError(
            f"reasoning_effort {settings.reasoning_effort!r} is not one Anthropic models take",
            hint=f"use one of {', '.join(_EFFORTS)}, or -o thinking_budget N",
        )
    if settings.thinking_budget and settings.max_tokens and settings.thinking_budget >= settings.max_tokens:
        raise ModelError(
            f"thinking_budget {settings.thinking_budget} must be below max_tokens {settings.max_tokens}",
            hint="raise max_tokens or lower thinking_budget (thinking counts against max_tokens)",
        )
