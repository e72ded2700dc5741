"""What both adapters share on the HTTP side: one httpx client, one attempt per call.

The client never retries: it classifies. A failure becomes a ``ModelError`` that says whether
another attempt may succeed (``retryable``: a 429, a 5xx, a connection that failed before
any byte of the reply) and what the provider asked for (``retry_after``, from
``Retry-After``); a reply that dies after its first byte is never retryable, and the runtime
keeps what arrived (spec §7). The one retry policy is ``golem_cli.core.retry``, applied by the
run loop; an adapter only carries the policy its configuration asks for (``retry_policy``).
How failures are worded lives in ``_wording``; SSE parsing in ``_sse``; request bytes in
``_wire``.
"""

from __future__ import annotations

import email.utils
import functools
import os
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Self
from urllib.parse import urlsplit

import httpx
import msgspec

from golem_cli import __version__
from golem_cli.core.errors import ModelError
from golem_cli.core.model import ModelRequest, ModelSettings
from golem_cli.core.retry import RetryPolicy
from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._http_settings import HttpSettings
from golem_cli.providers._wording import broken, http_error, redirected, size_text, stream_cut, transport_error
from golem_cli.providers.options import merged

USER_AGENT = f"golem-cli/{__version__}"


#: Most of an error reply's body that is read: its message is in the first few hundred bytes.
ERROR_BODY_BYTES = 64 * 1024
#: Redirects followed, to the same scheme, host and port only (the key must not travel).
MAX_REDIRECTS = 3


# --- what the provider asked for -------------------------------------------------------------


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


# Failures that happen before any byte of the reply: safe to send the request again.
_BEFORE_REPLY = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """The one TLS context of the process, as httpx makes it (certifi's bundle, or
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``). Given to every client, it is shared by the transport
    httpx mounts for each proxy variable, which would otherwise each load the bundle again
    (about 20 ms apiece, even when ``NO_PROXY`` excludes the endpoint)."""
    return httpx.create_ssl_context()


#: The variables httpx reads a proxy from (``trust_env``, either case): with one set, even an
#: ``http://`` endpoint may be reached over a TLS connection to the proxy.
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def tls_context(url: str) -> ssl.SSLContext:
    """The TLS context a client of ``url`` is given. An ``http://`` endpoint with no proxy set
    never speaks TLS (redirects are followed to the same scheme only): it gets a context that
    trusts no certificate, which would fail a handshake rather than skip the check, instead of
    one that loads the CA bundle for nothing."""
    proxied = any(os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES)
    if urlsplit(url).scheme == "http" and not proxied:
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return ssl_context()


class HttpClient:
    """One lazily created ``httpx.AsyncClient`` per adapter; one attempt per call."""

    def __init__(self, endpoint: Endpoint, settings: HttpSettings, headers: Mapping[str, str]) -> None:
        self.endpoint = endpoint
        self.settings = settings
        self._headers = {"user-agent": USER_AGENT, "content-type": "application/json", **headers}
        self._client: httpx.AsyncClient | None = None

    def _get(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(self.settings.timeout, connect=self.settings.connect_timeout)
            verify = tls_context(self.endpoint.url)
            self._client = httpx.AsyncClient(headers=self._headers, timeout=timeout, verify=verify)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def post(self, body: bytes) -> bytes:
        """POST and return the body of a 2xx reply."""
        async with self.open(body, accept="application/json") as response:
            return await self.read(response)

    async def read(self, response: httpx.Response) -> bytes:
        """The whole body of a reply held by ``open``, at most ``max_reply_bytes`` of it (after
        decompression); a body that breaks off or passes the bound raises."""
        limit = self.settings.max_reply_bytes
        try:
            body = await read_at_most(response, limit + 1)
        except httpx.TimeoutException as exc:
            raise transport_error(self.endpoint, exc, self.settings.timeout) from exc
        except httpx.HTTPError as exc:
            raise stream_cut(self.endpoint, broken(exc)) from exc
        if len(body) > limit:
            raise ModelError(
                f"the reply from {self.endpoint.where()} is larger than max_reply_bytes ({size_text(limit)})",
                hint=f"raise max_reply_bytes in [providers.{self.endpoint.provider}] for replies this large",
            )
        return body

    @asynccontextmanager
    async def open(self, body: bytes, accept: str = "text/event-stream") -> AsyncIterator[httpx.Response]:
        """POST and hold a 2xx reply whose body is not read yet; an error reply or a failed
        connection raises its classified ``ModelError`` here."""
        client = self._get()
        url = self.endpoint.url
        for hop in range(MAX_REDIRECTS + 1):
            try:
                request = client.build_request("POST", url, content=body, headers={"accept": accept})
                response = await client.send(request, stream=True)
            except httpx.HTTPError as exc:
                before_reply = isinstance(exc, _BEFORE_REPLY)
                raise transport_error(self.endpoint, exc, self.settings.timeout, retryable=before_reply) from exc
            if not (response.is_redirect and response.status_code != 304):
                break
            await response.aclose()
            target = str(response.next_request.url) if response.next_request else url
            if not _same_origin(url, target) or hop == MAX_REDIRECTS:
                raise redirected(self.endpoint, target)
            url = target
        if response.status_code >= 400:
            retry_after = parse_retry_after(response.headers)
            try:
                payload = await read_at_most(response, ERROR_BODY_BYTES)
            except httpx.HTTPError:
                payload = b""
            finally:
                await response.aclose()
            raise http_error(self.endpoint, response.status_code, payload, retry_after)
        try:
            yield response
        finally:
            await response.aclose()


class HttpModel:
    """Shared shape of the adapters: a name, options from the configuration, one HTTP client,
    and a way to close it."""

    name: str
    #: Options from the config file (``[providers.NAME]``, ``[models."NAME"]``); a request's
    #: own settings win over them, one option at a time.
    defaults: ModelSettings
    _http: HttpClient

    def _with_defaults(self, request: ModelRequest) -> ModelRequest:
        return msgspec.structs.replace(request, settings=merged(self.defaults, request.settings))

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry policy this provider is configured with (``max_retries``); see ``core.retry``."""
        return self._http.settings.retry

    async def aclose(self) -> None:
        """Close the connection pool; the adapter reopens one if used again."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, url={self._http.endpoint.shown_url!r})"


def is_json(response: httpx.Response) -> bool:
    """A reply that is one JSON document, whatever was asked for: some gateways (LiteLLM's
    Anthropic route) answer a streaming request with the whole message at once."""
    kind: str = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


async def read_at_most(response: httpx.Response, limit: int) -> bytes:
    """Up to ``limit`` bytes of a body (decompressed), and no more read from the network."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]


def _same_origin(a: str, b: str) -> bool:
    first, second = httpx.URL(a), httpx.URL(b)
    return (first.scheme, first.host, first.port) == (second.scheme, second.host, second.port)
