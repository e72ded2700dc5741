"""What both adapters share: one httpx client, the retry policy, error wording, SSE, body bytes.

Retries happen only where nothing can be lost or duplicated: a 429, a 5xx, or a connection
that failed before any byte of the reply arrived. A reply that dies after its first byte is
never retried here; the adapter raises and the runtime keeps what arrived (spec §7).

Every failure becomes a one-line ``ModelError``: what happened (HTTP status, the provider's own
words, model and endpoint) and, in ``hint``, what the user can do. The API key is scrubbed from
everything we quote, and the endpoint is shown without userinfo or query string.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from golem_cli import __version__
from golem_cli.core.errors import ModelError
from golem_cli.core.gojson import html_escape_json

USER_AGENT = f"golem-cli/{__version__}"


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Timeouts and retry policy. ``timeout`` is the longest wait for the next byte: generous,
    because a local model on a CPU can think for minutes before its first token."""

    timeout: float = 300.0
    connect_timeout: float = 10.0
    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_retry_after: float = 60.0


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where one adapter posts, and what to say about it in errors."""

    provider: str
    model: str
    url: str
    key_hint: str = ""
    secret: str = field(default="", repr=False)

    @property
    def shown_url(self) -> str:
        """The URL without userinfo or query string (either may carry credentials)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def scrub(self, text: str) -> str:
        """``text`` on one line, at most 400 characters, with the key removed."""
        if self.secret and len(self.secret) >= 4:
            text = text.replace(self.secret, "[key]")
        text = " ".join(text.split())
        return text if len(text) <= 400 else text[:399] + "…"

    def where(self) -> str:
        return f"{self.provider} model {self.model!r} at {self.shown_url}"


# --- request bodies ------------------------------------------------------------------------

_encoder = msgspec.json.Encoder()
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_json(body: Any) -> bytes:
    """Request bytes as Go's encoder writes them: compact, HTML-safe, keys in build order.

    The same history always gives the same bytes, so provider prompt caches hit.
    """
    try:
        encoded = _encoder.encode(body)
    except UnicodeEncodeError:
        encoded = _encoder.encode(_without_surrogates(body))
    return html_escape_json(encoded)


def raw_json(text: str) -> msgspec.Raw:
    """Embed already-valid JSON text as a value (tool arguments), spelling untouched."""
    return msgspec.Raw(_SURROGATE.sub("\ufffd", text).encode())


def _without_surrogates(value: Any) -> Any:
    # Go replaces invalid UTF-8 with U+FFFD; a lone surrogate is Python's form of it.
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


# --- errors --------------------------------------------------------------------------------

_CONTEXT_TOO_LONG = re.compile(
    r"context.length|context_length|context window|maximum context|prompt is too long|"
    r"too many tokens|reduce the length|exceeds the (model's )?(max|context)",
    re.IGNORECASE,
)
HINT_CONTEXT = "the conversation history is too long for this model: start a new conversation or trim the history"


