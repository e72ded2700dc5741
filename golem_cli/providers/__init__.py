"""Model providers over HTTP (httpx, no provider SDK).

``resolve("provider:model")`` gives a ``golem_cli.core.model.Model``; the adapters
(``openai`` for every chat-completions server, ``anthropic`` for Claude) are imported only when
a model of theirs is resolved, so importing this package costs almost nothing.
"""

import sys

# httpx imports its command-line client whenever click is installed (typer brings it), and
# with it rich.progress, rich.syntax and pygments: about 100 ms more than httpx itself, before
# the first request of every chat and ``ask``. golem never runs that client; without the
# module httpx defines a stand-in ``main`` (its own fallback for a missing click).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from golem_cli.providers.resolve import SETUP_HINT, default_model, resolve  # noqa: E402

__all__ = ["SETUP_HINT", "default_model", "resolve"]
