"""A provider's adapter made on first use.

A chat needs its model chosen and checked before the prompt (a missing key or an option the
provider cannot take is said at once), but not the HTTP stack: httpx and the adapter cost
more to import than the rest of what the prompt needs. ``resolve(..., lazy=True)`` does every
check and returns a ``DeferredModel``, which builds the adapter when something first needs it
(the first request, most often).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from golem_cli.core.model import Model, ModelRequest, ModelResponse, ModelSettings, StreamEvent
from golem_cli.providers.options import merged


class DeferredModel:
    def __init__(
        self,
        name: str,
        build: Callable[[], Model],
        check: Callable[[ModelSettings], None],
        defaults: ModelSettings,
    ) -> None:
        self.name = name
        self.defaults = defaults
        self._build = build
        self._check = check
        self._adapter: Model | None = None
        self._lock = threading.Lock()  # the thread opening a chat's session and the chat may both ask

    def prepare(self) -> Model:
        """The adapter, built now if it was not yet."""
        with self._lock:
            if self._adapter is None:
                self._adapter = self._build()
            return self._adapter

    @property
    def built(self) -> bool:
        return self._adapter is not None

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self.prepare().request(request)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self.prepare().stream(request)

    def check_settings(self, settings: ModelSettings) -> None:
        """Refuse options the provider cannot take, as the adapter would (without building it)."""
        self._check(merged(self.defaults, settings))

    async def aclose(self) -> None:
        """Close the adapter's HTTP client, if one was made."""
        close = getattr(self._adapter, "aclose", None)
        if close is not None:
            await close()

    def __getattr__(self, name: str) -> Any:
        # Everything else golem asks of a model (retry_policy, accepts_url)
        # is the adapter's: asking builds it.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.prepare(), name)

    def __repr__(self) -> str:
        return f"DeferredModel({self.name!r}, built={self.built})"
