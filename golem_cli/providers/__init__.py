"""Model providers over HTTP (httpx, no provider SDK).

``resolve.resolve("provider:model")`` gives a ``golem_cli.core.model.Model``; the adapters
(``openai`` for every chat-completions server, ``anthropic`` for Claude) are imported only when
a model of theirs is resolved. ``keys.default_model`` is what a chat with no model named asks
before its prompt is drawn, so it needs neither.
"""
