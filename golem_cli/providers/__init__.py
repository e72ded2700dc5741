"""Model providers over HTTP (httpx, no provider SDK).

``resolve("provider:model")`` gives a ``golem_cli.core.model.Model``; the adapters
(``openai`` for every chat-completions server, ``anthropic`` for Claude) are imported only when
a model of theirs is resolved, so importing this package costs almost nothing.
"""

from golem_cli.providers.resolve import SETUP_HINT, default_model, resolve

__all__ = ["SETUP_HINT", "default_model", "resolve"]
