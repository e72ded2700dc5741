"""What a new user meets in the first hour (issue 12), on a pseudo-terminal."""

from __future__ import annotations

import pexpect
import pytest
from golem_cli.core import is_interrupted_reply
from golem_cli.store import Store

from tests.providerserver import Reply, Scenario
from tests.repl.test_chat import banner_cid

FOOTER = r"\d+ stored, \d+ sent[^\n]*"


@pytest.mark.parametrize("model", ["local:echo", "claude:claude-test"])
def test_ctrl_c_with_markdown_shows_the_partial_reply_once(spawn, home, server, model):
    words = " ".join(f"w{i:03d}" for i in range(300))
    server.enqueue(Scenario(reply=Reply(text=f"First paragraph done.\n\n{words}"), delay=0.03))
    chat = spawn("chat", "-m", model)
    cid = banner_cid(chat.prompt())
    chat.child.sendline("tell me a long story")
    chat.expect("w010")
    chat.child.sendintr()
    chat.expect(FOOTER)
    chat.prompt()
    screen = "\n".join(chat.screen())
    assert screen.count("First paragraph done.") == 1, screen
    assert screen.count("w001") == 1, screen
    assert is_interrupted_reply(Store(home).load(cid)[1])


def test_a_streamed_markdown_reply_is_shown_once(spawn, home, server):
    words = " ".join(f"w{i:03d}" for i in range(40))
    server.enqueue(Scenario(reply=Reply(text=f"First paragraph done.\n\n{words}"), delay=0.02))
    chat = spawn("chat")
    chat.prompt()
    chat.say("tell me a story")
    screen = "\n".join(chat.screen())
    assert screen.count("First paragraph done.") == 1, screen
    assert screen.count("w001") == 1, screen


def test_keys_typed_during_a_reply_reach_the_next_prompt(spawn, home, server):
    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i:03d}" for i in range(60))), delay=0.03))
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.child.sendline("a slow one")
    chat.expect("w005")
    chat.child.send("typed ahead")
    chat.expect(FOOTER)
    chat.expect("typed ahead")
    assert chat.screen()[-1] == "you> typed ahead"
    chat.child.send("\r")
    chat.expect("echo: typed ahead")
    chat.expect(FOOTER)
    chat.prompt()
    chat.leave()
    assert [m.content for m in Store(home).load(cid)][-2:] == ["typed ahead", "echo: typed ahead"]
    assert "typed ahead" not in "\n".join(chat.screen()).split("w059")[0]  # not echoed into the reply


def test_ctrl_d_typed_while_the_reply_ends_leaves_the_chat(spawn, home, server):
    server.enqueue(Scenario(reply=Reply(text=" ".join(f"w{i:03d}" for i in range(30))), delay=0.03))
    chat = spawn("chat")
    chat.prompt()
    chat.child.sendline("a slow one")
    chat.expect("w003")
    chat.child.sendeof()
    chat.expect("golem resume")
    chat.child.expect(pexpect.EOF, timeout=15)
