"""Tool servers for the tests, written with the MCP SDK's own server class (``MCPServer``):
``demo.py`` runs over stdio or, with ``--http PORT``, streamable HTTP. ``demo_config``
builds a config table that starts it."""

from __future__ import annotations

import sys
from pathlib import Path

DEMO = Path(__file__).with_name("demo.py")


def demo_table(*args: str, **keys: object) -> dict[str, object]:
    """An ``[mcp_servers.NAME]`` table for the demo server over stdio."""
    return {"command": sys.executable, "args": [str(DEMO), *args], **keys}


def demo_toml(name: str, *args: str, extra: str = "") -> str:
    """The same, as config.toml text."""
    quoted = ", ".join(f'"{a}"' for a in (str(DEMO), *args))
    return f'\n[mcp_servers.{name}]\ncommand = "{sys.executable}"\nargs = [{quoted}]\n{extra}'
