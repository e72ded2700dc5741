"""Server-sent events, read from a byte stream that may be split anywhere."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import httpx
import msgspec

from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._wording import read_error, stream_cut

_LINE_END = re.compile(rb"\r\n|\r|\n")
T = TypeVar("T")


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


def decode_typed(endpoint: Endpoint, data: str, decoder: msgspec.json.Decoder[T]) -> T:
    """One SSE event's payload as the type ``decoder`` reads; a field of the wrong type (a call
    ID that is a number) ends the reply like a dropped connection: what arrived is kept."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise stream_cut(endpoint, f"the provider sent an event of the wrong shape ({exc})") from None
    except msgspec.DecodeError:
        raise stream_cut(endpoint, f"the provider sent data that is not JSON: {data[:80]!r}") from None


async def read_events(endpoint: Endpoint, response: httpx.Response, timeout: float) -> AsyncIterator[tuple[str, str]]:
    """``sse_events`` of a reply body; a connection that breaks or stalls raises ``ModelError``."""
    try:
        async for event in sse_events(response.aiter_bytes()):
            yield event
    except httpx.HTTPError as exc:
        raise read_error(endpoint, exc, timeout) from exc
