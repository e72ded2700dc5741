"""MCP beyond tool calls, as a person meets it in the real ``golem`` (on a pseudo-terminal;
without one, its entry point in this process behind pipes): a server that changes its tools,
gives instructions, asks the user (elicitation), asks for roots, reports progress and logs,
and an HTTP server that refuses (401 before login, 503). The chat tests that leave the server
as they found it share one chat (tests/repl/mcp_chats.py: ``/new`` per test). The servers are
the SDK-built demo (tests/mcpservers/demo_app.py, over HTTP from a thread of this process) and
a refusing endpoint (tests/mcpservers/refusing.py); the provider is the loopback one, whose
reply after tool results is ``tool results: <id> ...``."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from golem_cli.store import Store

from tests.mcpservers import demo_toml, refusing, url_toml
from tests.mcpservers.threaded import http_demo
from tests.providerserver import ProviderServer, Scenario
from tests.repl import test_tools
from tests.repl.conftest import PATIENCE
from tests.repl.mcp_chats import READY, STDIO_DEMO, pool_with, take_ready
from tests.repl.shared_chat import ChatPool
from tests.repl.test_tools import calls

pytestmark = pytest.mark.slow
FOOTER = r"\d+ stored, \d+ sent[^\n]*"
project = test_tools.project  # the tool root, as a fixture


@pytest.fixture(scope="module")
def chat_pool(provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatPool]:
    """The module's shared chats (tests/repl/mcp_chats.py), the demo server a program each
    starts (``STDIO_DEMO``): for the tests about a conversation with it that leave it as it was."""
    with pool_with(provider_server, tmp_path_factory, STDIO_DEMO) as pool:
        yield pool


@pytest.fixture
def demo_chat(shared_chat):
    """The module's ``golem chat -T demo --yes`` at a new conversation, its server ready."""
    return take_ready(shared_chat, "-T", "demo", "--yes")


def configure(home: Path, text: str) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text() + text)


def tool_names(request: object) -> list[str]:
    return [t["function"]["name"] for t in request.json.get("tools", [])]  # type: ignore[attr-defined]


def system_text(request: object) -> str:
    return "\n".join(m["content"] for m in request.json["messages"] if m["role"] == "system")  # type: ignore[attr-defined]


def test_a_tool_the_server_adds_is_offered_from_the_next_turn(spawn, server: ProviderServer, home: Path, demo_url: str):
    configure(home, url_toml("demo", demo_url))
    server.enqueue(calls(("c1", "demo__grow", {})), Scenario(), Scenario(), calls(("c2", "demo__grown", {"text": "hi"})))
    chat = spawn("chat", "-T", "demo", "--yes")
    chat.prompt()
    chat.expect(READY)
    first = chat.say("grow")
    assert "tool results: c1 added grown" in first
    assert "demo__grown" not in tool_names(server.requests[0])
    out = chat.say("again")
    assert "tool server 'demo' changed its tools: added demo__grown" in out
    names = tool_names(server.requests[-1])
    assert "demo__grown" in names and [n for n in names if n != "demo__grown"] == tool_names(server.requests[0])
    assert names == sorted(names)  # the tools in name order, so the cached prefix moves only where one is added
    out = chat.say("use it")
    assert "tool results: c2 grown: hi" in out
    chat.leave()


def test_a_servers_instructions_reach_the_model_after_the_chats_own(server: ProviderServer, golem_main, home: Path):
    """Two servers in one run: `demo`'s instructions are sent, `quiet`'s (``instructions = false``) are not."""
    with (http_demo(instructions="Always greet the user in French.") as demo,
          http_demo("quiet", instructions="Say nothing.") as quiet):  # fmt: skip
        configure(home, url_toml("demo", demo) + url_toml("quiet", quiet, "instructions = false\n"))
        done = golem_main("ask", "-T", "demo", "-T", "quiet", "--yes", "-s", "Be brief.", "hello")
    assert done.code == 0, done.err
    said = system_text(server.requests[-1])
    assert "Say nothing." not in said, "instructions = false: the server's instructions are not sent"
    assert said == "Be brief.\n\nInstructions from the tool server 'demo':\nAlways greet the user in French."


