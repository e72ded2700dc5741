"""How golem reaches a tool server: a child process on stdin/stdout, or streamable HTTP.

Both hand the SDK's ``Client`` a pair of message streams. golem brings its own stdio
transport (after the SDK's ``stdio_client``) for three reasons the SDK's cannot serve:

* a server's output is bounded: a message (one line) over ``MAX_MESSAGE`` bytes ends the
  connection instead of growing a buffer without limit;
* its standard error is kept (the first and last 2,000 bytes), never written to the
  terminal, so a failure can be explained in one line and the chat's screen stays golem's;
* golem learns at once when the process exits (``closed``), with its exit status.

The process runs in a session of its own, so Ctrl-C at the terminal does not reach it (golem
cancels a call with MCP's cancellation notification instead). Stopping it follows the MCP
shutdown sequence: close its input, wait ``GRACE`` seconds, then SIGTERM and SIGKILL to its
whole process group (what it started goes too); the exit is awaited, so nothing is left a
zombie.

The process can be started (``spawn``) before the SDK is imported: this module needs only
anyio until the first message, so a chat starts a server and imports the SDK at the same
time. The HTTP transport is in ``http.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.output import Collector

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

#: The largest message golem reads from a server (an image result can be several MB).
MAX_MESSAGE = 32 * 1024 * 1024
#: Seconds a stdio server has to exit after its input is closed, and after SIGTERM.
GRACE = 1.0
STDERR_KEPT = 4000
#: What a stdio server inherits of golem's environment (the SDK's list: no keys, no tokens),
#: before the table's ``env_vars`` and ``env``.
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")

Streams = tuple[Any, Any]


def safe_environment(parent: dict[str, str] | None = None) -> dict[str, str]:
    """The variables of ``INHERITED`` that are set (shell functions, ``() {...``, left out)."""
    parent = dict(os.environ) if parent is None else parent
    return {k: parent[k] for k in INHERITED if k in parent and not parent[k].startswith("()")}


def quiet_sdk_logs() -> None:
    """The SDK and its HTTP client log failures with tracebacks; without a handler Python
    would print them on the terminal. golem reports failures itself, in one line."""
    for name in ("mcp", "httpx2", "httpcore2"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(logging.NullHandler())
        logger.propagate = False


class StdioTransport(contextlib.AbstractAsyncContextManager[Streams]):
    """A stdio server's process, for one connection (``async with``, then gone)."""

    def __init__(self, config: ServerConfig, max_message: int = MAX_MESSAGE) -> None:
        self.config = config
        self.max_message = max_message
        self.stderr = Collector(STDERR_KEPT)
        self.process: anyio.abc.Process | None = None
        self.closed = asyncio.Event()  # stdout ended: the process exited or closed it
        self.problem = ""  # why golem ended the connection itself
        self._stack: contextlib.AsyncExitStack | None = None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    async def __aenter__(self) -> Streams:
        stack = contextlib.AsyncExitStack()
        streams = await stack.enter_async_context(self._connect())
        self._stack = stack
        return streams

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    async def spawn(self) -> None:
        """Start the process now (the connection starts it otherwise); ``OSError`` when it
        cannot be run."""
        if self.process is None:
            config = self.config
            assert config.table.command is not None
            self.process = await anyio.open_process(
                [config.table.command, *config.table.args],
                env=safe_environment() | config.environment(),
                cwd=os.path.expanduser(config.table.cwd) if config.table.cwd else None,
                start_new_session=True,
            )

    async def abandon(self) -> None:
        """Stop a process started by ``spawn`` that never got a connection."""
        if self.process is not None and self._stack is None:
            with anyio.CancelScope(shield=True):
                await stop_process(self.process)

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[Streams]:
        await self.spawn()
        process = self.process
        assert process is not None
        read_writer: MemoryObjectSendStream[SessionMessage | Exception]
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception]
        read_writer, read_stream = anyio.create_memory_object_stream(0)
        write_stream: MemoryObjectSendStream[SessionMessage]
        write_reader: MemoryObjectReceiveStream[SessionMessage]
        write_stream, write_reader = anyio.create_memory_object_stream(0)

        async def read_stdout() -> None:
            assert process.stdout is not None
            buffer = bytearray()
            try:
                async with read_writer:
                    async for chunk in process.stdout:
                        buffer += chunk
                        if b"\n" in chunk:
                            *lines, rest = bytes(buffer).split(b"\n")
                            buffer = bytearray(rest)
                            for line in lines:
                                if line.strip():
                                    await read_writer.send(_parse(line))
                        if len(buffer) > self.max_message:
                            self.problem = f"sent a message over {size_text(self.max_message)}"
                            break
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass
            finally:
                self.closed.set()

        async def read_stderr() -> None:
            assert process.stderr is not None
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in process.stderr:
                    self.stderr.add(chunk)

        async def write_stdin() -> None:
            assert process.stdin is not None
            try:
                async with write_reader:
                    async for message in write_reader:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        await process.stdin.send(data.encode("utf-8") + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await read_writer.aclose()  # the session sees the end instead of waiting forever

        async with anyio.create_task_group() as group:
            group.start_soon(read_stdout)
            group.start_soon(read_stderr)
            group.start_soon(write_stdin)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    write_stream.close()
                    read_stream.close()
                    await stop_process(process)
                group.cancel_scope.cancel()


def size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 1024} KiB"


