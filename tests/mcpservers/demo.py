"""A tool server for the tests, on the SDK's ``MCPServer``: stdio by default, streamable HTTP
with ``--http-fd FD`` (a listening socket it is given). ``--name NAME`` names it; ``--marks
DIR`` is where tools leave files that say what happened inside the server (a call was
cancelled, its pid).

Tools: echo (read-only), shout (destructive), slow, fail (isError), crash (the process exits
mid-call), picture (an image), structured (structured content only), flood (much text),
pid, spawn_child (a process in the server's group), authorization (the request's header, over
HTTP) and hostile (text with terminal escapes). ``--start-gate FILE`` makes it slow to start:
it leaves its pid in ``starting`` and answers nothing until FILE exists (the test opens the
gate when it wants the server ready); ``--exit-at-start STATUS`` makes it exit instead."""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import CallToolResult, ToolAnnotations

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="demo")
parser.add_argument("--http-fd", type=int, default=None)
parser.add_argument("--marks", default="")
parser.add_argument("--exit-at-start", type=int, default=None)
parser.add_argument("--start-gate", default="")
options = parser.parse_args()
if options.exit_at_start is not None:
    sys.stderr.write("demo: refusing to start (told to)\n")
    sys.exit(options.exit_at_start)
marks = Path(options.marks) if options.marks else None
if options.start_gate:  # a server slow to start: it answers nothing until the gate is open
    if marks is not None:
        (marks / "starting").write_text(str(os.getpid()))
    while not os.path.exists(options.start_gate):
        time.sleep(0.02)
app = MCPServer(options.name)


def mark(name: str, text: str) -> None:
    if marks is not None:
        (marks / name).write_text(text)


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"{options.name} says: {text}"


@app.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def shout(text: str) -> str:
    """Say the text back, loudly (the server calls this destructive)."""
    return text.upper()


@app.tool()
async def slow(seconds: float) -> str:
    """Wait, then answer."""
    mark("slow-started", str(os.getpid()))
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        mark("slow-cancelled", "yes")
        raise
    return f"waited {seconds:g} s"


@app.tool()
def fail(why: str = "it went wrong") -> str:
    """Fail on purpose (isError)."""
    raise ToolError(why)


@app.tool()
async def crash() -> str:
    """Exit the whole server in the middle of the call."""
    mark("crash-pid", str(os.getpid()))
    sys.stderr.write("demo: crashing now\n")
    sys.stderr.flush()
    os._exit(7)


@app.tool()
def picture() -> list:
    """A one-pixel PNG and a caption."""
    return ["a red pixel", Image(data=PNG, format="png")]


@app.tool(structured_output=False)
def structured() -> CallToolResult:
    """Only structured content, no text."""
    return CallToolResult(content=[], structured_content={"answer": 42, "unit": "m"})


@app.tool()
def flood(characters: int) -> str:
    """Much text."""
    return "x" * characters + "END"


@app.tool()
def pid() -> str:
    """This server's process ID."""
    return str(os.getpid())


@app.tool()
def spawn_child() -> str:
    """Start a long sleep in this server's process group; answer its pid."""
    import subprocess

    return str(subprocess.Popen(["sleep", "60"]).pid)


@app.tool()
def authorization(ctx: Context) -> str:
    """The Authorization header of this request (HTTP only)."""
    headers = ctx.headers or {}
    return headers.get("authorization", "(none)")


@app.tool()
def hostile() -> str:
    """Text that would move the cursor and retitle the terminal if printed as it is."""
    return "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m and plain"


if __name__ == "__main__":
    if options.http_fd is not None:
        import socket

        import uvicorn

        server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="warning"))
        server.run(sockets=[socket.socket(fileno=options.http_fd)])
    else:
        app.run()
