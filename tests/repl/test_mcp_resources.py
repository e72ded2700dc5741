"""A tool server's resources as a person meets them in the real ``golem chat``: ``@SERVER:URI``
in a prompt and ``/attach @SERVER:URI`` attach them (Tab completes them), a resource that
cannot be read sends nothing, and a ``resource_link`` a tool returned is named the way it is
attached; Tab offers the server's own completions of a prompt's argument and a template's
variable (``completion/complete``). The server is the SDK-built demo
(tests/mcpservers/demo_app.py, over HTTP from a thread of this process); the provider is the
loopback one. The tests that do not change the server share one chat with it
(tests/repl/mcp_chats.py: ``/new`` per test); the one whose server adds to its offer starts
its own chat and server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcpservers import url_toml
from tests.mcpservers.threaded import http_demo
from tests.providerserver import ProviderServer, Scenario
from tests.repl.mcp_chats import pool_with, take_ready
from tests.repl.shared_chat import ChatPool
from tests.repl.test_mcp_protocol import READY, configure, wait_for_screen

pytestmark = pytest.mark.slow
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest.fixture(scope="module")
def chat_pool(provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatPool]:
    """The module's shared chats, their home configured with a demo server of the module's."""
    with http_demo() as url, pool_with(provider_server, tmp_path_factory, url_toml("demo", url)) as pool:
        yield pool


@pytest.fixture
def demo_chat(shared_chat):
    """The module's ``golem chat -T demo --yes`` at a new conversation, its server ready."""
    return take_ready(shared_chat, "-T", "demo", "--yes").chat


