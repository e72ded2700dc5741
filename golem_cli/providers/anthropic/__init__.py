"""Anthropic Messages: ``wire`` maps requests and replies, ``stream`` folds stream events,
``model`` is the adapter."""

from golem_cli.providers.anthropic.model import DEFAULT_BASE_URL, AnthropicModel

__all__ = ["DEFAULT_BASE_URL", "AnthropicModel"]
