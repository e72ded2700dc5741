"""``/system`` alone shows the system prompt, as ``/model`` shows the model; it used to clear
it, so typing it to look lost the prompt. ``/system clear`` clears it."""

from __future__ import annotations

from golem_cli.store import Store

from tests.repl.test_chat import banner_cid


def test_system_alone_shows_it_and_clear_clears_it(spawn, home):
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.command("/system", "No system prompt")
    chat.command("/system Answer in French.", "System prompt set")
    out = chat.command("/system", "clear removes it")
    assert "Answer in French." in out
    chat.say("bonjour")
    assert Store(home).load(cid)[0].content == "Answer in French."
    chat.command("/system clear", "System prompt cleared")
    chat.say("hello")
    chat.leave()
    assert [m.role for m in Store(home).load(cid)] == ["user", "assistant", "user", "assistant"]