@pytest.fixture(scope="module")
def refused(provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One chat with two HTTP servers that refuse, ``remote`` (401 before login) and ``busy``
    (503): the line it printed about each, by name."""
    challenge = 'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"'
    with (refusing(401, '{"error": "invalid_token"}', challenge) as remote,
          refusing(503, "overloaded \x1b[31mtry\x1b[0m later") as busy,
          pool_with(provider_server, tmp_path_factory, url_toml("remote", remote) + url_toml("busy", busy)) as pool):  # fmt: skip
        chat = pool.take("-T", "remote", "-T", "busy").chat
        said = [chat.expect(r"did not start[^\n]*") for _ in range(2)]  # each through its line
    return {re.findall(r"tool server '(\w+)' did not start", text)[-1]: text for text in said}


def test_an_http_server_asking_for_authorisation_says_to_log_in(refused: dict[str, str]):
    assert "tool server 'remote' did not start: needs authorisation: run `golem mcp login remote`" in refused["remote"]


def test_an_http_servers_other_refusal_is_its_status_and_its_words(refused: dict[str, str]):
    assert "did not start: the server answered HTTP 503: overloaded ^[[31mtry^[[0m later" in refused["busy"]


def test_a_servers_form_is_asked_in_the_terminal(demo_chat, server: ProviderServer):
    server.enqueue(calls(("c1", "demo__ask_user", {})), Scenario(), calls(("c2", "demo__ask_user", {})))
    chat = demo_chat.chat
    chat.child.sendline("ask me")
    asked = chat.expect(r"\[c\]ancel ›")
    assert "? tool server 'demo' asks:" in asked and "Who are you?" in asked
    assert "name (string, required): Your name" in asked
    assert "age (integer, default 30): Your age in years" in asked and "subscribe (boolean, default false)" in asked
    chat.child.sendline("a")
    chat.expect(r"name\* ›")
    chat.child.sendline("Ada")
    chat.expect(r"age › 30")
    chat.child.sendline("")
    chat.expect(r"subscribe › false")
    chat.child.sendline("\b\b\b\b\byes")
    out = chat.turn() + chat.prompt()
    assert 'tool results: c1 accepted: {"name":"Ada","age":30,"subscribe":true}' in out
    chat.child.sendline("again")
    chat.expect(r"\[c\]ancel ›")
    chat.child.sendline("d")
    assert "tool results: c2 decline" in chat.turn()
    chat.prompt()


def test_without_a_terminal_a_servers_question_is_declined_at_once_and_its_root_is_the_tool_root(
    server: ProviderServer, golem_main, home: Path, project: Path, demo_url: str
):
    """golem's entry point in this process, its streams pipes (no terminal)."""
    configure(home, url_toml("demo", demo_url))
    server.enqueue(calls(("c1", "demo__ask_user", {}), ("c2", "demo__roots", {})))
    done = golem_main("ask", "-T", "demo", "--yes", "ask me, and roots?")
    assert done.code == 0, done.err
    assert "tool results: c1 decline;" in done.out, "a server's question, with no terminal: declined"
    assert "tool server 'demo' asked for input; nobody can be asked here (no terminal), so golem declined it" in (
        done.err
    )
    assert f"c2 {project.resolve().as_uri()}" in done.out, "the client's one root: the tool root"


def test_progress_updates_the_running_line_and_warnings_are_one_line(demo_chat, server: ProviderServer,
                                                                     tmp_path: Path):  # fmt: skip
    gate = tmp_path / "gate"
    server.enqueue(calls(("c1", "demo__steps", {"gate": str(gate)})), Scenario(), calls(("c2", "demo__warn", {})))
    chat = demo_chat.chat
    chat.child.sendline("step")
    chat.expect(r"running demo__steps \(1/2 half way\)", timeout=PATIENCE)
    gate.touch()
    chat.turn()
    chat.prompt()
    out = chat.say("warn")
    assert "tool server 'demo' (warning): disk ^[[31malmost^[[0m full" in out
    assert "all is well" not in out


def test_the_tools_a_request_carries_are_the_same_bytes_while_nothing_changed(server: ProviderServer, golem_main,
                                                                               home: Path, demo_url: str):  # fmt: skip
    """The request golem sends carries the tools in the registry's order, unchanged between turns."""
    configure(home, url_toml("demo", demo_url))
    server.enqueue(Scenario(), Scenario())
    first = golem_main("ask", "-T", "demo", "one")
    second = golem_main("ask", "-T", "demo", "two")
    assert first.code == 0 and second.code == 0, first.err + second.err
    a, b = server.requests[-2].json["tools"], server.requests[-1].json["tools"]
    assert json.dumps(a) == json.dumps(b)


def test_golem_mcp_prompts_and_resources_list_what_the_servers_offer(golem_main, home: Path, demo_url: str):
    configure(home, url_toml("demo", demo_url) + demo_toml("bad", "--exit-at-start", "3"))
    listed = golem_main("mcp", "prompts")
    assert listed.code == 0, listed.err
    assert "demo: 1 prompt\n  /demo:greet name=... style?=...  Greet someone by name." in listed.out
    assert "bad: did not start: exited at start" in listed.out
    found = golem_main("mcp", "resources", "demo", "--json")
    (row,) = json.loads(found.out)
    assert [r["uri"] for r in row["resources"]] == ["demo://readme", "demo://pixel.png"]
    assert [t["uriTemplate"] for t in row["templates"]] == ["demo://notes/{topic}"]
    text = golem_main("mcp", "resources", "demo").out
    assert "demo: 2 resources, 1 template" in text and "@demo:demo://notes/{topic}  [template]  notes" in text


def test_a_servers_prompt_is_a_slash_command_with_tab_completion(demo_chat, server: ProviderServer):
    server.enqueue(Scenario())
    chat = demo_chat.chat
    chat.child.send("/demo:gr")
    chat.expect(r"/demo:greet")  # offered while typing
    chat.child.send("\t")
    wait_for_screen(chat, "you> /demo:greet")
    chat.child.send(" na")
    chat.expect(r"name=")
    chat.child.send("\t")
    wait_for_screen(chat, "you> /demo:greet name=")
    chat.child.sendline("")
    assert "it needs name=..." in chat.expect(r"it needs[^\n]*")
    chat.prompt()
    chat.child.sendline('/demo:greet name=Ada style="very warm"')
    chat.turn()
    chat.prompt()
    (asked,) = [m for m in server.requests[-1].json["messages"] if m["role"] == "user"]
    assert asked["content"] == "Please greet Ada in a very warm way."
    stored = next(m.content for m in Store(demo_chat.home).load(demo_chat.cid) if m.role == "user" and m.run_id)
    assert stored == "Please greet Ada in a very warm way."


def wait_for_screen(chat, text: str) -> None:
    """Until ``text`` is on the terminal's screen (as a person would see it)."""
    deadline = time.monotonic() + PATIENCE
    while not any(text in line for line in chat.screen()) and time.monotonic() < deadline:
        chat.child.expect([pexpect.TIMEOUT, r"."], timeout=0.2)
    assert any(text in line for line in chat.screen()), chat.screen()
