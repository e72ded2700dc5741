"""Where a Messages request marks its prefix for the prompt cache (ADR 0024).

Explicit breakpoints, at most four, in the order the API reads a request (tools, system,
messages): the last tool definition, the system prompt, the newest turn, and the turn before
it, which is where the previous request of the conversation put its newest breakpoint. That
one is read back however many blocks the new turn added (a breakpoint looks back only 20
blocks for an earlier entry), and the tools and system prompt stay cached when the window
moves. The rest of the request is untouched, so two consecutive requests differ, before the
new turn, only where the breakpoints sit.
"""

from __future__ import annotations

from typing import Any

from golem_cli.providers.caching import Ttl

#: Blocks the API lets carry ``cache_control``; thinking blocks cannot.
_MARKABLE = frozenset({"text", "image", "document", "tool_use", "tool_result"})


def marker(ttl: Ttl) -> dict[str, str]:
    """The ``cache_control`` value: the API's default lifetime is five minutes, so only the
    hour is spelled out."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def mark(body: dict[str, Any], ttl: Ttl) -> None:
    """Put the breakpoints in a request body built by ``wire.request_body`` (in place)."""
    control = marker(ttl)
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": control}
    system = body.get("system")
    if system:
        body["system"] = [{"type": "text", "text": system, "cache_control": control}]
    turns: list[dict[str, Any]] = body["messages"]
    for index in _marked_turns(turns):
        _mark_last_block(turns[index], control)


def _marked_turns(turns: list[dict[str, Any]]) -> list[int]:
    """The newest turn, and the newest user turn before the last assistant turn (the newest
    turn of the request before this one)."""
    if not turns:
        return []
    chosen = [len(turns) - 1]
    assistant = next((i for i in range(len(turns) - 1, -1, -1) if turns[i]["role"] == "assistant"), None)
    if assistant is not None and assistant > 0 and assistant != len(turns) - 1:
        chosen.insert(0, assistant - 1)
    return chosen


def _mark_last_block(turn: dict[str, Any], control: dict[str, str]) -> None:
    blocks: list[dict[str, Any]] = turn["content"]
    for index in range(len(blocks) - 1, -1, -1):
        if blocks[index].get("type") in _MARKABLE:
            blocks[index] = {**blocks[index], "cache_control": control}
            return
