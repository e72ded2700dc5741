"""The demo server over streamable HTTP from a thread of the test process: the SDK's own ASGI
app (``MCPServer.streamable_http_app``) under uvicorn, on a loopback port. The test process
has imported the SDK already (golem's tools layer needs it), so a server costs a few hundredths
of a second instead of the seconds of CPU a server process spends importing the SDK. The
tests about a server's process (its start, exit, a kill or crash mid-call, a cancellation)
start ``demo.py`` instead."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from tests.mcpservers.demo_app import build

#: Seconds a server's thread may take to start serving (a busy machine is slow).
STARTUP = 60
#: Seconds the server gives open connections (a client's event stream) to end when it stops.
GRACE = 2


@contextlib.contextmanager
def http_demo(name: str = "demo", marks: Path | None = None, instructions: str | None = None) -> Iterator[str]:
    """A fresh demo server (``demo_app.build``) over HTTP; yields its ``/mcp`` URL."""
    with serving(build(name, marks, instructions, own_process=False).streamable_http_app()) as url:
        yield url


@contextlib.contextmanager
def serving(app: object) -> Iterator[str]:
    """An ASGI app under uvicorn in a thread; yields its ``/mcp`` URL once uvicorn has started:
    the thread's event loop (its epoll and self-pipe) is open by then, so a check of what a
    golem call in this process left open (tests/inprocess.py) never counts the server's."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=GRACE)  # type: ignore[arg-type]
    server = _Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, name="demo-http", daemon=True)
    thread.start()
    try:
        assert server.ready.wait(STARTUP), "the demo server's thread did not start"
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(GRACE + 10)
        listener.close()
        assert not thread.is_alive(), "the demo server's thread did not stop"


class _Server(uvicorn.Server):
    """uvicorn's server, saying when it has started (``ready``)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()
