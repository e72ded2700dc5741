"""Small helpers shared by the provider tests."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from golem_cli.config.schema import ConfigFile, ModelTable, ProviderTable
from golem_cli.config.tables import convert
from golem_cli.core.agent import Agent, RunResult
from golem_cli.core.errors import ModelError, RunError
from golem_cli.core.messages import ASSISTANT, Message
from golem_cli.core.model import Model, ModelRequest, ResponseAccumulator, StreamDone, StreamEvent
from golem_cli.core.retry import RetryPolicy
from golem_cli.providers._http_settings import HttpSettings
from golem_cli.providers.anthropic.model import AnthropicModel
from golem_cli.providers.openai.model import OpenAIModel
from msgspec.structs import replace

from tests.providerserver import ProviderServer

T = TypeVar("T")

#: Retries keep their policy but wait microseconds, so fault tests stay fast.
FAST = HttpSettings(
    timeout=10.0, connect_timeout=2.0, retry=RetryPolicy(max_attempts=4, backoff_base=0.001, backoff_max=0.005)
)


def fast(max_retries: int) -> HttpSettings:
    """``FAST`` with another ``max_retries``."""
    return replace(FAST, retry=replace(FAST.retry, max_attempts=max_retries + 1))


def provider_tables(tables: dict[str, dict[str, Any]] | None) -> dict[str, ProviderTable] | None:
    """``[providers.NAME]`` tables as golem reads them from config.toml (the config layer's own
    conversion: declared keys typed, the rest kept as model options)."""
    return None if tables is None else convert(ConfigFile, {"providers": tables}).providers


def model_tables(tables: dict[str, dict[str, Any]]) -> dict[str, ModelTable]:
    """``[models."provider:model"]`` tables as golem reads them."""
    return convert(ConfigFile, {"models": tables}).models


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def openai_model(server: ProviderServer, settings: HttpSettings = FAST, model: str = "gpt-test", key: str = "sk-test") -> OpenAIModel:
    return OpenAIModel(model, api_key=key, base_url=server.openai_base_url, settings=settings)


def anthropic_model(server: ProviderServer, settings: HttpSettings = FAST, model: str = "claude-test", key: str = "sk-test") -> AnthropicModel:
    return AnthropicModel(model, api_key=key, base_url=server.url, settings=settings)


def make_model(kind: str, server: ProviderServer, **kwargs: Any) -> OpenAIModel | AnthropicModel:
    return openai_model(server, **kwargs) if kind == "openai" else anthropic_model(server, **kwargs)


def prompt(text: str = "hello there", history: Sequence[Message] = ()) -> ModelRequest:
    return ModelRequest(messages=[*history, Message(role="user", content=text)])


@dataclass
class Streamed:
    """Everything one streaming call produced, folded the way the runtime folds it."""

    events: list[StreamEvent] = field(default_factory=list)
    error: ModelError | None = None
    accumulator: ResponseAccumulator = field(default_factory=ResponseAccumulator)

    def received(self) -> Message:
        """The assistant message the events delivered, as they came (a failed stream's too)."""
        acc = self.accumulator
        if acc.done is not None:
            return acc.done.message
        return Message(role=ASSISTANT, content=acc.text, tool_calls=acc.tool_calls(), thinking=acc.thinking())

    @property
    def done(self) -> StreamDone:
        assert self.error is None, f"stream failed: {self.error}"
        assert isinstance(self.events[-1], StreamDone)
        assert sum(isinstance(e, StreamDone) for e in self.events) == 1
        return self.events[-1]


async def stream_all(model: Model, request: ModelRequest) -> Streamed:
    out = Streamed()
    try:
        async for event in model.stream(request):
            out.events.append(event)
            out.accumulator.add(event)
    except ModelError as exc:
        out.error = exc
    finally:
        await model.aclose()  # type: ignore[attr-defined]
    return out


async def request_once(model: Model, request: ModelRequest) -> Any:
    try:
        return await model.request(request)
    except ModelError as exc:
        return exc
    finally:
        await model.aclose()  # type: ignore[attr-defined]


def stream(model: Model, request: ModelRequest | None = None) -> Streamed:
    return run(stream_all(model, request or prompt()))


def complete(model: Model, request: ModelRequest | None = None) -> Any:
    """The ``ModelResponse``, or the ``ModelError`` raised."""
    return run(request_once(model, request or prompt()))


def through_agent(model: Model, *, streaming: bool = True, text: str = "hello there") -> RunResult | RunError:
    """One run of the real run loop over ``model``, the only place a model call is retried
    (``core.retry``, with the policy the adapter declares): the result, or the RunError."""

    async def go() -> RunResult | RunError:
        agent = Agent(model)
        try:
            return await (agent.run_stream_with_history([], text) if streaming else agent.run_with_history([], text))
        except RunError as exc:
            return exc
        finally:
            await model.aclose()  # type: ignore[attr-defined]

    return run(go())
