"""Reaching a streamable HTTP tool server: the SDK's transport, given an HTTP client whose
answers end at ``MAX_MESSAGE`` bytes (an event stream's events each), with the table's
headers and bearer token.

The SDK turns a refusal (401, 403, 500...) into "Server returned an error response"; the
client here keeps the status and the first ``WORDS_KEPT`` bytes of what the server said
(``refusal``), so golem can say what happened, and what to do about a 401."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable

import httpx2
from mcp.client.streamable_http import streamable_http_client

from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.oauth import Login, provider
from golem_cli.tools.mcp.transport import MAX_MESSAGE, STDERR_KEPT, Streams, size_text
from golem_cli.tools.output import Collector

#: Bytes of a refusal's body golem reads and keeps for its words.
WORDS_KEPT = 4096


class _BoundedBody(httpx2.AsyncByteStream):
    """A body that ends at ``limit`` bytes; an event stream's at ``limit`` bytes per event
    (counted since the last blank line), so the cut is golem's, and said."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, said: Callable[[str], None], *, events: bool = False
    ) -> None:
        self.inner = inner
        self.limit = limit
        self.said = said
        self.events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        last = b""
        async for chunk in self.inner:
            seen += len(chunk)
            if self.events:
                joined = last + chunk
                end = max(joined.rfind(b"\n\n"), joined.rfind(b"\r\n\r\n"))
                if end >= 0:
                    seen = len(joined) - end
                last = joined[-3:]
            if seen > self.limit:
                problem = f"sent an answer over {size_text(self.limit)}"
                self.said(problem)
                raise httpx2.ReadError(problem)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _BoundedTransport(httpx2.AsyncBaseTransport):
    """Responses other than event streams end at ``limit`` bytes."""

    def __init__(self, limit: int, owner: HttpTransport) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.limit = limit
        self.owner = owner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST":  # a message: GET (the event stream) and DELETE may be refused
            if response.status_code >= 400:
                return await self._refusal(request, response)
            self.owner.refusal = None
        events = response.headers.get("content-type", "").startswith("text/event-stream")
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _BoundedBody(response.stream, self.limit, self.owner.said, events=events)
        return response

    async def _refusal(self, request: httpx2.Request, response: httpx2.Response) -> httpx2.Response:
        """The refusal kept (status and words), its body cut at ``WORDS_KEPT`` bytes."""
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        body = bytearray()
        try:
            async for chunk in response.stream:
                body += chunk
                if len(body) >= WORDS_KEPT:
                    break
        except httpx2.HTTPError:
            pass
        finally:
            await response.stream.aclose()
        body = body[:WORDS_KEPT]
        self.owner.refusal = (response.status_code, words(bytes(body), response.headers.get("content-type", "")))
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-length"]
        return httpx2.Response(response.status_code, headers=headers, content=bytes(body), request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class HttpTransport(contextlib.AbstractAsyncContextManager[Streams]):
    """A streamable HTTP server, for one connection."""

    def __init__(self, config: ServerConfig, max_message: int = MAX_MESSAGE, login: Login | None = None) -> None:
        self.config = config
        self.max_message = max_message
        self.login = login
        self.closed = asyncio.Event()  # never set: HTTP has no process to watch
        self.problem = ""
        self.stderr = Collector(STDERR_KEPT)
        self.returncode: int | None = None
        #: The last refusal: its HTTP status and the server's words ("" when it said nothing).
        self.refusal: tuple[int, str] | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    def said(self, problem: str) -> None:
        self.problem = problem

    async def __aenter__(self) -> Streams:
        assert self.config.table.url is not None
        stack = contextlib.AsyncExitStack()
        try:
            auth = (
                provider(self.config, self.config.tokens, self.login)
                if self.config.tokens and self.config.oauth
                else None
            )
            client = httpx2.AsyncClient(
                auth=auth,
                headers=self.config.http_headers(),
                timeout=httpx2.Timeout(30.0, read=max(300.0, self.config.table.tool_timeout_sec)),
                transport=_BoundedTransport(self.max_message, self),
            )
            await stack.enter_async_context(client)
            streams = await stack.enter_async_context(
                streamable_http_client(
                    self.config.table.url, http_client=client, max_sse_event_size=2 * self.max_message
                )
            )
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return streams

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()


def words(body: bytes, content_type: str) -> str:
    """What a refusal's body says, on one line: a JSON error's message (JSON-RPC's
    ``error.message``, OAuth's ``error_description``), else its text."""
    text = body.decode("utf-8", "replace").strip()
    if "json" in content_type:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            error = value.get("error")
            for said in (error.get("message") if isinstance(error, dict) else None, value.get("error_description"),
                         error if isinstance(error, str) else None, value.get("message")):  # fmt: skip
                if isinstance(said, str) and said.strip():
                    return " ".join(said.split())
    return " ".join(text.split())
