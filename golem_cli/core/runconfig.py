"""What a run is given: the agent's frozen configuration, and the caller's hooks for one run.

``RunConfig`` is everything an ``Agent`` is (model, instructions, tools, limits, policies),
validated once and immutable, so the run loop reads explicit values instead of reaching into
the agent (the Go runner, likewise, takes its configuration, not the agent). A caller that
needs a variation for one run (other tools, other model settings, another history processor)
builds one with ``msgspec.structs.replace(agent.config, ...)`` and ``Agent.from_config``; the
original is untouched.

``RunHooks`` are per run and never part of the configuration: they are how the caller hears
what happens (text deltas, stream and tool events) while the run is going.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct

from golem_cli.core.history.processors import HistoryProcessor, TokenCounter
from golem_cli.core.messages import Message, ToolCall
from golem_cli.core.model import Model, ModelSettings, ToolDefinition
from golem_cli.core.retry import RetryPolicy
from golem_cli.core.tools import APPROVED, Approval, ApprovalRequest, Tool
from golem_cli.core.usage import UsageLimits

__all__ = ["ApprovalHook", "RunConfig", "RunHooks"]

#: Model turns per run (Go ``DefaultMaxIterations``).
DEFAULT_MAX_TURNS = 10
#: Tool-argument corrections fed back per tool per run. Go defaults to 0; a chat with real
#: models meets malformed arguments often enough that one correction is the better default.
DEFAULT_TOOL_RETRIES = 1

#: A sync or async callable the run calls with one value (a delta's text, an event).
Callback = Callable[[Any], Any]
#: Asked before each tool call runs: sync or async, returns an ``Approval``.
ApprovalHook = Callable[[ApprovalRequest], Approval | Awaitable[Approval]]


class RunConfig(Struct, frozen=True, kw_only=True):
    """An agent's configuration; construction validates it with Go's texts.

    ``instructions_func`` (sync or async, no arguments) is evaluated once per run and joined
    to ``instructions``. ``history_processor`` (e.g. ``trim_history(20)``) sees exactly the
    supplied history. ``retry`` is the policy for failed model calls (``core.retry``); None
    uses the one the model declares, else a single attempt. ``output_validator``
    (sync or async) turns the final text into the run's ``output``; its ``ModelRetry`` asks
    the model to correct it, up to ``output_retries`` times. ``undeclared_tools`` is what a
    call to a tool the run does not have does: ``"fail"`` the run at the ``tool`` stage (Go's
    rule), or ``"answer"`` it with a ``failed`` result the model reads (a chat whose model
    remembers a tool that is not enabled now). ``tool_errors`` is what any other error of
    one call does (an exception, arguments rejected past the retry budget, an invalid part):
    ``"fail"`` the run at the ``tool`` stage, dropping the batch's results (Go's rule), or
    ``"answer"`` the call with a ``failed`` result and keep the others (a chat).
    """

    model: Model
    instructions: str = ""
    instructions_func: Callable[[], str | Awaitable[str]] | None = None
    tools: tuple[Tool, ...] = ()
    history_processor: HistoryProcessor | None = None
    settings: ModelSettings = ModelSettings()
    max_turns: int = DEFAULT_MAX_TURNS
    usage_limits: UsageLimits | None = None
    token_counter: TokenCounter | None = None
    tool_retries: int = DEFAULT_TOOL_RETRIES
    parallel_tool_calls: bool = True
    retry: RetryPolicy | None = None
    output_validator: Callable[[str], Any] | None = None
    output_retries: int = 0
    undeclared_tools: Literal["fail", "answer"] = "fail"
    tool_errors: Literal["fail", "answer"] = "fail"
    #: Every request's ``ModelRequest.cache_key`` (the conversation a prompt cache is shared by).
    cache_key: str = ""

    def __post_init__(self) -> None:
        if self.model is None:
            raise ValueError("golem: model is required")
        if self.max_turns < 1:
            raise ValueError(f"golem: max iterations must be at least 1, got {self.max_turns}")
        if self.tool_retries < 0:
            raise ValueError(f"golem: tool retries must not be negative, got {self.tool_retries}")
        if self.output_retries < 0:
            raise ValueError(f"golem: output retries must not be negative, got {self.output_retries}")
        if self.usage_limits is not None:
            if not self.usage_limits.is_valid():
                raise ValueError(f"golem: usage limit must not be negative, got {self.usage_limits}")
            if self.usage_limits.per_request_input_tokens and self.token_counter is None:
                raise ValueError("golem: usage limit per_request_input_tokens requires a token_counter")
        if self.undeclared_tools not in ("fail", "answer"):
            raise ValueError(f'golem: undeclared_tools must be "fail" or "answer", got {self.undeclared_tools!r}')
        if self.tool_errors not in ("fail", "answer"):
            raise ValueError(f'golem: tool_errors must be "fail" or "answer", got {self.tool_errors!r}')
        seen: set[str] = set()
        for t in self.tools:
            if t.name in seen:
                raise ValueError(f"golem: tool {t.name!r}: duplicate name")
            seen.add(t.name)

    def tool_definitions(self) -> list[ToolDefinition]:
        """The tools as every request of a run shows them to the model, in declaration order."""
        return [t.definition() for t in self.tools]

    def tool(self, name: str) -> Tool | None:
        """The declared tool called ``name``, if any."""
        return next((t for t in self.tools if t.name == name), None)


class RunHooks(Struct, frozen=True, kw_only=True):
    """How the caller hears one run: ``on_delta(text)`` gets every text delta as it arrives,
    across tool turns; ``on_event(event)`` gets every stream event (text, thinking and
    tool-call deltas) and ``ToolCallStarted`` / ``ToolCallFinished``. Sync or async; an
    exception from either ends the run (at the ``model`` stage, Go's stage for unclassified
    errors).

    Two hooks let the caller take part: ``approve(request)`` is asked before each tool call
    runs (after its arguments decoded; calls of one batch are asked one at a time, in call
    order, before their group starts) and returns an ``Approval``; without it every call
    runs. ``on_record(messages)`` gets the run's new messages so far (the prompt on) whenever
    a tool round is recorded: once the turn that calls tools is appended (before any tool
    runs) and once its results are, so a caller can save them and a process killed mid-tool
    leaves the calls on disk for repair to close.
    """

    on_delta: Callback | None = None
    on_event: Callback | None = None
    approve: ApprovalHook | None = None
    on_record: Callable[[list[Message]], Any] | None = None
    #: ``before_change(call, path, before, after)``: a tool of that call is about to change a
    #: file (``ToolContext.before_change``); called from the tool's thread.
    before_change: Callable[[ToolCall, Path, bytes | None, bytes], None] | None = None

    async def delta(self, text: str) -> None:
        await _call(self.on_delta, text)

    async def event(self, event: object) -> None:
        await _call(self.on_event, event)

    def event_now(self, event: object) -> None:
        """``on_event`` from code that cannot wait (a tool reporting output): an async hook's
        answer is left to run on the loop."""
        if self.on_event is not None:
            answer = self.on_event(event)
            if inspect.isawaitable(answer):
                asyncio.ensure_future(answer)

    async def approval(self, request: ApprovalRequest) -> Approval:
        if self.approve is None:
            return APPROVED
        answer = self.approve(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, Approval):
            raise TypeError(f"golem: approval hook must return an Approval, got {answer!r}")
        return answer

    async def record(self, messages: list[Message]) -> None:
        await _call(self.on_record, messages)


async def _call(callback: Callback | None, value: Any) -> None:
    if callback is not None:
        result = callback(value)
        if inspect.isawaitable(result):
            await result
