"""Shared chats (tests/repl/shared_chat.py) with tool servers: for the MCP tests about what
happens inside a conversation with a server connected (its tools, forms, progress, prompts,
resources), one ``golem chat`` per module, which imports the MCP SDK and starts the servers
once, not once per test. The servers live as long as the module's chats: their tables are in
the chats' GOLEM_HOME. A server a test changes (``grow``) is not one to share: those tests
start their own chat and server.

Where a module also calls golem in the test process (``golem_main``), its shared chat's demo
server is a program the chat starts (``STDIO_DEMO``), not one served from a thread of the test
process: a chat left idle for minutes opens its event stream to the server again (golem's read
timeout), and a connection accepted meanwhile would be a file opened during a ``golem_main``
call, which fails that call's check of what it left behind."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from tests.mcpservers import demo_toml
from tests.providerserver import ProviderServer
from tests.repl.conftest import Chat, configure
from tests.repl.shared_chat import ChatPool, Taken

#: The demo server (tests/mcpservers/demo.py) as a program the chat starts over stdio.
STDIO_DEMO = demo_toml("demo")
#: What golem prints when a tool server it started is ready.
READY = r"Tool server ready in [^\n]*"
_READY_SEEN: weakref.WeakSet[Chat] = weakref.WeakSet()  # chats whose servers said they were ready


@contextlib.contextmanager
def pool_with(provider: ProviderServer, tmp_path_factory: pytest.TempPathFactory, servers: str) -> Iterator[ChatPool]:
    """A module's chat pool whose GOLEM_HOME's config.toml has the tables ``servers`` (TOML
    text) beside the loopback providers; its chats end when the context does."""
    home = tmp_path_factory.mktemp("shared") / "home"
    home.mkdir()
    configure(home, provider)
    config = home / "config.toml"
    config.write_text(config.read_text() + servers)
    pool = ChatPool(home=home)
    try:
        yield pool
    finally:
        pool.end_all()


def take_ready(shared_chat: Any, *args: str, servers: int = 1) -> Taken:
    """``shared_chat(*args)`` once its ``servers`` tool servers are ready: a chat just started
    says so after its first prompt (each server a line); one taken again said it already."""
    taken: Taken = shared_chat(*args)
    if taken.chat not in _READY_SEEN:
        for _ in range(servers):
            taken.chat.expect(READY)
        _READY_SEEN.add(taken.chat)
    return taken