def _parse(line: bytes) -> SessionMessage | Exception:
    """The message on ``line``. One the SDK cannot read that answers a request (a lone
    surrogate escape, nesting too deep) becomes an error answer to that request saying what
    was wrong, so the call fails at once instead of waiting out its timeout."""
    import mcp_types  # the SDK is loaded by the time a server speaks
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as e:
        answered = _answered_id(line)
        if answered is None:
            return e  # not an answer golem waits for: the dispatcher drops it
        why = f"the server sent an answer golem cannot read ({_unreadable(e)})"
        error = mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message=why)
        return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=answered, error=error))


_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _answered_id(line: bytes) -> int | str | None:
    """The ID of the request a line that cannot be read answers, when it looks like an answer
    (it has ``result`` or ``error`` and no ``method``) and its ``id`` can be found."""
    if b'"method"' in line or not (b'"result"' in line or b'"error"' in line):
        return None
    found = _ID.search(line)
    if found is None:
        return None
    raw = found.group(1)
    if raw.startswith(b'"'):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    return int(raw)


def _unreadable(error: ValueError) -> str:
    """What was wrong with a message, in words (pydantic's first error, without the input)."""
    found = re.search(r"Invalid JSON: (.+?) at line \d+ column (\d+)", str(error))
    if found is None:
        return "it is not a JSON-RPC message"
    what, column = found.group(1), found.group(2)
    if "hex escape" in what or "surrogate" in what:
        return f"a lone surrogate escape such as \\ud800 in a string, at byte {column}"
    if "recursion" in what:
        return f"JSON nested too deeply, at byte {column}"
    return f"invalid JSON: {what}, at byte {column}"


async def stop_process(process: anyio.abc.Process) -> None:
    """Close its input, give it ``GRACE`` seconds, then SIGTERM and SIGKILL its process
    group; return once it has exited (and was reaped). Members of its group outlive a leader
    that exits on its own only until the SIGTERM. Its descendants that left the group (a
    child started with ``setsid``) are found before it is asked to stop, while they are still
    its children, and stopped after it."""
    strays = descendants(process.pid)
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    await _exited(process, GRACE)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)  # the group outlives its leader while members are left
        except (ProcessLookupError, PermissionError):
            break
        if await _group_gone(process.pid, GRACE):
            break
    await _exited(process, GRACE)
    await _stop_strays(strays)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()
    # asyncio's transport of the process would otherwise be closed by the garbage collector,
    # perhaps after the event loop (a warning); nothing public reaches it.
    close = getattr(getattr(getattr(process, "_process", None), "_transport", None), "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether the process exited within ``seconds`` (polled: ``wait()`` would also wait for
    its pipes, which a child it left behind may hold)."""
    deadline = anyio.current_time() + seconds
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)
    return True


async def _group_gone(pgid: int, seconds: float) -> bool:
    deadline = anyio.current_time() + seconds
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)


def _proc_stat(pid: str) -> tuple[int, str] | None:
    """A process's parent and start time (``/proc/PID/stat``), None when it is gone (or a
    zombie: it has exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] == "Z" else (int(fields[1]), fields[19])


def descendants(pid: int) -> list[tuple[int, str]]:
    """Every process below ``pid`` with its start time (Linux's ``/proc``; none elsewhere)."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in entries:
        stat = _proc_stat(entry)
        if stat is not None:
            children.setdefault(stat[0], []).append((int(entry), stat[1]))
    found: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


async def _stop_strays(strays: list[tuple[int, str]]) -> None:
    """SIGTERM, then SIGKILL, the processes of ``strays`` that are still the same processes."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [pid for pid, started in strays if _same(pid, started)]
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        if not alive:
            return
        deadline = anyio.current_time() + GRACE
        while anyio.current_time() < deadline and any(_same(pid, started) for pid, started in strays):
            await anyio.sleep(0.01)


def _same(pid: int, started: str) -> bool:
    stat = _proc_stat(str(pid))
    return stat is not None and stat[1] == started
