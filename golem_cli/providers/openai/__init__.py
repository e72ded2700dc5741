"""OpenAI chat completions (and every server that speaks it): ``wire`` maps requests and
replies, ``stream`` folds streamed chunks, ``model`` is the adapter."""

from golem_cli.providers.openai.model import OpenAIModel
from golem_cli.providers.resolve import OPENAI_BASE_URL as DEFAULT_BASE_URL

__all__ = ["DEFAULT_BASE_URL", "OpenAIModel"]
