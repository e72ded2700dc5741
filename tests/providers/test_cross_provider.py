"""A conversation made on one provider, continued on the other and back, through the real
adapters and the loopback server: every body it sends must pass the server's rules and the SDK
request types, whatever the other provider left in the history (unsigned reasoning, signed
thinking, tool calls and results, a refusal, a cut-off reply, a call without an ID)."""

from __future__ import annotations

import asyncio

import pytest
from golem_cli.core.agent import Agent
from golem_cli.core.messages import Message, ToolCall
from golem_cli.core.tools import tool

from tests.providers.helpers import make_model
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec


@tool
def roll(sides: int) -> str:
    """Roll a die.

    Args:
        sides: how many sides it has
    """
    return "4"


def turn(server: ProviderServer, kind: str, history: list[Message], prompt: str, *replies: Reply) -> list[Message]:
    server.enqueue(*[Scenario(reply=r) for r in replies])

    async def go() -> list[Message]:
        model = make_model(kind, server)
        try:
            result = await Agent(model, instructions="be brief", tools=[roll]).run_stream_with_history(history, prompt)
        finally:
            await model.aclose()
        return result.messages

    return asyncio.run(go())


@pytest.mark.parametrize("first", ["openai", "anthropic"])
def test_a_conversation_moves_between_providers_and_back(server: ProviderServer, first: str) -> None:
    other = "anthropic" if first == "openai" else "openai"
    call = ToolCallSpec("call_1" if first == "openai" else "toolu_01", "roll", '{"sides": 6}')
    signature = "" if first == "openai" else "EqQBsig"  # OpenAI-compatible reasoning is unsigned
    history = turn(server, first, [], "roll a die",
                   Reply(thinking="They want a roll.", signature=signature, tool_calls=[call]), Reply(text="You rolled 4."))
    history = turn(server, other, history, "and again?",
                   Reply(text="Half an answer", finish="max_tokens" if other == "anthropic" else "length"))
    history = turn(server, first, history, "go on", Reply(refusal="I won't." if first == "openai" else "-"))
    history.append(Message(role="assistant", tool_calls=[ToolCall(id="", name="roll", args='{"sides":')]))
    history = turn(server, other, history, "last one", Reply(text="Done."))
    assert history[-1].content == "Done."
    # What other programs (or older golems) store: an empty user text, an empty assistant turn
    # (a refusal, once), an empty tool result. Neither API takes them as Go spells them (ADR 0007).
    history += [Message(role="user", content=""), Message(role="assistant", content=""),
                Message(role="assistant", tool_calls=[ToolCall(id="call_e", name="roll", args="{}")]),
                Message(role="tool", content="", tool_call_id="call_e", tool_name="roll")]  # fmt: skip
    for kind in (first, other):
        history = turn(server, kind, history, f"on {kind} again", Reply(text="Still here."))
    assert [r.path.rsplit("/", 1)[-1] for r in server.requests].count("messages") >= 3
    assert server.sdk_rejections == [] and len(server.requests) == 7
    for request in server.requests:
        if request.path.endswith("/messages"):
            for message in request.json["messages"]:
                assert message["content"] not in (None, "", [])
                for block in message["content"] if isinstance(message["content"], list) else []:
                    assert block.get("text", "x") != "" and (block["type"] != "thinking" or block.get("signature"))
                    assert block["type"] != "tool_use" or block.get("id")
