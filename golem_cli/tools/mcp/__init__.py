"""Tool servers over the Model Context Protocol: any MCP server's tools in a chat.

``config`` reads an ``[mcp_servers.NAME]`` table, ``naming`` gives each tool its name for
the model (``NAME__TOOL``), ``source`` makes a server a tool source (``mcp:NAME``) with
golem's approval policy, ``results`` turns what a server answers into a tool result.
Those four import nothing of the MCP SDK, which is slow to import (ADR 0012):
``connection`` (the running connection: start, calls, restart, stop) and ``http`` (a
streamable HTTP server) do, and are imported only when a server starts; ``transport`` (the
child process) needs only anyio until the server speaks, so the process starts while the SDK
is imported.
See ADR 0012.
"""