def user_messages(server: ProviderServer) -> list[object]:
    return [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"]


def test_a_mention_attaches_the_resource_and_tab_completes_it(demo_chat, server: ProviderServer):
    server.enqueue(Scenario())
    chat = demo_chat
    chat.child.send("summarise @demo:demo://r")
    chat.expect("readme")  # offered while typing
    chat.child.send("\t")
    wait_for_screen(chat, "you> summarise @demo:demo://readme")
    chat.child.sendline(" please")
    chat.turn()
    chat.prompt()
    (asked,) = user_messages(server)
    assert asked == ('summarise @demo:demo://readme please\n\n<file name="@demo:demo://readme">\n'
                     "# Demo\nA server for golem's tests.\n</file>")  # fmt: skip
    chat.child.sendline("and @demo:demo://readme with @demo:demo://nothing here")  # a resource the server has not
    said = chat.expect(r"Nothing was sent\.")
    assert "@demo:demo://nothing: tool server 'demo' could not read demo://nothing" in " ".join(said.split())
    chat.prompt()
    chat.child.sendline("mail me@example.com or @nobody:x://y")  # no running server's name: plain text
    chat.turn()
    chat.prompt()
    assert user_messages(server)[-1] == "mail me@example.com or @nobody:x://y"  # the readme did not wait for it


def test_attach_takes_a_servers_image_and_a_templates_resource(demo_chat, server: ProviderServer):
    server.enqueue(Scenario())
    chat = demo_chat
    chat.child.sendline("/attach @demo:demo://pixel.png")
    chat.expect(r"Attached image \(image/png, \d+ bytes\) to your next prompt\.")
    chat.prompt()
    chat.child.sendline("what is it?")
    chat.turn()
    chat.prompt()
    (asked,) = user_messages(server)
    assert isinstance(asked, list)
    assert asked[0] == {"type": "text", "text": "what is it?"}
    assert asked[1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"
    chat.child.send("/attach @demo:demo://no")  # the template's fixed part
    chat.expect("template")
    chat.child.send("\t")
    wait_for_screen(chat, "you> /attach @demo:demo://notes/")
    chat.child.sendline("beta")
    chat.expect(r"Attached @demo:demo://notes/beta \(text, \d+ bytes\) to your next prompt\.")
    chat.prompt()
    chat.child.sendline("and this?")  # the attachment goes with the next prompt (and no later one)
    chat.turn()
    chat.prompt()
    assert user_messages(server)[-1] == ('and this?\n\n<file name="@demo:demo://notes/beta">\nnotes on beta\n</file>')


def test_a_resource_link_in_a_tool_result_is_shown_and_attaches(demo_chat, server: ProviderServer):
    from tests.repl.test_tools import calls

    server.enqueue(calls(("call_1", "demo__linked", {})), Scenario(), Scenario())
    chat = demo_chat
    chat.child.sendline("link it")
    chat.turn()
    chat.prompt()
    tool = [m for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert tool[0]["content"] == "see the readme\n[resource link: @demo:demo://readme (readme text/markdown)]"
    chat.child.sendline("/attach @demo:demo://readme")
    chat.expect(r"Attached @demo:demo://readme \(text, \d+ bytes\) to your next prompt\.")
    chat.prompt()
    chat.child.sendline("read it")  # the attachment goes with the next prompt (and no later one)
    chat.turn()
    chat.prompt()
    readme = "# Demo\nA server for golem's tests."
    assert user_messages(server)[-1] == f'read it\n\n<file name="@demo:demo://readme">\n{readme}\n</file>'


def test_tab_offers_the_servers_completions_of_a_prompts_argument_and_a_templates_variable(
    demo_chat, server: ProviderServer
):
    server.enqueue(Scenario())
    chat = demo_chat
    chat.child.send("/attach @demo:demo://notes/b")  # the server completes the template's variable
    chat.expect("notes/beta")  # offered while typing
    chat.child.send("\t")  # the one completion offered: a value with control characters is not
    wait_for_screen(chat, "you> /attach @demo:demo://notes/beta")
    assert "]0;pwn" not in chat.log.getvalue()  # not even in the menu
    chat.child.sendline("")
    chat.expect(r"Attached @demo:demo://notes/beta \(text, \d+ bytes\) to your next prompt\.")
    chat.prompt()
    chat.child.send("/demo:greet name=Ada style=ve")  # and a prompt's argument, quoted as a shell needs
    chat.expect("very warm")
    chat.child.send("\t")
    wait_for_screen(chat, 'you> /demo:greet name=Ada style="very warm"')
    chat.child.sendline("")
    chat.turn()
    chat.prompt()
    asked = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"]
    assert asked[-1] == ('Please greet Ada in a very warm way.\n\n<file name="@demo:demo://notes/beta">\n'
                         "notes on beta\n</file>")  # fmt: skip


def test_what_a_server_adds_is_offered_at_the_next_prompt_and_the_model_reads_it(spawn, server: ProviderServer,
                                                                                 home: Path, demo_url: str):  # fmt: skip
    from tests.repl.test_tools import calls

    configure(home, url_toml("demo", demo_url))
    server.enqueue(calls(("c1", "demo__grow", {})), Scenario(),
                   calls(("c2", "read_resource", {"resource": "@demo:demo://grown"})), Scenario())  # fmt: skip
    chat = spawn("chat", "-T", "demo", "-T", "read_resource", "--yes")
    chat.prompt()
    chat.expect(READY)
    chat.child.sendline("grow")
    chat.turn()
    chat.prompt()
    chat.child.send("/demo:gro")  # its new prompt, before any other turn
    chat.expect("/demo:grown")
    chat.child.send("\t")
    wait_for_screen(chat, "you> /demo:grown")
    chat.child.send(" @demo:demo://gr")  # and its new resource
    chat.expect("demo://grown")
    chat.child.send("\t")
    wait_for_screen(chat, "you> /demo:grown @demo:demo://grown")
    chat.child.send("\x15")  # Ctrl-U: the line is cleared
    chat.child.sendline("read it")
    chat.turn()
    chat.prompt()
    chat.leave()
    tool = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert tool[-1] == "[resource: demo://grown]\na grown note"
