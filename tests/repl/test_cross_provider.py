"""A conversation made on one provider and continued on the other, through the real ``golem ask``
and the loopback server: every body sent validates against the server's rules and the SDK request
types (the ``server`` fixture fails the test otherwise), whatever the other provider left in the
history: unsigned reasoning, signed thinking, tool calls with an empty result and a failed one, a
refusal, a cut-off reply. Every turn is stored, on both sides of the move."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec
from tests.repl.conftest import GOLEM, golem_env

pytestmark = pytest.mark.slow

MODELS = {"openai": "local:echo", "anthropic": "claude:claude-test"}
CALL_IDS = {"openai": "call_", "anthropic": "toolu_"}


def ask(home: Path, *args: str) -> dict:
    done = subprocess.run([GOLEM, "ask", "--json", *args], capture_output=True, text=True, env=golem_env(home), timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def made_on(server: ProviderServer, home: Path, kind: str, first: bool) -> None:
    """Four turns on ``kind``: reasoning and a tool call whose result is empty, a refusal, a
    reply cut off at the token limit, a call of a tool that is not enabled (a failed result)."""
    model, call = MODELS[kind], CALL_IDS[kind]
    signature = "EqQBsig" + kind if kind == "anthropic" else ""  # OpenAI-compatible reasoning is unsigned
    server.enqueue(
        Scenario(reply=Reply(thinking=f"Reasoning on {kind}.", signature=signature,
                             tool_calls=[ToolCallSpec(call + "1", "read_file", '{"path": "empty.txt"}')])),
        Scenario(reply=Reply(text=f"The file is empty ({kind}).")),
        Scenario(reply=Reply(refusal="I won't." if kind == "openai" else "-")),
        Scenario(reply=Reply(text="Half an ans", finish="length" if kind == "openai" else "max_tokens")),
        Scenario(reply=Reply(tool_calls=[ToolCallSpec(call + "2", "shell", '{"command": "ls"}')])),
    )  # fmt: skip
    assert "empty" in ask(home, *([] if first else ["-c"]), "-m", model, "-T", "fs", "read empty.txt")["reply"]
    assert ask(home, "-c", "-m", model, "something bad")["refusal"] is True
    assert ask(home, "-c", "-m", model, "tell me all")["finishReason"] in ("length", "max_tokens")
    assert "[failed]" in ask(home, "-c", "-m", model, "list the files")["reply"]


@pytest.mark.parametrize("first", ["openai", "anthropic"])
def test_a_conversation_made_on_each_provider_is_continued_on_the_other(server: ProviderServer, home: Path, first: str) -> None:
    other = "anthropic" if first == "openai" else "openai"
    root = home / "project"
    root.mkdir()
    (root / "empty.txt").write_text("")
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())

    made_on(server, home, first, first=True)
    moved = len(server.requests)
    made_on(server, home, other, first=False)
    last = ask(home, "-c", "-m", MODELS[first], "and back again")
    assert last["reply"] == "echo: and back again"

    # Every request got a real answer (a refused body would have failed its `ask`), and the
    # first request on the other provider carried the whole foreign history.
    assert len(server.requests) == 2 * 6 + 1
    carried = server.requests[moved].json
    if other == "anthropic":
        blocks = [b for m in carried["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])]
        assert all(b.get("signature") for b in blocks if b["type"] == "thinking")  # unsigned reasoning is not sent
        assert {b["id"] for b in blocks if b["type"] == "tool_use"} >= {"call_1", "call_2"}
        assert all(m["content"] not in (None, "", []) for m in carried["messages"])
    else:
        assert not any("thinking" in json.dumps(m) and m["role"] == "assistant" and "EqQB" in json.dumps(m) for m in carried["messages"])
        assert [m["tool_call_id"] for m in carried["messages"] if m["role"] == "tool"] == ["toolu_1", "toolu_2"]

    history = subprocess.run([GOLEM, "show", "--json", last["conversationId"]], capture_output=True, text=True,
                             env=golem_env(home), timeout=30)  # fmt: skip
    assert history.returncode == 0, history.stderr
    messages = json.loads(history.stdout)["messages"]
    prompts = [m["content"] for m in messages if m["role"] == "user"]
    assert prompts == ["read empty.txt", "something bad", "tell me all", "list the files"] * 2 + ["and back again"]
    assert [m.get("content", "") for m in messages if m["role"] == "tool"][::2] == ["", ""]  # the empty results, kept
    thinking = [t for m in messages for t in m.get("thinking") or []]
    assert len(thinking) == 2 and sum(bool(t.get("signature")) for t in thinking) == 1
