"""Server-sent events, read from a byte stream that may be split anywhere."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar

import httpx
import msgspec

from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._http_settings import HttpSettings
from golem_cli.providers._wording import read_error, size_text, stream_cut

_LINE_END = re.compile(rb"\r\n|\r|\n")
T = TypeVar("T")


def _line_ends(chunk: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each line ending in ``chunk``. Most servers end lines with ``\n`` alone:
    those are found with ``bytes.find`` (memchr, far faster than the regex on a long line); a
    chunk holding a ``\r`` goes through the regex for the other two endings."""
    if b"\r" in chunk:
        for match in _LINE_END.finditer(chunk):
            yield match.start(), match.end()
        return
    at = chunk.find(b"\n")
    while at >= 0:
        yield at, at + 1
        at = chunk.find(b"\n", at + 1)


async def sse_events(chunks: AsyncIterator[bytes], max_event: int = 0) -> AsyncIterator[tuple[str, str]]:
    """(event, data) pairs from an SSE byte stream, split anywhere (mid-line, mid-character).

    Follows the SSE rules: comments and unknown fields are ignored, several ``data`` lines are
    joined with newlines, a blank line ends an event. At a clean end of stream a last event
    without its blank line is still delivered (some servers end with ``data: [DONE]``).

    Linear in the bytes read: each chunk is scanned once, and the unfinished line is kept as a
    list of pieces, never re-scanned or re-copied. A line or an event longer than
    ``max_event`` bytes (0: no bound) raises ``ValueError``.
    """
    lines, event = _Lines(max_event), _Event(max_event)
    async for chunk in chunks:
        for line in lines.feed(chunk):
            done = event.add(line)
            if done is not None:
                yield done
    done = event.end(lines.rest())
    if done is not None:
        yield done


class _Lines:
    """Whole lines from chunks split anywhere; the unfinished one is kept in pieces."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self.partial: list[bytes] = []  # the unfinished line, in pieces
        self.held = 0  # bytes in ``partial``
        self.after_cr = False  # the last chunk ended in \r: a \n opening the next one belongs to it

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if not chunk:
            return
        if self.after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self.after_cr = chunk[-1:] == b"\r"
        start = 0
        for line_end, start_next in _line_ends(chunk):
            line = chunk[start:line_end]
            if self.partial:  # one join of the pieces: a long line is copied once, not twice
                self.partial.append(line)
                line, self.partial, self.held = b"".join(self.partial), [], 0
            start = start_next
            yield line
        if start < len(chunk):
            self.partial.append(chunk[start:])
            self.held += len(chunk) - start
            if self.max_line and self.held > self.max_line:
                raise ValueError(f"a line longer than {self.max_line} bytes")

    def rest(self) -> bytes:
        """The last line, which the stream ended without a line ending."""
        return b"".join(self.partial)


class _Event:
    """The event being read: its name and ``data`` lines, until a blank line ends it."""

    def __init__(self, max_event: int) -> None:
        self.max_event = max_event
        self.name = ""
        self.data: list[str] = []
        self.size = 0  # bytes of the lines read since the last event was delivered

    def add(self, line: bytes) -> tuple[str, str] | None:
        """Apply one line; the finished event when it is a blank line that ends one."""
        if line:
            self.name = _field(line, self.name, self.data)
            self.size += len(line)
            if self.max_event and self.size > self.max_event:
                raise ValueError(f"an event longer than {self.max_event} bytes")
            return None
        done = self._finished()
        if done is not None:
            self.data, self.size = [], 0
        self.name = ""
        return done

    def end(self, line: bytes) -> tuple[str, str] | None:
        """The stream ended (after ``line``, unfinished): the event it holds, if any."""
        if line:
            self.name = _field(line, self.name, self.data)
        return self._finished()

    def _finished(self) -> tuple[str, str] | None:
        return (self.name or "message", "\n".join(self.data)) if self.data else None


def _field(raw: bytes, event: str, data: list[str]) -> str:
    """Apply one non-empty SSE line; returns the (possibly new) event name. Only the value is
    decoded, from a view of the line: a long line becomes one string, with no copies of the
    whole line on the way."""
    if raw[0] == 58:  # b":" comment
        return event
    colon = raw.find(b":")
    name = raw if colon < 0 else raw[:colon]
    if name not in (b"data", b"event"):
        return event
    start = len(raw) if colon < 0 else colon + 1 + (raw[colon + 1 : colon + 2] == b" ")
    value = str(memoryview(raw)[start:], "utf-8", "replace")
    if name == b"data":
        data.append(value)
        return event
    return value


def decode_event(endpoint: Endpoint, data: str) -> Any:
    """The JSON payload of one SSE event; a payload that is not JSON ends the reply."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise stream_cut(endpoint, f"the provider sent data that is not JSON: {data[:80]!r}") from None


def decode_typed(endpoint: Endpoint, data: str, decoder: msgspec.json.Decoder[T]) -> T:
    """One SSE event's payload as the type ``decoder`` reads; a field of the wrong type (a call
    ID that is a number) ends the reply like a dropped connection."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise stream_cut(endpoint, f"the provider sent an event of the wrong shape ({exc})") from None
    except msgspec.DecodeError:
        raise stream_cut(endpoint, f"the provider sent data that is not JSON: {data[:80]!r}") from None


class Progress:
    """When a reply last brought content. Keep-alive comments and pings alone must not hold a
    run forever: the adapter calls ``made()`` for every event it yields, and ``read_events``
    ends a reply that brought none for ``max_idle`` seconds. ``began`` says whether any
    content came at all (an error event before it is not "mid-reply")."""

    def __init__(self, max_idle: float) -> None:
        self.max_idle = max_idle
        self.last = time.monotonic()
        self.began = False

    def made(self) -> None:
        self.last = time.monotonic()
        self.began = True

    def stalled(self) -> bool:
        return time.monotonic() - self.last > self.max_idle


async def read_events(
    endpoint: Endpoint, response: httpx.Response, settings: HttpSettings, progress: Progress | None = None
) -> AsyncIterator[tuple[str, str]]:
    """``sse_events`` of a reply body, within the settings' bounds: at most ``max_reply_bytes``
    read (after decompression, so a gzip bomb stops there too), no line or event longer than
    that, content at least every ``max_idle`` seconds. Past a bound, or when the connection
    breaks or stalls, ``ModelError``: the reply is cut off (the run loop keeps what arrived)."""
    limit = settings.max_reply_bytes
    where = f"[providers.{endpoint.provider}]"

    async def body() -> AsyncIterator[bytes]:
        total = 0
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            if total > limit:
                error = stream_cut(endpoint, f"the reply passed max_reply_bytes ({size_text(limit)})")
                error.hint = f"raise max_reply_bytes in {where} if replies this large are expected"
                raise error
            if progress is not None and progress.stalled():
                error = stream_cut(endpoint, f"no content for {progress.max_idle:g} s, only keep-alive")
                error.hint = f"raise max_idle in {where} for models that think longer in silence"
                raise error
            yield chunk
            # Let the event loop run between chunks even when the socket always has more (a
            # flood): Ctrl-C's handler and the task's cancellation wait for that.
            await asyncio.sleep(0)

    try:
        async for event in sse_events(body(), max_event=limit):
            yield event
    except ValueError as exc:  # a line or event beyond the bound
        raise stream_cut(endpoint, f"the provider sent {exc}") from None
    except httpx.HTTPError as exc:
        raise read_error(endpoint, exc, settings.timeout) from exc
