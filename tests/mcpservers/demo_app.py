"""The demo tool server, on the SDK's own server class (``MCPServer``): ``build()`` makes one.
``demo.py`` serves it over stdio as a program of its own; ``tests/mcpservers/threaded.py``
serves it over streamable HTTP from a thread of the test process, which has imported the SDK
already, so a test whose server is not its subject pays no second SDK import.

Tools: echo (read-only), shout (destructive), slow, fail (isError), crash (the process exits
mid-call), picture (an image), structured (structured content only), flood (much text),
pid, spawn_child (a process in the server's group), authorization (the request's header, over
HTTP), hostile (text with terminal escapes), grow (adds a tool, ``grown``, and says the list
changed), ask_user (a form for the user: elicitation), visit (a URL-mode elicitation), roots
(the client's roots), steps (progress, then waits for a gate file), warn (log lines) and linked
(a resource_link to the readme); grow adds a prompt and a resource too, and says so. A prompt,
greet, and resources, ``demo://readme``, ``demo://pixel.png`` and the template
``demo://notes/{topic}``, with completions for greet's style and the template's topic.
``marks`` is a folder where tools leave files that say what happened inside the server (a call
started or was cancelled, and the pid it ran in).

Every tool, prompt, resource and resolver is a coroutine: the SDK runs a plain function on a
worker thread, which, with the server in a thread of the test process, would be a thread
started during golem's in-process call (``golem_main`` fails a call that leaves one)."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
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
#: What the tools about the server's own process answer when it is the test process.
SHARED_PROCESS = "this demo server runs in the test process: use a server process of its own (demo_table)"


def build(name: str = "demo", marks: Path | None = None, instructions: str | None = None,
          own_process: bool = True) -> MCPServer:  # fmt: skip
    """A demo server named ``name``. ``own_process`` is false when it is served from the test
    process: crash, pid and spawn_child then fail the call instead of ending or naming it."""
    app = MCPServer(name, instructions=instructions)
    _calls(app, name, marks)
    _process_tools(app, marks, own_process)
    _results(app)
    _protocol_tools(app)
    _prompts_and_resources(app)
    return app


def _mark(marks: Path | None, name: str, text: str) -> None:
    if marks is not None:
        (marks / name).write_text(text)


def _calls(app: MCPServer, name: str, marks: Path | None) -> None:
    @app.tool(annotations=ToolAnnotations(readOnlyHint=True))
    async def echo(text: str) -> str:
        """Say the text back."""
        return f"{name} says: {text}"

    @app.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
    async def shout(text: str) -> str:
        """Say the text back, loudly (the server calls this destructive)."""
        return text.upper()

    @app.tool()
    async def slow(seconds: float) -> str:
        """Wait, then answer."""
        _mark(marks, "slow-started", str(os.getpid()))
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            _mark(marks, "slow-cancelled", "yes")
            raise
        return f"waited {seconds:g} s"

    @app.tool()
    async def fail(why: str = "it went wrong") -> str:
        """Fail on purpose (isError)."""
        raise ToolError(why)


def _process_tools(app: MCPServer, marks: Path | None, own_process: bool) -> None:
    def alone() -> None:
        if not own_process:
            raise ToolError(SHARED_PROCESS)

    @app.tool()
    async def crash() -> str:
        """Exit the whole server in the middle of the call."""
        alone()
        _mark(marks, "crash-pid", str(os.getpid()))
        sys.stderr.write("demo: crashing now\n")
        sys.stderr.flush()
        os._exit(7)

    @app.tool()
    async def picture() -> list:
        """A one-pixel PNG and a caption."""
        return ["a red pixel", Image(data=PNG, format="png")]

    @app.tool(structured_output=False)
    async def structured() -> CallToolResult:
        """Only structured content, no text."""
        return CallToolResult(content=[], structured_content={"answer": 42, "unit": "m"})

    @app.tool()
    async def flood(characters: int) -> str:
        """Much text."""
        return "x" * characters + "END"

    @app.tool()
    async def pid() -> str:
        """This server's process ID."""
        alone()
        return str(os.getpid())

    @app.tool()
    async def spawn_child() -> str:
        """Start a long sleep in this server's process group; answer its pid."""
        alone()
        return str(subprocess.Popen(["sleep", "60"]).pid)


def _results(app: MCPServer) -> None:
    @app.tool()
    async def authorization(ctx: Context) -> str:
        """The Authorization header of this request (HTTP only)."""
        headers = ctx.headers or {}
        return headers.get("authorization", "(none)")

    @app.tool()
    async def hostile() -> str:
        """Text that would move the cursor and retitle the terminal if printed as it is."""
        return "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m and plain"

    @app.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool, grown, and tell the client the list changed."""

        async def grown(text: str) -> str:
            """A tool added while the server ran."""
            return f"grown: {text}"

        async def grown_prompt() -> str:
            """A prompt added while the server ran."""
            return "a grown prompt"

        async def grown_note() -> str:
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
    async def linked() -> CallToolResult:
        """A link to the readme resource (a resource_link), not its contents."""
        link = ResourceLink(type="resource_link", uri="demo://readme", name="readme", mime_type="text/markdown")
        return CallToolResult(content=[TextContent(type="text", text="see the readme"), link])


class Person(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(default=30, description="Your age in years")
    subscribe: bool = Field(default=False)


async def ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


async def the_roots() -> ListRoots:
    return ListRoots()


def _protocol_tools(app: MCPServer) -> None:
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


def _prompts_and_resources(app: MCPServer) -> None:
    @app.prompt()
    async def greet(name: str, style: str = "plain") -> str:
        """Greet someone by name."""
        return f"Please greet {name} in a {style} way."

    @app.resource("demo://readme", mime_type="text/markdown")
    async def readme() -> str:
        """The demo's readme."""
        return "# Demo\nA server for golem's tests."

    @app.resource("demo://pixel.png", mime_type="image/png")
    async def pixel() -> bytes:
        """A one-pixel PNG."""
        return PNG

    @app.resource("demo://notes/{topic}")
    async def notes(topic: str) -> str:
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
