"""The model that needs no network, so that a fresh install works end to end.

``EchoModel`` is what ``golem chat`` talks to when no provider is configured: it streams a
short, deterministic reply that quotes the prompt and says what it is (telling the user how to
configure a real model is the CLI's job).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence

from golem_cli.core.compaction import COMPACT_MARK, SUMMARY_MARK
from golem_cli.core.messages import ASSISTANT, SYSTEM, TOOL, USER, Message
from golem_cli.core.model import ModelRequest, ModelResponse, StreamDone, StreamEvent, TextDelta
from golem_cli.core.tokens import EstimatingCounter, estimate_text
from golem_cli.core.usage import Usage

__all__ = ["EchoModel", "offline_summary"]


class EchoModel:
    """The offline fallback: replies with the prompt and what the request looked like,
    deterministically, two words a delta. Usage is the offline token estimate."""

    name = "offline:echo"

    def __init__(self) -> None:
        self._counter = EstimatingCounter()

    def _reply_text(self, request: ModelRequest) -> str:
        prompt = next((m for m in reversed(request.messages) if m.role == USER), None)
        said = prompt.content if prompt is not None else ""
        if said.startswith(COMPACT_MARK):
            return offline_summary(request.messages)
        quoted = f"You said: {said}" if said.strip() else "You said nothing."
        if prompt is not None and prompt.parts:
            kinds = ", ".join(p.kind for p in prompt.parts)
            quoted += f" (with {len(prompt.parts)} attachment{'s' if len(prompt.parts) != 1 else ''}: {kinds})"
        count = len(request.messages)
        return (
            f"{quoted}\n\nThis is golem's offline echo model, not a language model; "
            f"it saw {count} message{'s' if count != 1 else ''} in this request."
        )

    def _response(self, request: ModelRequest, text: str) -> ModelResponse:
        usage = Usage(input_tokens=self._counter.count(request.messages), output_tokens=estimate_text(text))
        return ModelResponse(
            message=Message(role=ASSISTANT, content=text), usage=usage, finish_reason="stop", model_name=self.name
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self._response(request, self._reply_text(request))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text = self._reply_text(request)
        words = re.findall(r"\s*\S+\s*", text) or [text]
        for i in range(0, len(words), 2):
            await asyncio.sleep(0)  # a cancellation point between deltas, as a real stream has
            yield TextDelta(text="".join(words[i : i + 2]))
        yield StreamDone(response=self._response(request, text))


def offline_summary(messages: Sequence[Message]) -> str:
    """The offline model's answer to a compaction request: deterministic notes of what the
    messages before it hold (the summary they continue, each prompt's first line, the tools
    called), so compaction runs end to end with no key."""
    notes: list[str] = []
    prompts = 0
    tools: dict[str, int] = {}
    for m in messages[:-1]:
        if m.role == USER and m.content.startswith(SUMMARY_MARK):
            earlier = m.content.split("\n\n", 1)[1] if "\n\n" in m.content else ""
            notes += [line for line in earlier.splitlines() if line.startswith("- ")]
        elif m.role == USER:
            prompts += 1
            first = m.content.strip().split("\n", 1)[0][:100]
            notes.append(f"- the user said: {first}")
        elif m.role == TOOL:
            tools[m.tool_name or "tool"] = tools.get(m.tool_name or "tool", 0) + 1
    counted = sum(m.role != SYSTEM for m in messages[:-1])
    used = ", ".join(f"{name} x{n}" for name, n in sorted(tools.items()))
    head = f"Offline summary of {counted} messages ({prompts} prompts)" + (f"; tools used: {used}" if used else "")
    return "\n".join([head + ".", *notes])
