"""Tool servers for the tests, written with the MCP SDK's own server class (``MCPServer``):
the demo server (``demo_app.py``) runs as a program over stdio (``demo.py``: ``demo_table`` and
``demo_toml`` build a config table that starts it; ``server_tables`` reads such tables as golem
reads config.toml's), or over streamable HTTP from a thread of the test process
(``threaded.http_demo``; ``url_toml`` is its table)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from golem_cli.config.schema import ConfigFile, McpServerTable
from golem_cli.config.tables import convert

DEMO = Path(__file__).with_name("demo.py")
REFUSING = Path(__file__).with_name("refusing.py")
RAW = Path(__file__).with_name("raw.py")


def published(program: str) -> str:
    """The path of a published server's program, installed by the test extras."""
    found = shutil.which(program, path=str(Path(sys.executable).parent))
    assert found is not None, f"{program} is not installed: pip install -e '.[test]'"
    return found


@contextlib.contextmanager
def refusing(status: int, body: str = "", challenge: str = "") -> Iterator[str]:
    """An endpoint that answers every request with ``status`` (``refusing.py``); yields its URL."""
    with served(lambda fd: [str(REFUSING), fd, str(status), body, challenge]) as url:
        yield url


@contextlib.contextmanager
def served(argv: Callable[[str], list[str]]) -> Iterator[str]:
    """A Python server on a loopback port, ``argv(FD)`` its arguments; yields its ``/mcp`` URL.
    The port is bound and listening here, then handed to the server: no other process can
    take it meanwhile, and a request made before the server is up waits in the queue instead
    of being refused."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        process = subprocess.Popen([sys.executable, *argv(str(listener.fileno()))], pass_fds=[listener.fileno()],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


#: How long the tests let a server start: the SDK's import alone is seconds of CPU, and on a
#: machine shared with other test runs the default (20 s) was once not enough.
STARTUP_SECONDS = 90


def demo_table(*args: str, **keys: object) -> dict[str, object]:
    """An ``[mcp_servers.NAME]`` table for the demo server over stdio."""
    return {"command": sys.executable, "args": [str(DEMO), *args], "startup_timeout_sec": STARTUP_SECONDS, **keys}


def server_tables(tables: dict[str, dict[str, Any]]) -> dict[str, McpServerTable]:
    """``[mcp_servers.NAME]`` tables as golem reads them from config.toml (checked, typed)."""
    return convert(ConfigFile, {"mcp_servers": tables}).mcp_servers


def demo_toml(name: str, *args: str, extra: str = "") -> str:
    """The same, as config.toml text."""
    quoted = ", ".join(f'"{a}"' for a in (str(DEMO), *args))
    started = "" if "startup_timeout_sec" in extra else f"startup_timeout_sec = {STARTUP_SECONDS}\n"
    return f'\n[mcp_servers.{name}]\ncommand = "{sys.executable}"\nargs = [{quoted}]\n{started}{extra}'


def raw_toml(name: str, *args: str) -> str:
    """A table, as config.toml text, for the hand-written server (``raw.py``: no SDK to import)."""
    quoted = ", ".join(f'"{a}"' for a in (str(RAW), *args))
    return f'\n[mcp_servers.{name}]\ncommand = "{sys.executable}"\nargs = [{quoted}]\n'


def url_toml(name: str, url: str, extra: str = "") -> str:
    """An ``[mcp_servers.NAME]`` table, as config.toml text, for a server over HTTP at ``url``."""
    return f'\n[mcp_servers.{name}]\nurl = "{url}"\n{extra}'
