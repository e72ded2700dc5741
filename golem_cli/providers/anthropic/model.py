"""The native Anthropic adapter: ``POST {base_url}/v1/messages`` with ``anthropic-version``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec

from golem_cli.core.errors import ModelError
from golem_cli.core.model import ModelRequest, ModelResponse, ModelSettings, StreamDone, StreamEvent
from golem_cli.providers._endpoint import Endpoint, join_path
from golem_cli.providers._http import HttpClient, HttpModel, is_json
from golem_cli.providers._http_settings import HttpSettings
from golem_cli.providers._sse import Progress, decode_event, decode_typed, read_events
from golem_cli.providers._wire import events_of
from golem_cli.providers._wording import event_error, stream_cut
from golem_cli.providers.anthropic import FACTS, check_settings
from golem_cli.providers.anthropic.stream import EventFolder, event_decoder
from golem_cli.providers.anthropic.wire import parse_response, request_body
from golem_cli.providers.caching import Caching
from golem_cli.providers.options import merged

API_VERSION = "2023-06-01"
#: Sent when the request does not set one (the API requires it); every current model allows it.
DEFAULT_MAX_TOKENS = 8192


class AnthropicModel(HttpModel):
    """A Claude model over the Messages API."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str = FACTS.base_url,
        provider: str = FACTS.name,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        settings: HttpSettings | None = None,
        key_hint: str = FACTS.key_env,
        defaults: ModelSettings | None = None,
        caching: Caching | None = None,
    ) -> None:
        self.model = model
        self.caching = caching or Caching()
        self.name = f"{provider}:{model}"
        self.defaults = defaults or ModelSettings()
        self.max_tokens = max_tokens
        url = join_path(base_url, "/v1/messages")
        endpoint = Endpoint(provider, model, url, key_hint=key_hint, secret=api_key)
        headers = {"x-api-key": api_key, "anthropic-version": API_VERSION}
        self._http = HttpClient(endpoint, settings or HttpSettings(), headers)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One non-streaming message."""
        return self._reply(await self._http.post(self._body(request, stream=False)))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive, then one ``StreamDone``; a reply cut short raises
        ``ModelError`` after the deltas that did arrive. A JSON body is read as the whole reply."""
        body = self._body(request, stream=True)
        endpoint = self._http.endpoint
        folder = EventFolder(self.model)
        progress = Progress(self._http.settings.max_idle)
        async with self._http.open(body) as response:
            if is_json(response):
                for item in events_of(self._reply(await self._http.read(response))):
                    yield item
                return
            async for event, data in read_events(endpoint, response, self._http.settings, progress):
                if event == "error":
                    raise event_error(endpoint, decode_event(endpoint, data), mid_reply=progress.began)
                typed = decode_typed(endpoint, data, event_decoder)
                if typed.type == "error":
                    raise event_error(endpoint, {"type": "error", "error": typed.error}, mid_reply=progress.began)
                for item in folder.feed(typed):
                    progress.made()
                    yield item
                if folder.stopped:
                    break
        if not (folder.stopped or folder.finish):
            raise stream_cut(endpoint, "the stream ended before the reply was complete")
        yield StreamDone(response=folder.response())

    def _body(self, request: ModelRequest, *, stream: bool) -> bytes:
        ttl = self.caching.ttl if self.caching.enabled else None
        return request_body(self.model, self.max_tokens, self._with_defaults(request), stream=stream, cache=ttl)

    def _reply(self, payload: bytes) -> ModelResponse:
        endpoint = self._http.endpoint
        if payload.lstrip().startswith(b"{") and b'"error"' in payload:  # an error in a 200 reply
            try:
                data = msgspec.json.decode(payload)
            except msgspec.DecodeError:
                data = None
            if isinstance(data, dict) and (data.get("type") == "error" or isinstance(data.get("error"), dict)):
                raise event_error(endpoint, data, mid_reply=False)
        try:
            return parse_response(payload, self.model)
        except ValueError as exc:
            raise ModelError(
                f"unreadable reply from {endpoint.where()}: {exc}",
                hint="check that the base URL points to the Anthropic API (without /v1)",
            ) from None

    def check_settings(self, settings: ModelSettings) -> None:
        """Raise ``ModelError`` now for options this model's API has no place for."""
        check_settings(merged(self.defaults, settings))

    def accepts_url(self, kind: str, media_type: str) -> bool:
        """Whether a part of this kind can go by URL (images, and PDF documents); the others
        are downloaded and sent inline."""
        return kind == "image" or (kind == "document" and media_type in ("", "application/pdf"))
