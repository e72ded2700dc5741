"""The OpenAI-compatible adapter: OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq…

Everything that speaks ``POST {base_url}/chat/completions`` works through a base URL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from golem_cli.core.errors import ModelError
from golem_cli.core.model import ModelRequest, ModelResponse, ModelSettings, StreamDone, StreamEvent
from golem_cli.providers._endpoint import Endpoint, join_path
from golem_cli.providers._http import HttpClient, HttpModel, is_json
from golem_cli.providers._http_settings import HttpSettings
from golem_cli.providers._sse import Progress, decode_event, decode_typed, read_events
from golem_cli.providers._wire import events_of
from golem_cli.providers._wording import event_error, stream_cut
from golem_cli.providers.caching import Caching
from golem_cli.providers.openai import FACTS, check_settings
from golem_cli.providers.openai.stream import ChunkFolder
from golem_cli.providers.openai.wire import completion_decoder, parse_response, request_body
from golem_cli.providers.options import merged


class OpenAIModel(HttpModel):
    """A chat-completions model. ``name`` is what the user typed (``groq:llama-3.3-70b``);
    ``model`` is what the server is asked for (``llama-3.3-70b``). ``chat_url`` replaces
    ``{base_url}/chat/completions`` where a service puts it elsewhere (Azure's deployments)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str = "",
        base_url: str = FACTS.base_url,
        provider: str = FACTS.name,
        settings: HttpSettings | None = None,
        key_hint: str = FACTS.key_env,
        defaults: ModelSettings | None = None,
        chat_url: str = "",
        key_header: str = "authorization",
        caching: Caching | None = None,
    ) -> None:
        self.model = model
        caching = caching or Caching()
        #: Whether requests say which conversation they continue (``prompt_cache_key``).
        self.sends_cache_key = caching.enabled and caching.send_key
        self.name = f"{provider}:{model}"
        self.defaults = defaults or ModelSettings()
        url = chat_url or join_path(base_url, "/chat/completions")
        endpoint = Endpoint(provider, model, url, key_hint=key_hint, secret=api_key)
        headers: dict[str, str] = {}
        if api_key:  # Azure takes the bare key in ``api-key``; everyone else a bearer token
            headers[key_header] = f"Bearer {api_key}" if key_header == "authorization" else api_key
        self._http = HttpClient(endpoint, settings or HttpSettings(), headers)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One non-streaming completion."""
        return self._reply(await self._http.post(self._body(request, stream=False)))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive, then one ``StreamDone``; a reply cut short raises
        ``ModelError`` after the deltas that did arrive. A JSON body is read as the whole reply."""
        body = self._body(request, stream=True)
        endpoint = self._http.endpoint
        folder = ChunkFolder(self.model)
        finished = False
        progress = Progress(self._http.settings.max_idle)
        async with self._http.open(body) as response:
            if is_json(response):
                for item in events_of(self._reply(await self._http.read(response))):
                    yield item
                return
            async for event, data in read_events(endpoint, response, self._http.settings, progress):
                if data == "[DONE]":
                    finished = True
                    break
                if event == "error":
                    raise event_error(endpoint, decode_event(endpoint, data), mid_reply=progress.began)
                chunk = decode_typed(endpoint, data, completion_decoder)
                if chunk.error:
                    raise event_error(endpoint, {"error": chunk.error}, mid_reply=progress.began)
                for item in folder.feed(chunk):
                    progress.made()
                    yield item
        if not (finished or folder.finish):
            raise stream_cut(endpoint, "the stream ended before the reply was complete")
        yield StreamDone(response=folder.response())

    def _body(self, request: ModelRequest, *, stream: bool) -> bytes:
        key = request.cache_key if self.sends_cache_key else ""
        return request_body(self.model, self._with_defaults(request), stream=stream, cache_key=key)

    def _reply(self, payload: bytes) -> ModelResponse:
        try:
            return parse_response(payload, self.model)
        except ValueError as exc:
            raise self._unreadable(payload, exc) from None

    def _unreadable(self, payload: bytes, exc: ValueError) -> ModelError:
        endpoint = self._http.endpoint
        if payload.lstrip().startswith(b"{") and b'"error"' in payload:
            try:
                return event_error(
                    endpoint, decode_event(endpoint, payload.decode("utf-8", "replace")), mid_reply=False
                )
            except ModelError as inner:
                return inner
        return ModelError(
            f"unreadable reply from {endpoint.where()}: {exc}",
            hint="check that the base URL points to an OpenAI-compatible API (it usually ends in /v1)",
        )

    def check_settings(self, settings: ModelSettings) -> None:
        """Raise ``ModelError`` now for options this model's API has no place for."""
        check_settings(merged(self.defaults, settings))

    def accepts_url(self, kind: str, media_type: str) -> bool:
        """Whether a part of this kind can go by URL (chat completions: images only); the
        others are downloaded and sent inline."""
        return kind == "image"
