"""Reaching a streamable HTTP tool server: the SDK's transport, given an HTTP client whose
answers other than event streams end at ``MAX_MESSAGE`` bytes (the SDK bounds each event of
a stream), with the table's headers and bearer token."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx2
from mcp.client.streamable_http import streamable_http_client

from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.transport import MAX_MESSAGE, STDERR_KEPT, Streams, size_text
from golem_cli.tools.output import Collector


class _BoundedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self.inner = inner
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                raise httpx2.ReadError(f"the server's answer is larger than {size_text(self.limit)}")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _BoundedTransport(httpx2.AsyncBaseTransport):
    """Responses other than event streams end at ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            response.stream = _BoundedBody(response.stream, self.limit)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class HttpTransport(contextlib.AbstractAsyncContextManager[Streams]):
    """A streamable HTTP server, for one connection."""

    def __init__(self, config: ServerConfig, max_message: int = MAX_MESSAGE) -> None:
        self.config = config
        self.max_message = max_message
        self.closed = asyncio.Event()  # never set: HTTP has no process to watch
        self.problem = ""
        self.stderr = Collector(STDERR_KEPT)
        self.returncode: int | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> Streams:
        assert self.config.table.url is not None
        stack = contextlib.AsyncExitStack()
        try:
            client = httpx2.AsyncClient(
                headers=self.config.http_headers(),
                timeout=httpx2.Timeout(30.0, read=max(300.0, self.config.table.tool_timeout_sec)),
                transport=_BoundedTransport(self.max_message),
            )
            await stack.enter_async_context(client)
            streams = await stack.enter_async_context(
                streamable_http_client(self.config.table.url, http_client=client, max_sse_event_size=self.max_message)
            )
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return streams

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()
