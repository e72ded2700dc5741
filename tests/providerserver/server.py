"""A real HTTP/1.1 server on 127.0.0.1 speaking OpenAI chat completions and Anthropic Messages.

It is a raw asyncio server so that it can do what a framework would not let it: close the
connection before the reply, cut a stream in the middle of a frame, write malformed SSE, stall.
What each request gets is a ``Scenario``: queued by a test (``enqueue``), chosen by the model
name (``fault:429``, ``replay:<recording>``, for people driving it with ``golem chat``), or by
default a valid reply echoing the prompt. Every request is logged with its exact bytes.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.providerserver import hostile, render, sdk
from tests.providerserver.cache import PromptCache, anthropic_blocks, openai_blocks
from tests.providerserver.recordings import load_recording
from tests.providerserver.validate import anthropic_error, openai_error, validate_anthropic, validate_openai

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"}  # fmt: skip
_ANTHROPIC_KINDS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                    500: "api_error", 529: "overloaded_error"}  # fmt: skip
_JUNK = b"this line is not SSE\nretry: soon\nid: 7\n: keep-alive comment\n"


@dataclass
class Scenario:
    """What one request gets. Defaults: a valid reply echoing the last user text."""

    reply: render.Reply | None = None
    replay: str | None = None  # a recording's file stem (or path): its status, headers and body
    status: int = 200  # an error status, answered with the protocol's own error shape
    message: str = ""  # the error message (a default per status otherwise)
    code: str | None = None  # OpenAI error code
    retry_after: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: str = ""  # "before_reply" | "after_first_byte"
    cut_in_tool_args: bool = False  # close in the middle of the first call's arguments
    cut_after_frames: int | None = None
    malformed: str = ""  # "lines": junk lines between frames; "json": a data line that is not JSON
    delay: float = 0.0  # seconds between frames (a slow stream)
    body: bytes | None = None  # a 200 reply with exactly this JSON body
    sse: bytes | None = None  # a 200 text/event-stream reply with exactly these bytes
    # A hostile reply (hostile.py): "flood" (text forever), "keepalive" (comments or pings every
    # ``delay`` s, forever), "bomb" (gzip inflating to ``size`` bytes), "error-flood" (a 400 body
    # of ``size`` bytes), "long-line" (one SSE line of ``size`` bytes), "redirect" (``status``
    # 301/307 to ``location``).
    hostile: str = ""
    size: int = 0
    location: str = ""
    # A model with this context window (tokens, as cache.py estimates them): a longer prompt gets
    # the API's own "too long" answer (``too_long_body``); 0: the server's ``context_window``.
    context_window: int = 0
    # Called when the request arrives, before it is answered: what another program does while
    # golem waits for the model (a test writing the conversation meanwhile).
    before: Callable[[], object] | None = None


PRESETS = {
    "fault:429": Scenario(status=429, retry_after="1"),
    "fault:500": Scenario(status=500),
    "fault:401": Scenario(status=401),
    "fault:404": Scenario(status=404),
    "fault:drop": Scenario(drop="before_reply"),
    "fault:drop-after-first-byte": Scenario(drop="after_first_byte"),
    "fault:cut-args": Scenario(
        reply=render.Reply(tool_calls=[render.ToolCallSpec("call_1", "roll", '{"sides": 20, "note": "cut"}')]),
        cut_in_tool_args=True,
    ),
    "fault:malformed": Scenario(malformed="lines"),
    "fault:bad-json": Scenario(malformed="json"),
    "fault:slow": Scenario(delay=0.5),
    "fault:too-long": Scenario(context_window=1),
}


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class ProviderServer:
    """Start with ``start_in_thread()`` (tests, benchmarks) or ``await serve()`` (standalone)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, api_key: str | None = "sk-test", seed: int = 7,
                 prompt_cache: PromptCache | None = None) -> None:  # fmt: skip
        self.host, self.port, self.api_key = host, port, api_key
        #: When set, a normal reply's usage (input, cache read and write) is what this cache
        #: counts for the request, the way each API reports it (cache.py), not the Reply's own.
        self.prompt_cache = prompt_cache
        #: When set, a request whose prompt passes this many tokens is refused as too long, the
        #: way each API refuses it, as a model with that context window would (``Scenario``'s).
        self.context_window = 0
        self.requests: list[Received] = []
        self.sdk_rejections: list[str] = []  # bodies our validator passed but the SDK types refused
        self.files: dict[str, tuple[bytes, str]] = {}  # path -> (body, content type), served to any GET
        self.hostile_sent = 0  # bytes the last hostile scenario wrote before the client hung up
        self.frames_sent = 0  # SSE events (keep-alive comments too) of the last stream written so far
        self.hostile_done = threading.Event()  # set when a hostile scenario has written its last byte
        self._queue: collections.deque[Scenario] = collections.deque()
        self._rng = random.Random(seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    def enqueue(self, *scenarios: Scenario) -> None:
        """The next requests get these scenarios, in order; then the default again."""
        self._queue.extend(scenarios)

    def reset(self, api_key: str | None = "sk-test") -> None:
        self._queue.clear()
        self.requests.clear()
        self.sdk_rejections.clear()
        self.files.clear()
        self.api_key = api_key
        self.hostile_sent = 0
        self.frames_sent = 0
        self.hostile_done.clear()
        self.prompt_cache = None
        self.context_window = 0

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        sdk.warm_up()
        self._server = await asyncio.start_server(self._connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def serve(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    def start_in_thread(self) -> ProviderServer:
        sdk.warm_up()
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="providerserver", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._server is None:
            return
        loop, server = self._loop, self._server

        async def shutdown() -> None:
            server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        loop.close()
        self._loop = self._server = None

    # --- one connection --------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one_request(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection must close."""
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append(Received(method, path, headers, body, time.monotonic()))
        return await self._dispatch(path, headers, body, reader, writer)

    async def _dispatch(
        self, path: str, headers: dict[str, str], body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        path = path.partition("?")[0]  # Azure puts api-version in the query
        if path in self.files:  # GET /files/<name>: what attachments by URL download
            data, content_type = self.files[path]
            return await self._json(writer, 200, data, {"content-type": content_type} if content_type else {})
        protocol = (
            "openai" if path.endswith("/chat/completions") else "anthropic" if path.endswith("/v1/messages") else ""
        )
        if not protocol:
            return await self._json(
                writer,
                404,
                {"error": {"message": f"Unknown request URL: POST {path}", "type": "invalid_request_error"}},
            )
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        model = data.get("model") if isinstance(data, dict) else None
        if self._queue:
            scenario = self._queue.popleft()
        elif str(model).startswith("replay:"):
            scenario = Scenario(replay=str(model).removeprefix("replay:"))
        else:
            scenario = PRESETS.get(str(model), Scenario())
        # Every body is checked by both oracles, whatever the scenario answers: a fault must not
        # hide a request the real API would refuse. What the normal path answers with a 400, a
        # fault scenario records in ``sdk_rejections`` (the ``server`` fixture fails the test).
        problem = validate_openai(data) if protocol == "openai" else validate_anthropic(headers, data)
        mismatch = None if problem else sdk.sdk_problem(protocol, data)
        if _is_fault(scenario):
            if problem or mismatch:
                self.sdk_rejections.append(f"answered by a fault scenario: {mismatch or problem}")
        if scenario.before is not None:
            scenario.before()
        if scenario.drop == "before_reply":
            return False
        if scenario.hostile:
            return await self._hostile(reader, writer, scenario, protocol, bool(data and data.get("stream")))
        if scenario.replay:
            return await self._replay(writer, scenario)
        if scenario.body is not None:
            return await self._json(writer, 200, scenario.body)
        if scenario.sse is not None:
            return await self._stream(writer, [("other", scenario.sse)], scenario)
        if scenario.status != 200:
            return await self._error(writer, protocol, scenario)
        refused = self._auth(protocol, headers) or problem
        if refused:
            return await self._json(writer, refused[0], refused[1])
        if mismatch:  # the SDK's request type as a second oracle
            self.sdk_rejections.append(mismatch)
            body_of = openai_error if protocol == "openai" else anthropic_error
            return await self._json(writer, 400, body_of(f"golem test server: {mismatch}"))
        window = scenario.context_window or self.context_window
        tokens = prompt_tokens(protocol, data) if window else 0
        if tokens > window:
            return await self._json(writer, 400, too_long_body(protocol, tokens, window))
        reply = self._counted(protocol, data, scenario.reply or _default_reply(data))
        if not data.get("stream"):
            rendered = render.openai_body(reply, model) if protocol == "openai" else render.anthropic_body(reply, model)
            if scenario.drop == "after_first_byte":  # a Content-Length the body never reaches
                await self._head(
                    writer, 200, {"content-type": "application/json", "content-length": str(len(rendered))}
                )
                writer.write(rendered[: len(rendered) // 2])
                await writer.drain()
                writer.transport.abort()
                return False
            return await self._json(writer, 200, rendered, scenario.headers)
        if protocol == "openai":
            include_usage = bool((data.get("stream_options") or {}).get("include_usage"))
            frames = render.openai_frames(reply, model, include_usage, self._rng)
        else:
            frames = render.anthropic_frames(reply, model, self._rng)
        return await self._stream(writer, frames, scenario)

    def _counted(self, protocol: str, data: dict[str, Any], reply: render.Reply) -> render.Reply:
        """The reply with the usage ``prompt_cache`` counts for this request, when there is one."""
        if self.prompt_cache is None:
            return reply
        counted = self.prompt_cache.openai(data) if protocol == "openai" else self.prompt_cache.anthropic(data)
        return dataclasses.replace(reply, input_tokens=counted.input_tokens, cache_read_tokens=counted.cache_read_tokens,
                                   cache_write_tokens=counted.cache_write_tokens,
                                   cache_write_1h_tokens=counted.cache_write_1h_tokens)  # fmt: skip

    async def _hostile(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, scenario: Scenario, protocol: str, streaming: bool
    ) -> bool:
        """Serve a hostile scenario; ``hostile_sent`` records the bytes it got out."""
        try:
            if scenario.hostile == "flood":
                await hostile.flood(writer, protocol)
            elif scenario.hostile == "keepalive":
                self.frames_sent = 0
                await hostile.keepalive(reader, writer, protocol, scenario.delay or 0.05, self._sent_one)
            elif scenario.hostile == "bomb":
                self.hostile_sent = await hostile.bomb(writer, protocol, scenario.size, streaming)
            elif scenario.hostile == "error-flood":
                sent = [0]
                try:
                    await hostile.error_flood(writer, scenario.size, sent)
                finally:
                    self.hostile_sent = sent[0]
            elif scenario.hostile == "long-line":
                self.hostile_sent = await hostile.long_line(writer, protocol, scenario.size)
                return True
            elif scenario.hostile == "redirect":
                await hostile.redirect(writer, scenario.status, scenario.location)
                return True
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.hostile_done.set()
        return False

    def _auth(self, protocol: str, headers: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
        if self.api_key is None:
            return None
        if protocol == "openai":
            given = headers.get("authorization", "").removeprefix("Bearer ") or headers.get("api-key", "")  # Azure
            if not given:
                return 401, openai_error(
                    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
                )
            if given != self.api_key:
                return 401, openai_error(
                    f"Incorrect API key provided: {given[:3]}***{given[-4:]}. You can find your API key at https://platform.openai.com/account/api-keys.",
                    None,
                    "invalid_api_key",
                )
            return None
        if not headers.get("x-api-key"):
            return 401, anthropic_error("x-api-key header is required", "authentication_error")
        if headers.get("x-api-key") != self.api_key:
            return 401, anthropic_error("invalid x-api-key", "authentication_error")
        return None

    # --- writing replies -------------------------------------------------------------------

    async def _head(self, writer: asyncio.StreamWriter, status: int, headers: dict[str, str]) -> None:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"] + [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    async def _json(
        self, writer: asyncio.StreamWriter, status: int, body: Any, extra: dict[str, str] | None = None
    ) -> bool:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"content-type": "application/json", **(extra or {}), "content-length": str(len(payload))}
        await self._head(writer, status, headers)
        writer.write(payload)
        await writer.drain()
        return True

    async def _error(self, writer: asyncio.StreamWriter, protocol: str, scenario: Scenario) -> bool:
        status = scenario.status
        message = scenario.message or f"golem test server: simulated HTTP {status}"
        if protocol == "openai":
            kind = "server_error" if status >= 500 else "invalid_request_error"
            body = openai_error(message, None, scenario.code, kind)
        else:
            body = anthropic_error(message, _ANTHROPIC_KINDS.get(status, "api_error"))
        extra = dict(scenario.headers)
        if scenario.retry_after is not None:
            extra["retry-after"] = scenario.retry_after
        return await self._json(writer, status, body, extra)

    async def _replay(self, writer: asyncio.StreamWriter, scenario: Scenario) -> bool:
        recording = load_recording(scenario.replay or "")
        response = recording["response"]
        body = response["body_text"].encode()
        headers = {k: v for k, v in response["headers"].items()}
        if not headers.get("content-type", "").startswith("text/event-stream"):
            return await self._json(writer, response["status"], body, headers)
        # The recordings kept the bytes, not the packet boundaries: cut anywhere.
        frames = [("other", body[i : i + n]) for i, n in _spans(len(body), self._rng)]
        return await self._stream(writer, frames, scenario, status=response["status"], headers=headers)

    async def _stream(self, writer: asyncio.StreamWriter, frames: list[render.Frame], scenario: Scenario,
                      status: int = 200, headers: dict[str, str] | None = None) -> bool:  # fmt: skip
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            **(headers or {}),
            "transfer-encoding": "chunked",
        }
        await self._head(writer, status, {**headers, **scenario.headers})
        cut_at = _cut_point(frames, scenario)
        self.frames_sent = 0
        for n, (_tag, frame) in enumerate(frames):
            if scenario.malformed == "lines":
                frame = _JUNK + frame
            if scenario.malformed == "json" and n == 2:
                frame = b'data: {"choices": [{"delta": {"content": "half\n\n'
            if n == cut_at or (scenario.drop == "after_first_byte" and n == 0):
                keep = 0 if n == cut_at and scenario.cut_after_frames is not None else max(1, len(frame) // 2)
                await self._chunks(writer, frame[:keep])
                writer.transport.abort()  # no terminating chunk: the client sees a broken body
                return False
            await self._chunks(writer, frame)
            self._sent_one()
            if scenario.delay:
                await asyncio.sleep(scenario.delay)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    def _sent_one(self) -> None:
        self.frames_sent += 1  # read by a test's thread: an int's increment is one store

    async def _chunks(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        """Write ``data`` as HTTP chunks of random size, so boundaries fall mid-line."""
        for start, size in _spans(len(data), self._rng):
            piece = data[start : start + size]
            writer.write(b"%x\r\n%b\r\n" % (len(piece), piece))
            await writer.drain()


def _is_fault(scenario: Scenario) -> bool:
    """Whether the scenario answers without the request checks of the normal path."""
    return bool(scenario.drop == "before_reply" or scenario.hostile or scenario.replay or scenario.body is not None
                or scenario.sse is not None or scenario.status != 200)  # fmt: skip


def prompt_tokens(protocol: str, data: dict[str, Any]) -> int:
    """A request's prompt in tokens, as the prompt cache estimates them (tools, system, messages)."""
    blocks = openai_blocks(data) if protocol == "openai" else anthropic_blocks(data)
    return blocks[-1].tokens if blocks else 0


def too_long_body(protocol: str, tokens: int, window: int) -> dict[str, Any]:
    """What each API answers (HTTP 400) to a prompt longer than the model's context window, in
    its own words: OpenAI's ``context_length_exceeded``, Anthropic's "prompt is too long"."""
    if protocol == "openai":
        return openai_error(
            f"This model's maximum context length is {window} tokens. However, your messages resulted in "
            f"{tokens} tokens. Please reduce the length of the messages.",
            "messages",
            "context_length_exceeded",
        )
    return anthropic_error(f"prompt is too long: {tokens} tokens > {window} maximum")


def _spans(length: int, rng: random.Random) -> list[tuple[int, int]]:
    spans, start = [], 0
    while start < length:
        size = rng.randint(1, 96)
        spans.append((start, min(size, length - start)))
        start += size
    return spans


def _cut_point(frames: list[render.Frame], scenario: Scenario) -> int | None:
    if scenario.cut_after_frames is not None:
        return scenario.cut_after_frames
    if scenario.cut_in_tool_args:
        args = [n for n, (tag, _) in enumerate(frames) if tag == "args"]
        return args[len(args) // 2] if args else None
    return None


def _default_reply(data: dict[str, Any]) -> render.Reply:
    """Echo the prompt; after tool results, say what they were (so a test reads what the
    model was sent): ``tool results: <id> [failed] <first line>; ...``."""
    results = tool_results(data)
    if results:
        said = "; ".join(f"{r['id']}{' [failed]' if r['failed'] else ''} {r['text'].splitlines()[0] if r['text'] else ''}"
                         for r in results)  # fmt: skip
        return render.Reply(text="tool results: " + said)
    return render.Reply(text="echo: " + _last_user_text(data))


def tool_results(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results at the end of a request (either protocol): id, text, failed."""
    messages = data.get("messages") or []
    last = messages[-1] if messages else {}
    if isinstance(last.get("content"), list):  # Anthropic: tool_result blocks in a user turn
        if any(isinstance(b, dict) and b.get("type") == "text" for b in last["content"]):
            return []  # a prompt follows the results: it is what to answer
        return [
            {"id": b.get("tool_use_id"), "text": _text_of(b.get("content")), "failed": bool(b.get("is_error"))}
            for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
        ]  # fmt: skip
    found: list[dict[str, Any]] = []
    for message in reversed(messages):  # OpenAI: the trailing role "tool" messages
        if message.get("role") != "tool":
            break
        text = _text_of(message.get("content"))
        failed = text.startswith('{"error":')  # ADR 0003: a failed result's JSON as text
        found.insert(0, {"id": message.get("tool_call_id"), "text": json.loads(text)["error"] if failed else text,
                         "failed": failed})  # fmt: skip
    return found


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _last_user_text(data: dict[str, Any]) -> str:
    for message in reversed(data.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        if texts:
            return " ".join(texts)
    return ""
