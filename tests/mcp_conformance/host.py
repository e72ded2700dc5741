"""golem's conformance client (``client.run``) serving ``relay.py``'s requests from a thread of
the test process, on a Unix socket: one request a scenario, answered with what the client said
(one JSON line each) and its exit status, a failure's traceback as a client process would print
it. Scenarios may overlap (``--suite`` runs them at once): each is a task of the host's loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import tempfile
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path

from tests.mcp_conformance import client


@contextlib.contextmanager
def client_host() -> Iterator[str]:
    """The host, running; yields its socket's path (for ``GOLEM_CONFORMANCE_HOST``)."""
    with tempfile.TemporaryDirectory(prefix="golem-conformance-") as folder:  # short: a socket path has ~100 bytes
        path = str(Path(folder) / "host")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(path)
        listener.listen()
        loop = asyncio.new_event_loop()
        stop = asyncio.Event()
        thread = threading.Thread(target=loop.run_until_complete, args=(serve(listener, stop),), name="conformance-host",
                                  daemon=True)  # fmt: skip
        thread.start()
        try:
            yield path
        finally:
            loop.call_soon_threadsafe(stop.set)
            thread.join(30)
            loop.close()
            assert not thread.is_alive(), "the conformance client host did not stop"


async def serve(listener: socket.socket, stop: asyncio.Event) -> None:
    async with await asyncio.start_unix_server(answer, sock=listener):
        await stop.wait()


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One scenario's client run."""

    def say(text: object) -> None:
        writer.write(json.dumps({"out": str(text)}).encode() + b"\n")

    request = json.loads(await reader.readline())
    try:
        status = await client.run(request["url"], request["scenario"], request["context"], say)
    except Exception:
        say(traceback.format_exc())
        status = 1
    writer.write(json.dumps({"status": status}).encode() + b"\n")
    await writer.drain()
    writer.close()
