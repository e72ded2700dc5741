"""Anthropic Messages: ``wire`` maps requests and replies, ``stream`` folds stream events,
``model`` is the adapter."""

from golem_cli.providers.anthropic.model import AnthropicModel
from golem_cli.providers.resolve import ANTHROPIC_BASE_URL as DEFAULT_BASE_URL

__all__ = ["DEFAULT_BASE_URL", "AnthropicModel"]
