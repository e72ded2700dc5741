"""``/model`` to a provider that refuses an option of the chat (issue 24 bug 4): it says so at
``/model`` and drops or keeps the option as the person answers; kept, the next prompt is
refused before anything is sent, the hint names ``/option``, and the footer counts 0 sent."""

from __future__ import annotations

import pytest

from tests.providerserver import ProviderServer

pytestmark = pytest.mark.slow


def switched(spawn, answer: str):
    chat = spawn("chat")
    chat.prompt()
    chat.command("/option seed 42", "Options for this chat: seed = 42")
    chat.child.sendline("/model claude:claude-test")
    said = chat.expect(r"Drop seed for this chat\? \[Y/n\] ›")
    assert "Model is now claude:claude-test." in said and "claude:claude-test refuses seed" in said
    chat.child.sendline(answer)
    return chat


def test_dropping_the_refused_option_lets_the_next_prompt_through(spawn, server: ProviderServer):
    chat = switched(spawn, "")
    chat.expect("Dropped seed")
    chat.prompt()
    before = len(server.requests)
    out = chat.say("hello")
    assert "echo: hello" in out and len(server.requests) == before + 1
    assert "seed" not in server.requests[-1].json
    chat.leave()


def test_keeping_it_refuses_the_prompt_unsent_and_names_option(spawn, server: ProviderServer):
    chat = switched(spawn, "n")
    chat.expect("Kept seed")
    chat.prompt()
    before = len(server.requests)
    out = " ".join(chat.say("hello").split())  # the error's line wraps at the terminal's width
    assert len(server.requests) == before  # nothing was sent
    assert "seed is not an option of Anthropic models" in out and "/option seed to unset it" in out
    assert " 0 sent" in out
    chat.leave()
