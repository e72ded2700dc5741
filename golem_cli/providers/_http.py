"""What both adapters share on the HTTP side: one httpx client and the retry policy.

Retries happen only where nothing can be lost or duplicated: a 429, a 5xx, or a connection
that failed before any byte of the reply arrived. A reply that dies after its first byte is
never retried here; the adapter raises and the runtime keeps what arrived (spec §7). How the
failures are worded lives in ``_wording``; SSE parsing in ``_sse``; request bytes in ``_wire``.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Self

import httpx

from golem_cli import __version__
from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._wording import http_error, stream_cut, transport_error

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
    step = min(settings.backoff_max, settings.backoff_base * 2.0**attempt)
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
        async with self.open(body, accept="application/json") as response:
            try:
                return await response.aread()
            except httpx.TimeoutException as exc:
                raise transport_error(self.endpoint, exc, self.settings.timeout, 1) from exc
            except httpx.HTTPError as exc:
                raise stream_cut(self.endpoint, str(exc) or type(exc).__name__, kept=False) from exc

    @asynccontextmanager
    async def open(self, body: bytes, accept: str = "text/event-stream") -> AsyncIterator[httpx.Response]:
        """POST and hold a 2xx reply whose body is not read yet; errors and retries happen here."""
        client = self._get()
        attempts = 0
        while True:
            attempts += 1
            retry_after: float | None = None
            try:
                request = client.build_request("POST", self.endpoint.url, content=body, headers={"accept": accept})
                response = await client.send(request, stream=True)
            except _BEFORE_REPLY as exc:
                error = transport_error(self.endpoint, exc, self.settings.timeout, attempts)
            except httpx.HTTPError as exc:
                raise transport_error(self.endpoint, exc, self.settings.timeout, attempts) from exc
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


class HttpModel:
    """Shared shape of the adapters: a name, one HTTP client, and a way to close it."""

    name: str
    _http: HttpClient

    async def aclose(self) -> None:
        """Close the connection pool; the adapter reopens one if used again."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, url={self._http.endpoint.shown_url!r})"
