"""The client the MCP conformance suite drives (``@modelcontextprotocol/conformance``, client
mode): ``python tests/mcp_conformance/client.py SERVER_URL``, the scenario named in
``MCP_CONFORMANCE_SCENARIO``. It goes through golem's own MCP layer, the ``Connection`` a
chat's tool server is (``golem_cli/tools/mcp/connection.py``): start, list the tools, call
each with arguments made from its schema, stop. A server's question (elicitation) is answered
as a person pressing Enter at every field would: each field's default."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from golem_cli.config.schema import McpServerTable
from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.connection import Connection
from golem_cli.tools.mcp.hooks import Elicitation, Reply, ServerHooks

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


async def run(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    hooks = ServerHooks(elicit=accept_defaults, log=lambda server, level, text: print(f"log {level}: {text}"))
    table = McpServerTable(url=url, startup_timeout_sec=20, tool_timeout_sec=20)
    connection = Connection(ServerConfig(name="conformance", table=table), notify=print, hooks=hooks)
    print(f"scenario {scenario!r}: connecting to {url}")
    tools = await connection.start()
    try:
        for tool in tools:
            result = await connection.call(tool["name"], arguments(tool.get("inputSchema") or {}))
            print(f"{tool['name']}: {str(result)[:200]}")
    finally:
        await connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run(sys.argv[-1])))
