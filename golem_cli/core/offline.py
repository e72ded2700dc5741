"""The model that needs no network, so that a fresh install works end to end.

``EchoModel`` is what ``golem chat`` talks to when no provider is configured: it streams a
short, deterministic reply that quotes the prompt and says what it is (telling the user how to
configure a real model is the CLI's job).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

from golem_cli.core.messages import ASSISTANT, USER, Message
from golem_cli.core.model import ModelRequest, ModelResponse, StreamDone, StreamEvent, TextDelta
from golem_cli.core.tokens import EstimatingCounter, estimate_text
from golem_cli.core.usage import Usage

__all__ = ["EchoModel"]


class EchoModel:
    """The offline fallback: replies with the prompt and what the request looked like,
    deterministically, two words a delta. Usage is the offline token estimate."""

    name = "offline:echo"

    def __init__(self) -> None:
        self._counter = EstimatingCounter()

    def _reply_text(self, request: ModelRequest) -> str:
        prompt = next((m for m in reversed(request.messages) if m.role == USER), None)
        said = prompt.content if prompt is not None else ""
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
