"""A request the provider says is too long for the model (OpenAI's ``context_length_exceeded``,
Anthropic's "prompt is too long", each in its API's own error body from the loopback server)
is sent once more with half the window, cut where a request can start, and one line says so;
the prompt is kept either way. Through ``golem ask`` (golem's entry point in this process,
``golem_main``) and the REPL on a terminal, on both protocols."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from golem_cli.core.messages import opens_request
from golem_cli.store import Store

from tests.inprocess import Result
from tests.providerserver import ProviderServer
from tests.providerserver.server import prompt_tokens
from tests.repl.histories import write_conversation

pytestmark = pytest.mark.slow

MODELS = {"openai": "local:echo", "anthropic": "claude:claude-test"}
PADDING = " and some more words to make the turn weigh something" * 4


@pytest.fixture
def ask(golem_main: Any) -> Callable[..., Result]:
    """``ask(*args)``: ``golem ask`` through golem's entry point in this process."""
    return lambda *args: golem_main("ask", *args)


def conversation(home: Path, kind: str, turns: int) -> None:
    """A conversation of ``turns`` turns (two messages each), as ``golem ask`` stores them
    (written as files: those asks are not what is tested)."""
    write_conversation(home, [f"turn {n}{PADDING}" for n in range(turns)], model=MODELS[kind])


def unmarked(value: object) -> object:
    """A request's messages without Anthropic's cache breakpoints (they move with the window)."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def history(home: Path) -> list:
    store = Store(home)
    (row,) = store.list()
    return store.load(row.id)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_ask_sends_a_too_long_turn_again_with_half_the_window(ask: Callable[..., Result], server: ProviderServer, home: Path, kind: str) -> None:
    conversation(home, kind, 3)
    done = ask("-c", "-m", MODELS[kind], f"turn 3{PADDING}")
    assert done.code == 0, done.err
    server.context_window = prompt_tokens(kind, server.requests[-1].json)  # the next request passes it
    done = ask("-c", "-m", MODELS[kind], "--max-messages", "8", f"the last turn{PADDING}")
    assert done.code == 0, done.err
    assert done.out.startswith("echo: the last turn")
    first, again = (r.json["messages"] for r in server.requests[-2:])
    assert len(first) == 9 and len(again) == 5  # 8 messages of history and the prompt; then 4 and the prompt
    assert unmarked(again) == unmarked(first[4:])
    assert prompt_tokens(kind, server.requests[-1].json) <= server.context_window
    (line,) = [line for line in done.err.splitlines() if "too long" in line]
    assert line == (
        f"golem: {MODELS[kind]} said the request was too long: sent it again with the newest 4 "
        "of the 8 history messages it carried (all are kept)"
    )
    stored = history(home)
    assert [m.content for m in stored[-2:]] == [f"the last turn{PADDING}", f"echo: the last turn{PADDING}"]
    assert len(stored) == 10  # nothing trimmed from the file


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_turn_still_too_long_is_sent_once_more_only_and_its_prompt_is_kept(
    ask: Callable[..., Result], server: ProviderServer, home: Path, kind: str
) -> None:
    conversation(home, kind, 3)
    server.context_window = 10  # nothing fits
    asked = len(server.requests)
    done = ask("-c", "-m", MODELS[kind], "a prompt that never fits")
    assert done.code == 1
    assert len(server.requests) == asked + 2  # the turn, then once with half the window
    lines = done.err.splitlines()
    assert sum("said the request was too long" in line for line in lines) == 1
    assert any(line.startswith("golem: HTTP 400") and "too long for this model" in line for line in lines), lines
    assert "Traceback" not in done.err
    assert history(home)[-1].content == "a prompt that never fits"


def test_a_first_prompt_too_long_is_not_sent_again(ask: Callable[..., Result], server: ProviderServer, home: Path) -> None:
    """Nothing but the prompt was sent: there is no window to halve (the server's preset for
    people: a model named ``fault:too-long`` refuses every prompt)."""
    done = ask("-m", "local:fault:too-long", "a first prompt that does not fit")
    assert done.code == 1 and len(server.requests) == 1
    assert "said the request was too long" not in done.err
    assert "too long for this model" in done.err
    assert history(home)[-1].content == "a first prompt that does not fit"


def test_the_half_window_starts_where_a_request_can(ask: Callable[..., Result], server: ProviderServer, home: Path) -> None:
    """Half of a window whose newest messages are tool rounds starts at the next message that
    can open a request, never at a tool result whose call was cut away."""
    from tests.providerserver import Reply, Scenario, ToolCallSpec

    root = home / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())
    call = ToolCallSpec("call_1", "read_file", '{"path": "notes.txt"}')
    conversation(home, "openai", 1)
    server.enqueue(Scenario(reply=Reply(text="reading", tool_calls=[call])), Scenario(reply=Reply(text="read")))
    done = ask("-c", "-T", "fs", f"read it{PADDING}")
    assert done.code == 0, done.err
    server.context_window = prompt_tokens("openai", server.requests[-1].json)
    done = ask("-c", "-T", "fs", f"and now{PADDING}")
    assert done.code == 0, done.err
    first, again = (r.json["messages"] for r in server.requests[-2:])
    # history: turn 0, its echo, "read it", the call, its result, "read"; the newest 3 start at the call
    assert [m["role"] for m in first[:-1]] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert [m["role"] for m in again] == ["assistant", "user"] and again[0]["content"] == "read"
    assert "sent it again with the newest 1 of the 6 history messages" in done.err
    assert not opens_request(history(home)[3]) and len(history(home)) == 8


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_the_repl_sends_a_too_long_turn_again_and_says_so(
    spawn, server: ProviderServer, home: Path, kind: str
) -> None:
    chat = spawn("chat", "-m", MODELS[kind])
    chat.prompt()
    for n in range(3):
        assert f"echo: turn {n}" in chat.say(f"turn {n}{PADDING}")
    server.context_window = prompt_tokens(kind, server.requests[-1].json)
    out = chat.say(f"one more{PADDING}")
    assert "echo: one more" in out
    assert "said the request was too long: sent it again with the newest 3 of the 6 history messages" in out
    assert len(server.requests) == 5
    chat.leave()
    assert [m.content for m in history(home)][-2:] == [f"one more{PADDING}", f"echo: one more{PADDING}"]
