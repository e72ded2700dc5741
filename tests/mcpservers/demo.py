"""A tool server for the tests, on the SDK's ``MCPServer``: stdio by default, streamable HTTP
with ``--http-fd FD`` (a listening socket it is given). ``--name NAME`` names it; ``--marks
DIR`` is where tools leave files that say what happened inside the server (a call was
cancelled, its pid).

Tools: echo (read-only), shout (destructive), slow, fail (isError), crash (the process exits
mid-call), picture (an image), structured (structured content only), flood (much text),
pid, spawn_child (a process in the server's group), authorization (the request's header, over
HTTP), hostile (text with terminal escapes), grow (adds a tool, ``grown``, and says the list
changed), ask_user (a form for the user: elicitation), visit (a URL-mode elicitation), roots
(the client's roots), steps (progress, then waits for a gate file), warn (log lines) and linked
(a resource_link to the readme); grow adds a prompt and a resource too, and says so.
``--instructions TEXT`` gives the server instructions for the model. A prompt, greet, and
resources, ``demo://readme``, ``demo://pixel.png`` and the template ``demo://notes/{topic}``,
with completions for greet's style and the template's topic. ``--start-gate FILE`` makes it slow to start:
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
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import (
    CallToolResult,
    Completion,
    CompletionArgument,
    ListRootsResult,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="demo")
parser.add_argument("--http-fd", type=int, default=None)
parser.add_argument("--marks", default="")
parser.add_argument("--exit-at-start", type=int, default=None)
parser.add_argument("--start-gate", default="")
parser.add_argument("--instructions", default=None)
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
app = MCPServer(options.name, instructions=options.instructions)


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


@app.tool()
async def grow(ctx: Context) -> str:
    """Add a tool, grown, and tell the client the list changed."""

    def grown(text: str) -> str:
        """A tool added while the server ran."""
        return f"grown: {text}"

    def grown_prompt() -> str:
        """A prompt added while the server ran."""
        return "a grown prompt"

    def grown_note() -> str:
        return "a grown note"

    app.add_tool(grown)
    app.prompt(name="grown")(grown_prompt)
    app.resource("demo://grown", name="grown")(grown_note)
    if ctx.protocol_version == "2026-07-28":  # to the client's subscriptions/listen stream
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
        await ctx.notify_resources_changed()
    else:
        await ctx.session.send_tool_list_changed()
        await ctx.session.send_prompt_list_changed()
        await ctx.session.send_resource_list_changed()
    return "added grown"


@app.tool()
def linked() -> CallToolResult:
    """A link to the readme resource (a resource_link), not its contents."""
    link = ResourceLink(type="resource_link", uri="demo://readme", name="readme", mime_type="text/markdown")
    return CallToolResult(content=[TextContent(type="text", text="see the readme"), link])


class Person(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(default=30, description="Your age in years")
    subscribe: bool = Field(default=False)


def ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


@app.tool()
async def ask_user(answer: Annotated[ElicitationResult[Person], Resolve(ask_person)]) -> str:
    """Ask the user for their name, age and whether to subscribe (in either protocol era)."""
    if isinstance(answer, AcceptedElicitation):
        return f"accepted: {answer.data.model_dump_json()}"
    return answer.action


@app.tool()
async def visit(ctx: Context) -> str:
    """Ask the user to open a URL (2025-11-25: a request mid-call)."""
    result = await ctx.elicit_url("Please sign in", "https://example.com/sign-in?x=1", "e-1")
    return result.action


def the_roots() -> ListRoots:
    return ListRoots()


@app.tool()
async def roots(found: Annotated[ListRootsResult, Resolve(the_roots)]) -> str:
    """The client's roots."""
    return " ".join(str(r.uri) for r in found.roots) or "(no roots)"


@app.tool()
async def steps(gate: str, ctx: Context) -> str:
    """Report progress, wait for the gate file, report again."""
    await ctx.report_progress(1, 2, "half way")
    while not os.path.exists(gate):
        await asyncio.sleep(0.02)
    await ctx.report_progress(2, 2, "done")
    return "stepped"


@app.tool()
async def warn(ctx: Context) -> str:
    """Log a warning and an info line."""
    await ctx.warning("disk \x1b[31malmost\x1b[0m full")
    await ctx.info("all is well")
    return "logged"


@app.prompt()
def greet(name: str, style: str = "plain") -> str:
    """Greet someone by name."""
    return f"Please greet {name} in a {style} way."


@app.resource("demo://readme", mime_type="text/markdown")
def readme() -> str:
    """The demo's readme."""
    return "# Demo\nA server for golem's tests."


@app.resource("demo://pixel.png", mime_type="image/png")
def pixel() -> bytes:
    """A one-pixel PNG."""
    return PNG


@app.resource("demo://notes/{topic}")
def notes(topic: str) -> str:
    """Notes on a topic."""
    return f"notes on {topic}"


@app.completion()
async def complete(ref: object, argument: CompletionArgument, context: object) -> Completion | None:
    """greet's style and the notes' topic, completed from what was typed."""
    if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "style":
        choices = ["plain", "warm", "very warm", "formal"]
    elif isinstance(ref, ResourceTemplateReference) and argument.name == "topic":
        choices = ["alpha", "beta", "gamma", "beta\x1b]0;pwned\x07"]  # the last would retitle a terminal
    else:
        return None
    return Completion(values=[c for c in choices if c.startswith(argument.value)])


if __name__ == "__main__":
    if options.http_fd is not None:
        import socket

        import uvicorn

        server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="warning"))
        server.run(sockets=[socket.socket(fileno=options.http_fd)])
    else:
        app.run()
