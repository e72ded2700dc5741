"""The published reference server, ``@modelcontextprotocol/server-everything`` (npm; installed
into an ignored folder, skipped saying why when it cannot be), through the real ``golem chat``
(one per module, ``/new`` per test: tests/repl/mcp_chats.py) and ``golem ask`` / ``golem mcp``
(golem's entry point in this process): its prompt as a slash command with the server's
completions, its resource attached by ``@SERVER:URI``, its form asked in the terminal, progress
on the running tool's line, and the tool root as its one root. The provider is the loopback
one, whose reply after tool results is ``tool results: <id> ...``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcpservers.everything import everything_table
from tests.providerserver import ProviderServer, Scenario
from tests.repl import test_tools
from tests.repl.conftest import PATIENCE
from tests.repl.mcp_chats import pool_with, take_ready
from tests.repl.shared_chat import ChatPool
from tests.repl.test_mcp_protocol import configure, wait_for_screen
from tests.repl.test_tools import calls

pytestmark = pytest.mark.slow
project = test_tools.project  # the tool root, as a fixture


@pytest.fixture(scope="module")
def chat_pool(provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatPool]:
    """The module's shared chats (tests/repl/mcp_chats.py), with server-everything as ``ev``:
    the chat tests take one ``golem chat -T ev --yes`` (and one server process) at a new
    conversation each."""
    with pool_with(provider_server, tmp_path_factory, everything_toml()) as pool:
        yield pool


@pytest.fixture
def ev_chat(shared_chat):
    return take_ready(shared_chat, "-T", "ev", "--yes").chat


def everything_toml(name: str = "ev") -> str:
    table = everything_table()
    args = ", ".join(f'"{a}"' for a in table["args"])  # type: ignore[attr-defined]
    return f'\n[mcp_servers.{name}]\ncommand = "node"\nargs = [{args}]\n'


def user_texts(server: ProviderServer) -> list[object]:
    return [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"]


def test_its_prompt_and_resource_in_the_chat_with_the_servers_completions(ev_chat, server: ProviderServer):
    server.enqueue(Scenario(), Scenario())
    chat = ev_chat
    chat.child.send("/ev:completable-prompt department=Sa")  # the server completes the value
    chat.expect("department=Sales")  # offered while typing
    chat.child.send("\t")
    wait_for_screen(chat, "you> /ev:completable-prompt department=Sales")
    chat.child.sendline(" name=Ada")
    chat.turn()
    chat.prompt()
    (asked,) = user_texts(server)
    assert "Sales" in str(asked) and "Ada" in str(asked)
    chat.child.send("read @ev:demo://resource/static/document/arch")
    chat.expect("architecture.md")
    chat.child.send("\t")
    wait_for_screen(chat, "you> read @ev:demo://resource/static/document/architecture.md")
    chat.child.sendline("")
    chat.turn()
    chat.prompt()
    last = user_texts(server)[-1]
    assert isinstance(last, str)
    assert last.startswith('read @ev:demo://resource/static/document/architecture.md\n\n<file name="@ev:demo://')


def test_its_form_is_asked_and_its_progress_is_on_the_running_line(ev_chat, server: ProviderServer):
    server.enqueue(calls(("c1", "ev__trigger-elicitation-request", {})), Scenario(),
                   calls(("c2", "ev__trigger-long-running-operation", {"duration": 3, "steps": 3})), Scenario())  # fmt: skip
    chat = ev_chat
    chat.child.sendline("ask me")
    asked = chat.expect(r"\[c\]ancel ›")
    assert "? tool server 'ev' asks:" in asked
    assert "(integer, default 42)" in asked and "(boolean" in asked
    chat.child.sendline("d")
    assert "tool results: c1" in chat.turn()
    chat.prompt()
    chat.child.sendline("run long")
    chat.expect(r"running ev__trigger-long-running-operation \([12]/3", timeout=PATIENCE)
    chat.turn()
    chat.prompt()


def test_the_tool_root_is_its_one_root(server: ProviderServer, golem_main, home: Path, project: Path):
    configure(home, everything_toml())
    server.enqueue(calls(("c1", "ev__get-roots-list", {})))
    done = golem_main("ask", "-T", "ev", "--yes", "roots?")
    assert done.code == 0, done.err
    (result,) = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "Current MCP Roots (1 total)" in result and f"URI: {project.resolve().as_uri()}\n" in result


def test_golem_mcp_prompts_and_resources_list_its_offer(golem_main, home: Path):
    import json

    configure(home, everything_toml())
    listed = golem_main("mcp", "prompts", "ev", "--json")
    assert listed.code == 0, listed.err
    (row,) = json.loads(listed.out)
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= {p["name"] for p in row["prompts"]}
    text = golem_main("mcp", "resources", "ev").out
    assert "@ev:demo://resource/static/document/architecture.md (text/markdown)" in text
    assert "@ev:demo://resource/dynamic/text/{resourceId}  [template]  Dynamic Text Resource" in text
