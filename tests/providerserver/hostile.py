"""Replies a hostile or broken server sends (issue 8, item 4), written straight to the socket:
a stream that never ends, keep-alive comments forever, a gzip bomb, an endless error body, one
enormous SSE line, a redirect. Each runs until the client hangs up or its size is written."""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Callable
from functools import cache

CHUNK = 64 * 1024


def _text_event(protocol: str, text: str) -> bytes:
    if protocol == "openai":
        body = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        return b"data: " + json.dumps(body).encode() + b"\n\n"
    body = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
    return b"event: content_block_delta\ndata: " + json.dumps(body).encode() + b"\n\n"


def _opening(protocol: str) -> bytes:
    if protocol == "openai":
        return b""
    start = {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 1}}}
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in (start, block))


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} Status"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    if not data:  # an empty chunk would end the body
        return
    writer.write(b"%x\r\n%b\r\n" % (len(data), data))
    await writer.drain()


async def flood(writer: asyncio.StreamWriter, protocol: str) -> int:
    """Text events as fast as the client reads them, forever; returns the bytes written."""
    writer.write(_head(200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"}))
    batch = _text_event(protocol, "All work and no play makes golem a dull boy. ") * 200
    sent = 0
    await _chunk(writer, _opening(protocol))
    while True:
        await _chunk(writer, batch)
        sent += len(batch)


async def keepalive(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, protocol: str, every: float, beat: Callable[[], None]
) -> int:
    """The opening, then only keep-alive comments (and Anthropic pings; ``beat`` is told of each), until the client hangs
    up: that is seen as it happens (the end of what it sends), not at a later beat's write, so
    the connection is closed as promptly as after any other reply."""
    writer.write(_head(200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"}))
    await _chunk(writer, _opening(protocol) or b": connected\n\n")
    sent = 0
    hung_up = asyncio.ensure_future(reader.read())  # done at the client's end (or its reset)
    hung_up.add_done_callback(lambda done: done.cancelled() or done.exception())  # a reset is expected
    try:
        while not (await asyncio.wait([hung_up], timeout=every))[0]:
            comment = b": keep-alive\n\n" if protocol == "openai" else b'event: ping\ndata: {"type": "ping"}\n\n'
            await _chunk(writer, comment)
            sent += len(comment)
            beat()
    finally:
        hung_up.cancel()
    return sent


@cache
def gzip_bomb(size: int, unit: bytes) -> bytes:
    """``size`` bytes of ``unit`` repeated, gzip-compressed (about 1000:1). One block is
    compressed and ends in a full flush, which resets the compressor, so the bytes of every
    further block are the same and are repeated rather than compressed again: building a
    300 MB bomb takes a CRC pass, not seconds of compression inside a timed request."""
    block = unit * (16 * CHUNK // len(unit) + 1)
    count, rest = divmod(size, len(block))
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate: the gzip frame is written here
    repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = compressor.compress(block[:rest]) + compressor.flush()
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(block[:rest], crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # gzip, deflate, no name or time, best compression
    return header + repeated * count + last + crc.to_bytes(4, "little") + (size % 2**32).to_bytes(4, "little")


async def bomb(writer: asyncio.StreamWriter, protocol: str, size: int, streaming: bool) -> int:
    """A 200 reply whose body inflates to ``size`` bytes of text events (or of one JSON string)."""
    if streaming:
        body = gzip_bomb(size, _text_event(protocol, "boom " * 20))
        kind = "text/event-stream"
    else:
        body = gzip_bomb(size, b"a")  # an endless JSON string, once inflated
        kind = "application/json"
    writer.write(_head(200, {"content-type": kind, "content-encoding": "gzip", "content-length": str(len(body))}))
    for start in range(0, len(body), CHUNK):
        writer.write(body[start : start + CHUNK])
        await writer.drain()
    return len(body)


async def error_flood(writer: asyncio.StreamWriter, size: int, sent: list[int]) -> None:
    """A 400 whose body goes on for ``size`` bytes; ``sent[0]`` counts what got written before
    the client hung up (it should stop reading after a few KB)."""
    writer.write(_head(400, {"content-type": "application/json", "transfer-encoding": "chunked"}))
    await _chunk(writer, b'{"error": {"message": "' + b"x" * 100)
    piece = b"x" * CHUNK
    while sent[0] < size:
        await _chunk(writer, piece)
        sent[0] += len(piece)


async def long_line(writer: asyncio.StreamWriter, protocol: str, size: int) -> int:
    """One ``data:`` line of ``size`` bytes, then a proper ending."""
    writer.write(_head(200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"}))
    await _chunk(writer, _opening(protocol))
    text = "y" * size
    event = _text_event(protocol, text)
    for start in range(0, len(event), CHUNK):
        await _chunk(writer, event[start : start + CHUNK])
    if protocol == "openai":
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        await _chunk(writer, b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
    else:
        stop = [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}}, {"type": "message_stop"}]
        await _chunk(writer, b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in stop))
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return len(event)


async def redirect(writer: asyncio.StreamWriter, status: int, location: str) -> None:
    writer.write(_head(status, {"location": location, "content-length": "0"}))
    await writer.drain()
