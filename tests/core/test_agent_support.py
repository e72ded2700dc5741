"""Shared helpers for the agent tests (no tests here): running coroutines, checking requests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from golem_cli.core.history.repair import repair_history
from golem_cli.core.history.validate import validate_run_input
from golem_cli.core.messages import SYSTEM, USER, Message
from golem_cli.core.model import ModelRequest


def run(coro):
    return asyncio.run(coro)


def assert_valid_request(request: ModelRequest, instructions: str = "") -> None:
    """What every provider needs: instructions first (only), pairing intact, valid parts and
    thinking, and the stamped prompt last."""
    messages = list(request.messages)
    if instructions:
        assert messages[0] == Message(role=SYSTEM, content=instructions)
        messages = messages[1:]
    assert all(m.role != SYSTEM for m in messages), "history system messages must be replaced"
    assert repair_history(messages) == messages, "every call answered, no orphan results"
    validate_run_input((), messages)
    prompt = messages[-1] if messages[-1].role == USER else next(m for m in reversed(messages) if m.role == USER)
    assert prompt.run_id and prompt.conversation_id


def stamps(messages: Sequence[Message]) -> list[tuple[str, str]]:
    return [(m.run_id, m.conversation_id) for m in messages]