def provider_message(body: bytes) -> tuple[str, str]:
    """(message, code) from an error body in any of the shapes seen in the wild: OpenAI's
    ``{"error": {"message", "code"}}``, Anthropic's ``{"type": "error", "error": {...}}``,
    Ollama's ``{"error": "text"}``, or plain text."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return body.decode("utf-8", "replace").strip(), ""
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, str):
        return error, ""
    if not isinstance(error, dict):
        return str(error), ""
    message = str(error.get("message") or error.get("detail") or "")
    raw = (error.get("metadata") or {}).get("raw") if isinstance(error.get("metadata"), dict) else None
    if raw:
        message = f"{message}: {raw}" if message else str(raw)
    code = error.get("code") or error.get("type") or ""
    return message or str(error), str(code)


def http_error(
    endpoint: Endpoint, status: int, body: bytes, retry_after: float | None, attempts: int = 1
) -> ModelError:
    """The ``ModelError`` for an HTTP error reply."""
    message, code = provider_message(body)
    text = f"HTTP {status} from {endpoint.where()}: {endpoint.scrub(message) or 'no message'}"
    if attempts > 1:
        text += f" (after {attempts} attempts)"
    return ModelError(
        text,
        status=status,
        hint=_hint(endpoint, status, message, code, retry_after),
        retryable=status == 429 or status >= 500,
        retry_after=retry_after,
    )


def _hint(endpoint: Endpoint, status: int, message: str, code: str, retry_after: float | None) -> str:
    if status in (400, 413) and (code == "context_length_exceeded" or _CONTEXT_TOO_LONG.search(message)):
        return HINT_CONTEXT
    if status in (401, 403):
        return f"check the API key ({endpoint.key_hint or 'the api_key of this provider'})"
    if status == 404:
        return f"check the model name {endpoint.model!r} and the base URL of provider {endpoint.provider!r}"
    if status == 429:
        wait = f" (the provider asked for {retry_after:g} s)" if retry_after else ""
        return f"the provider is rate limiting requests: wait a moment and try again{wait}"
    if status >= 500:
        return "the provider had a server error: try again in a moment"
    return "the provider rejected the request; its message says why"


def event_error(endpoint: Endpoint, payload: Any, *, mid_reply: bool = True) -> ModelError:
    """The ``ModelError`` for an error the provider reported in a 200 reply (mostly mid-stream)."""
    message, code = provider_message(msgspec.json.encode(payload))
    error = payload.get("error") if isinstance(payload, dict) else None
    status = 0
    if isinstance(error, dict):
        for key in ("status_code", "code"):
            if isinstance(error.get(key), int):
                status = error[key]
                break
        if error.get("type") == "overloaded_error":
            status = 529
    text = f"{endpoint.where()} reported an error: {endpoint.scrub(message)}"
    if mid_reply:
        text = f"{endpoint.where()} reported an error mid-reply: {endpoint.scrub(message)}; what arrived is kept"
    hint = _hint(endpoint, status, message, code, None) if status else "try again"
    return ModelError(text, status=status or None, hint=hint, retryable=status == 429 or status >= 500)


def stream_cut(endpoint: Endpoint, cause: str, *, kept: bool = True) -> ModelError:
    """The ``ModelError`` for a reply that stopped before it was complete."""
    if not kept:
        return ModelError(f"the reply from {endpoint.where()} was cut off: {endpoint.scrub(cause)}", hint="try again")
    return ModelError(
        f"the reply from {endpoint.where()} was cut off: {endpoint.scrub(cause)}; what arrived is kept",
        hint="try again; the partial reply is kept in the conversation",
    )


def transport_error(endpoint: Endpoint, exc: httpx.HTTPError, settings: HttpSettings, attempts: int) -> ModelError:
    """The ``ModelError`` for a connection failure or timeout before the reply began."""
    tries = f" (after {attempts} attempts)" if attempts > 1 else ""
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        return ModelError(
            f"no reply from {endpoint.where()} within {settings.timeout:g} s{tries}",
            hint=f"raise timeout in [providers.{endpoint.provider}] of the config file for slow models",
        )
    detail = endpoint.scrub(str(exc) or type(exc).__name__)
    return ModelError(
        f"cannot reach {endpoint.where()}: {detail}{tries}",
        hint="check that the server is running and the base URL is right",
        retryable=True,
    )


# --- retries -------------------------------------------------------------------------------


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, or ``Retry-After`` as seconds
    or an HTTP date."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff(settings: HttpSettings, attempt: int, retry_after: float | None) -> float:
    """Seconds to sleep before retry number ``attempt`` (0-based): what the server asked for,
    else exponential backoff with jitter (half to full of the step) so clients spread out."""
    if retry_after is not None:
        return retry_after
    step = min(settings.backoff_max, settings.backoff_base * 2**attempt)
    return step * random.uniform(0.5, 1.0)


# Failures that happen before any byte of the reply: safe to send the request again.
_BEFORE_REPLY = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class HttpClient:
    """One lazily created ``httpx.AsyncClient`` per adapter, with the retry policy around it."""

    def __init__(self, endpoint: Endpoint, settings: HttpSettings, headers: Mapping[str, str]) -> None:
        self.endpoint = endpoint
        self.settings = settings
        self._headers = {"user-agent": USER_AGENT, "content-type": "application/json", **headers}
        self._client: httpx.AsyncClient | None = None

    def _get(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(self.settings.timeout, connect=self.settings.connect_timeout)
            self._client = httpx.AsyncClient(headers=self._headers, timeout=timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def post(self, body: bytes) -> bytes:
        """POST and return the body of a 2xx reply; retries as the policy allows."""
        async with self.stream(body, accept="application/json") as response:
            try:
                return await response.aread()
            except httpx.TimeoutException as exc:
                raise transport_error(self.endpoint, exc, self.settings, 1) from exc
            except httpx.HTTPError as exc:
                raise stream_cut(self.endpoint, str(exc) or type(exc).__name__, kept=False) from exc

    @asynccontextmanager
    async def stream(self, body: bytes, accept: str = "text/event-stream") -> AsyncIterator[httpx.Response]:
        """Open a 2xx reply whose body is not read yet; errors and retries happen here."""
        client = self._get()
        attempts = 0
        while True:
            attempts += 1
            retry_after: float | None = None
            try:
                request = client.build_request("POST", self.endpoint.url, content=body, headers={"accept": accept})
                response = await client.send(request, stream=True)
            except _BEFORE_REPLY as exc:
                error = transport_error(self.endpoint, exc, self.settings, attempts)
            except httpx.HTTPError as exc:
                raise transport_error(self.endpoint, exc, self.settings, attempts) from exc
            else:
                if response.status_code < 400:
                    try:
                        yield response
                    finally:
                        await response.aclose()
                    return
                retry_after = parse_retry_after(response.headers)
                try:
                    payload = await response.aread()
                except httpx.HTTPError:
                    payload = b""
                finally:
                    await response.aclose()
                error = http_error(self.endpoint, response.status_code, payload, retry_after, attempts)
            too_long = retry_after is not None and retry_after > self.settings.max_retry_after
            if not error.retryable or attempts > self.settings.max_retries or too_long:
                raise error
            await asyncio.sleep(backoff(self.settings, attempts - 1, retry_after))


# --- server-sent events --------------------------------------------------------------------

_LINE_END = re.compile(rb"\r\n|\r|\n")


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[str, str]]:
    """(event, data) pairs from an SSE byte stream, split anywhere (mid-line, mid-character).

    Follows the SSE rules: comments and unknown fields are ignored, several ``data`` lines are
    joined with newlines, a blank line ends an event. At a clean end of stream a last event
    without its blank line is still delivered (some servers end with ``data: [DONE]``).
    """
    buffer = b""
    event = ""
    data: list[str] = []
    async for chunk in chunks:
        buffer += chunk
        if b"\r" in buffer:
            hold = b"\r" if buffer.endswith(b"\r") else b""  # maybe the first half of \r\n
            lines = _LINE_END.split(buffer[: len(buffer) - len(hold)])
            buffer = lines.pop() + hold
        else:
            lines = buffer.split(b"\n")
            buffer = lines.pop()
        for raw in lines:
            if raw:
                event = _field(raw, event, data)
            elif data:
                yield event or "message", "\n".join(data)
                event, data = "", []
            else:
                event = ""
    if buffer.rstrip(b"\r"):
        event = _field(buffer.rstrip(b"\r"), event, data)
    if data:
        yield event or "message", "\n".join(data)


def _field(raw: bytes, event: str, data: list[str]) -> str:
    """Apply one non-empty SSE line; returns the (possibly new) event name."""
    if raw[0] == 58:  # b":" comment
        return event
    line = raw.decode("utf-8", "replace")
    name, _, value = line.partition(":")
    if value.startswith(" "):
        value = value[1:]
    if name == "data":
        data.append(value)
    elif name == "event":
        return value
    return event


def decode_event(endpoint: Endpoint, data: str) -> Any:
    """The JSON payload of one SSE event; a payload that is not JSON ends the reply."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise stream_cut(endpoint, f"the provider sent data that is not JSON: {data[:80]!r}") from None


def read_error(endpoint: Endpoint, exc: httpx.HTTPError, settings: HttpSettings) -> ModelError:
    """The ``ModelError`` for a stream that failed while being read (after its first byte)."""
    if isinstance(exc, httpx.TimeoutException):
        return stream_cut(endpoint, f"no data for {settings.timeout:g} s")
    return stream_cut(endpoint, str(exc) or type(exc).__name__)


class HttpModel:
    """Shared shape of the adapters: a name, one HTTP client, and a way to close it."""

    name: str
    _http: HttpClient

    async def aclose(self) -> None:
        """Close the connection pool; the adapter reopens one if used again."""
        await self._http.aclose()

    async def __aenter__(self) -> HttpModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, url={self._http.endpoint.shown_url!r})"
