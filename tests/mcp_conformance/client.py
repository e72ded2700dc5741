"""The client the MCP conformance suite drives (``@modelcontextprotocol/conformance``, client
mode): ``python tests/mcp_conformance/client.py SERVER_URL``, the scenario named in
``MCP_CONFORMANCE_SCENARIO``; the tests run ``run`` in their own process instead, for each
scenario ``relay.py`` hands them (``host.py``). It goes through golem's own MCP layer, the ``Connection`` a
chat's tool server is (``golem_cli/tools/mcp/connection.py``): start, list the tools, call
each with arguments made from its schema, stop. A server's question (elicitation) is answered
as a person pressing Enter at every field would: each field's default. Signing in (the auth
scenarios) is ``golem mcp login``'s flow with a browser that follows the authorization URL and
comes back to golem's loopback callback; a pre-registered client's ID and secret come from
``MCP_CONFORMANCE_CONTEXT`` as they would from config.toml."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from golem_cli.config.schema import McpServerTable
from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.connection import Connection
from golem_cli.tools.mcp.hooks import Elicitation, Reply, ServerHooks
from golem_cli.tools.mcp.oauth import Login, callback_server

SAMPLES: dict[str, Any] = {"string": "hello", "number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}


async def accept_defaults(request: Elicitation) -> Reply:
    """Enter at every field: the defaults, nothing else."""
    if request.url:
        return Reply(action="decline")
    return Reply(action="accept", content={f.key: f.default for f in request.fields if f.default is not None})


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value for each property of a tool's input schema (its default, else a sample of its type)."""
    properties = schema.get("properties") or {}
    return {name: spec.get("default", SAMPLES.get(str(spec.get("type")), "x"))
            for name, spec in properties.items() if isinstance(spec, dict)}  # fmt: skip


async def browse(url: str) -> None:
    """A browser whose person agrees at once: the authorization server's redirect is followed
    to golem's callback."""
    import httpx2

    async with httpx2.AsyncClient(follow_redirects=False, timeout=20) as client:
        answer = await client.get(url)
        location = answer.headers.get("location")
        if location:
            await client.get(location)


def table_for(url: str, context: dict[str, Any], secret_variable: str) -> McpServerTable:
    """The server's table, with the client registered beforehand when the scenario gives one
    (its secret in ``secret_variable``, set by ``run``)."""
    keys: dict[str, Any] = {}
    if context.get("client_id"):
        keys["oauth_client_id"] = context["client_id"]
        if context.get("client_secret"):
            keys["oauth_client_secret_env"] = secret_variable
    return McpServerTable(url=url, startup_timeout_sec=30, tool_timeout_sec=20, **keys)


#: Each run's own variable for a client secret: runs in one process (``host.py``) may overlap.
_RUNS = itertools.count()


async def run(url: str, scenario: str, context: dict[str, Any], say: Callable[[str], object] = print) -> int:
    """One scenario: ``context`` is ``MCP_CONFORMANCE_CONTEXT``'s object; ``say`` takes what a
    client process would print."""
    hooks = ServerHooks(elicit=accept_defaults, log=lambda server, level, text: say(f"log {level}: {text}"))
    say(f"scenario {scenario!r}: connecting to {url}")
    secret = f"CONFORMANCE_CLIENT_SECRET_{os.getpid()}_{next(_RUNS)}"
    if context.get("client_secret"):
        os.environ[secret] = context["client_secret"]
    answers: asyncio.Queue[str] = asyncio.Queue()
    try:
        with tempfile.TemporaryDirectory() as tokens:
            async with callback_server(answers) as redirect:
                config = ServerConfig(name="conformance", table=table_for(url, context, secret), tokens=Path(tokens))
                login = Login(show=browse, redirect_uri=redirect, answers=answers)
                connection = Connection(config, notify=say, hooks=hooks, login=login)
                tools = await connection.start()
                try:
                    for tool in tools:
                        result = await connection.call(tool["name"], arguments(tool.get("inputSchema") or {}))
                        say(f"{tool['name']}: {str(result)[:200]}")
                finally:
                    await connection.close()
    finally:
        os.environ.pop(secret, None)
    return 0


if __name__ == "__main__":
    scenario_context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    sys.exit(asyncio.run(run(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), scenario_context)))
