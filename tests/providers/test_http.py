"""The shared HTTP layer: SSE parsing split anywhere, Retry-After, error wording."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import AsyncIterator

from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._http import parse_retry_after
from golem_cli.providers._sse import sse_events
from golem_cli.providers._wire import encode_json
from golem_cli.providers._wording import http_error
from hypothesis import given, settings
from hypothesis import strategies as st

BODY = (
    b": comment first\r\n"
    b"event: message_start\r\ndata: {\"a\": 1}\r\n\r\n"
    b"data: line one\ndata: line two\n\n"
    b"junk without colon\nretry: 10\nid: 3\n"
    b"data:no-space \xc3\xa9\xe6\xbc\xa2\n\n"
    b"event: ping\rdata: {}\r\r"
    b"\n\n"
    b"data: [DONE]"
)
EXPECTED = [
    ("message_start", '{"a": 1}'),
    ("message", "line one\nline two"),
    ("message", "no-space é漢"),
    ("ping", "{}"),
    ("message", "[DONE]"),
]


async def _events(chunks: list[bytes]) -> list[tuple[str, str]]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [event async for event in sse_events(source())]


@settings(max_examples=300)
@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=25))
def test_sse_events_do_not_depend_on_where_the_bytes_split(cuts: list[int]) -> None:
    edges = [0, *sorted(cuts), len(BODY)]
    chunks = [BODY[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    assert asyncio.run(_events(chunks)) == EXPECTED


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"retry-after": date}) or 0) <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_endpoint_shows_no_credentials() -> None:
    endpoint = Endpoint("local", "m", "https://user:pw@host.example:8443/v1/chat/completions?key=abc", secret="sk-abcdef")
    assert endpoint.shown_url == "https://host.example:8443/v1/chat/completions"
    error = http_error(endpoint, 403, b'{"error": {"message": "key sk-abcdef\\nis revoked"}}', None)
    assert str(error) == "HTTP 403 from local model 'm' at https://host.example:8443/v1/chat/completions: key [key] is revoked"


def test_error_bodies_in_the_wild() -> None:
    endpoint = Endpoint("ollama", "llama3.2", "http://127.0.0.1:11434/v1/chat/completions")
    assert "model 'llama3.2' not found" in str(http_error(endpoint, 404, b'{"error":"model \'llama3.2\' not found"}', None))
    assert "Bad Gateway" in str(http_error(endpoint, 502, b"<html>Bad Gateway</html>", None))
    assert "no message" in str(http_error(endpoint, 500, b"", None))


def test_encoded_bodies_follow_go() -> None:
    assert encode_json({"b": "<&>\u2028\b", "a": ["\ud800"]}) == b'{"b":"\\u003c\\u0026\\u003e\\u2028\\b","a":["\xef\xbf\xbd"]}'
