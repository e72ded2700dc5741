"""A conversation made on one provider and continued on the other, through ``golem ask`` (golem's
entry point in this process, ``golem_main``) and the loopback server: every body sent validates against the server's rules and the SDK request
types (the ``server`` fixture fails the test otherwise), whatever the other provider left in the
history: unsigned reasoning, signed thinking, tool calls with an empty result and a failed one, a
refusal, a cut-off reply. Every turn is stored, on both sides of the move."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec

pytestmark = pytest.mark.slow

MODELS = {"openai": "local:echo", "anthropic": "claude:claude-test"}
CALL_IDS = {"openai": "call_", "anthropic": "toolu_"}


Ask = Callable[..., dict]


@pytest.fixture
def ask(golem_main: Any) -> Ask:
    """``ask(*args)``: ``golem ask --json *args``, which must succeed, and its JSON."""

    def run(*args: str) -> dict:
        done = golem_main("ask", "--json", *args)
        assert done.code == 0, done.err
        return json.loads(done.out)

    return run


def made_on(server: ProviderServer, ask: Ask, kind: str, first: bool, block: int) -> None:
    """Four turns on ``kind``: reasoning and a tool call whose result is empty, a refusal, a
    reply cut off at the token limit, a call of a tool that is not enabled (a failed result).
    ``block`` numbers the call IDs (each block's calls are its own)."""
    model, call = MODELS[kind], f"{CALL_IDS[kind]}{block}"
    signature = "EqQBsig" + kind if kind == "anthropic" else ""  # OpenAI-compatible reasoning is unsigned
    server.enqueue(
        Scenario(reply=Reply(thinking=f"Reasoning on {kind}.", signature=signature,
                             tool_calls=[ToolCallSpec(call + "1", "read_file", '{"path": "empty.txt"}')])),
        Scenario(reply=Reply(text=f"The file is empty ({kind}).")),
        Scenario(reply=Reply(refusal="I won't." if kind == "openai" else "-")),
        Scenario(reply=Reply(text="Half an ans", finish="length" if kind == "openai" else "max_tokens")),
        Scenario(reply=Reply(tool_calls=[ToolCallSpec(call + "2", "shell", '{"command": "ls"}')])),
    )  # fmt: skip
    assert "empty" in ask(*([] if first else ["-c"]), "-m", model, "-T", "fs", "read empty.txt")["reply"]
    assert ask("-c", "-m", model, "something bad")["refusal"] is True
    assert ask("-c", "-m", model, "tell me all")["finishReason"] in ("length", "max_tokens")
    assert "[failed]" in ask("-c", "-m", model, "list the files")["reply"]


def carried_to_anthropic(carried: dict, foreign: set[str]) -> None:
    blocks = [b for m in carried["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])]
    assert all(b.get("signature") for b in blocks if b["type"] == "thinking")  # unsigned reasoning is not sent
    assert {b["id"] for b in blocks if b["type"] == "tool_use"} >= foreign
    assert all(m["content"] not in (None, "", []) for m in carried["messages"])


def carried_to_openai(carried: dict, results: list[str]) -> None:
    assert not any("thinking" in json.dumps(m) and m["role"] == "assistant" and "EqQB" in json.dumps(m) for m in carried["messages"])
    assert [m["tool_call_id"] for m in carried["messages"] if m["role"] == "tool"] == results


def test_a_conversation_made_on_each_provider_is_continued_on_the_other(
    server: ProviderServer, home: Path, ask: Ask, golem_main: Any
) -> None:
    """One conversation moved twice (OpenAI, then Anthropic, then OpenAI again, and a last turn on
    Anthropic): each provider continues a history the other made, with the other's four kinds
    of turn in it, and makes its own four kinds of turn on top of a foreign history."""
    root = home / "project"
    root.mkdir()
    (root / "empty.txt").write_text("")
    config = home / "config.toml"
    # a window that holds the whole conversation (37 messages): each request carries all of it
    config.write_text(f'tool_root = "{root}"\nmax_messages = 100\n' + config.read_text())

    moves = []
    for block, kind in enumerate(["openai", "anthropic", "openai"], 1):
        moves.append(len(server.requests))
        made_on(server, ask, kind, first=block == 1, block=block)
    last = ask("-c", "-m", MODELS["anthropic"], "and back again")
    assert last["reply"] == "echo: and back again"

    # Every request got a real answer (a refused body would have failed its `ask`), and the
    # first request on the other provider carried the whole foreign history.
    assert len(server.requests) == 3 * 6 + 1
    carried_to_anthropic(server.requests[moves[1]].json, {"call_11", "call_12"})
    carried_to_openai(server.requests[moves[2]].json, ["call_11", "call_12", "toolu_21", "toolu_22"])
    carried_to_anthropic(server.requests[-1].json, {"call_11", "call_12", "toolu_21", "toolu_22", "call_31", "call_32"})

    history = golem_main("show", "--json", last["conversationId"])
    assert history.code == 0, history.err
    messages = json.loads(history.out)["messages"]
    prompts = [m["content"] for m in messages if m["role"] == "user"]
    assert prompts == ["read empty.txt", "something bad", "tell me all", "list the files"] * 3 + ["and back again"]
    assert [m.get("content", "") for m in messages if m["role"] == "tool"][::2] == ["", "", ""]  # the empty results, kept
    thinking = [t for m in messages for t in m.get("thinking") or []]
    assert len(thinking) == 3 and sum(bool(t.get("signature")) for t in thinking) == 1
