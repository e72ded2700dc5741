"""What `golem chat` loads before its prompt: only what the prompt needs. What loads after it
is declared (docs/architecture.md, "What loads when"): rich at the chat's first output, the
session and the core behind it in the worker that opens the session (ADR 0015), the run loop
and the provider's HTTP stack at the first turn, the tool servers' SDK when they start.

A behaviour test, not a timed one (timings: benchmarks/chat_startup.py): the real program on
a pseudo-terminal, with prompt_toolkit's prompt replaced by one that writes ``sys.modules``
and leaves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.mcpservers import demo_toml
from tests.providerserver import ProviderServer
from tests.repl.conftest import golem_env

AT_THE_PROMPT = """
import json, sys
import prompt_toolkit

async def prompt_async(self, *args, **kwargs):
    with open(sys.argv[1], "w") as f:
        json.dump(sorted(name for name, module in sys.modules.items() if module is not None), f)
    raise EOFError  # Ctrl-D: the chat ends as a person leaving it would

prompt_toolkit.PromptSession.prompt_async = prompt_async
from golem_cli.__main__ import main
sys.exit(main(sys.argv[2:]))
"""

#: Loaded after the prompt is shown, never before it; the other commands' modules never.
LATER = ("rich", "httpx", "pygments", "markdown_it", "golem_cli.core.agent", "golem_cli.providers._http",
         "golem_cli.providers.openai.model", "mcp", "golem_cli.tools.mcp.connection",
         "golem_cli.cli.attach", "golem_cli.cli.render.streaming", "golem_cli.cli.tools.view",
         "golem_cli.cli.repl.resources",  # what a turn needs, at the first line
         *(f"golem_cli.cli.commands.{m}" for m in ("ask", "compact", "conversations", "mcp", "models", "normalize",
                                                   "search", "tools", "transfer", "usage")))  # fmt: skip
#: Without tools, the session opens after the prompt too: the model is resolved and the
#: conversation created once the prompt is drawn (the banner needs only the model's name and
#: the new ID), so neither the codec nor the store's index nor the providers load before it.
#: (A tool needs its toolbox for the banner's tools line; that imports the core's tool types.)
#: msgspec loads before the prompt: config.toml is read as its typed tables (ADR 0019). The
#: banner's short ID asks the index only in a store that has one (this one is empty): sqlite3.
OPENED_LATER = ("golem_cli.session", "golem_cli.core.messages", "golem_cli.core.usage",
                "golem_cli.providers", "golem_cli.store.store", "golem_cli.store.index", "sqlite3")  # fmt: skip


def loaded_at_the_prompt(home: Path, tmp_path: Path, *args: str) -> list[str]:
    out = tmp_path / "modules.json"
    child = pexpect.spawn(sys.executable, ["-c", AT_THE_PROMPT, str(out), *args], env=golem_env(home),
                          encoding="utf-8", dimensions=(40, 120), timeout=30)  # fmt: skip
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return json.loads(out.read_text())


@pytest.mark.parametrize("args", [("chat",), ("chat", "-m", "claude:claude-test"), ("chat", "-T", "demo")],
                         ids=["openai-compatible", "anthropic", "a-tool-server"])  # fmt: skip
def test_what_the_prompt_does_not_wait_for(server: ProviderServer, home: Path, tmp_path: Path, args: tuple[str, ...]):
    config = home / "config.toml"
    config.write_text(config.read_text() + demo_toml("demo"))
    modules = loaded_at_the_prompt(home, tmp_path, *args)
    assert "prompt_toolkit" in modules and "golem_cli.cli.repl.loop" in modules  # it did reach the prompt
    later = LATER if "-T" in args else LATER + OPENED_LATER
    early = [m for m in modules if any(m == name or m.startswith(name + ".") for name in later)]
    assert early == []


def test_a_key_typed_in_a_chat_without_tool_servers_loads_nothing_more():
    """The chat's completer runs at every key typed (``complete_while_typing``); it asks the
    tool servers to list again only when there are servers, so the first key typed in a chat
    without them imports nothing (the resources' module waits for a server or a turn)."""
    code = (
        "import asyncio, sys\n"
        "from golem_cli.cli.repl.prompts import ServerCompleter\n"
        "class Box:\n"
        "    def servers(self): return []\n"
        "for box in (None, Box()):\n"
        "    asyncio.run(ServerCompleter(lambda: box).relist())\n"
        "print('golem_cli.cli.repl.resources' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"
