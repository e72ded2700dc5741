"""The agent: one model, instructions, tools, and runs that never lose evidence (spec §5-§8).

A run goes through fixed steps, in Go golem's order:

1. the history processor rewrites the supplied history (its error: ``HistoryProcessorError``
   with ``golem: history processor: <err>``, before any model call);
2. validation of the prompt parts and the processed history (``HistoryValidationError``);
3. identity: the run ID is the one given or a new one; the conversation ID is the one given,
   else the last processed-history message carrying one, else a new one (§6.2);
4. request assembly (§8): the instructions as a system message (static and dynamic text
   joined by a blank line), the *repaired* history without its system messages, then the
   prompt, stamped with the run identity (§6.3), always present even if empty;
5. the loop (``_run.Loop``, given the agent's frozen ``RunConfig`` and the caller's
   ``RunHooks``, never the agent): model turn, tools in parallel with results in call order,
   and again, until a reply without tool calls.

Success returns a ``RunResult``; failure after step 3 raises ``RunError`` whose ``partial``
is resume-ready: ``agent.run_with_history(err.partial.messages, "next")`` continues cleanly.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from msgspec import Struct

from golem_cli.core._run import Loop
from golem_cli.core._state import RunState
from golem_cli.core.errors import (
    GolemError,
    HistoryProcessorError,
)
from golem_cli.core.history.processors import HistoryProcessor, TokenCounter
from golem_cli.core.history.repair import repair_history
from golem_cli.core.history.validate import validate_run_input
from golem_cli.core.ids import new_id
from golem_cli.core.messages import SYSTEM, USER, Message, Part
from golem_cli.core.model import Model, ModelResponse, ModelSettings
from golem_cli.core.retry import RetryPolicy
from golem_cli.core.runconfig import (
    DEFAULT_MAX_TURNS,
    DEFAULT_TOOL_RETRIES,
    RunConfig,
    RunHooks,
)
from golem_cli.core.tools import Tool
from golem_cli.core.usage import Usage, UsageLimits

__all__ = ["Agent", "RunResult"]


class RunResult(Struct, frozen=True, kw_only=True):
    """What a successful run produced.

    ``messages`` is the whole request conversation plus everything the run appended (it
    begins with the instructions message when there are instructions). ``new_messages`` is
    only what this run added, from the prompt on: the CLI appends these to its stored file,
    because the history sent may have been trimmed by the processor. ``sent_messages`` counts
    the history messages that went to the model (processed and repaired, system messages
    removed). ``output`` is the final reply's text, or what ``output_validator`` returned.
    """

    messages: list[Message]
    new_messages: list[Message]
    output: Any
    usage: Usage
    run_id: str
    conversation_id: str
    requests: int
    tool_calls: int
    finish_reason: str
    sent_messages: int
    response: ModelResponse


def resolve_instructions(static: str, dynamic: str) -> str:
    """Spec §8: static and dynamic instructions joined by a blank line; exact emptiness."""
    if dynamic == "":
        return static
    if static == "":
        return dynamic
    return static + "\n\n" + dynamic


class Agent:
    """A model with instructions, tools and policies (its ``RunConfig``); runs are independent.

    The keyword arguments are ``RunConfig``'s fields, documented there. The two run methods
    are Go's ``RunWithHistory`` and ``RunStreamWithHistory`` (Go's ``Run`` and ``RunStream``
    are these on an empty history); a caller that needs other tools or settings for one run
    uses ``Agent.from_config(msgspec.structs.replace(agent.config, ...))``.
    """

    config: RunConfig

    def __init__(
        self,
        model: Model,
        *,
        instructions: str = "",
        instructions_func: Callable[[], str | Awaitable[str]] | None = None,
        tools: Sequence[Tool] = (),
        history_processor: HistoryProcessor | None = None,
        settings: ModelSettings = ModelSettings(),
        max_turns: int = DEFAULT_MAX_TURNS,
        usage_limits: UsageLimits | None = None,
        token_counter: TokenCounter | None = None,
        tool_retries: int = DEFAULT_TOOL_RETRIES,
        parallel_tool_calls: bool = True,
        retry: RetryPolicy | None = None,
        output_validator: Callable[[str], Any] | None = None,
        output_retries: int = 0,
        undeclared_tools: Literal["fail", "answer"] = "fail",
        tool_errors: Literal["fail", "answer"] = "fail",
        cache_key: str = "",
    ) -> None:
        self.config = RunConfig(
            model=model,
            instructions=instructions,
            instructions_func=instructions_func,
            tools=tuple(tools),
            history_processor=history_processor,
            settings=settings,
            max_turns=max_turns,
            usage_limits=usage_limits,
            token_counter=token_counter,
            tool_retries=tool_retries,
            parallel_tool_calls=parallel_tool_calls,
            retry=retry,
            output_validator=output_validator,
            output_retries=output_retries,
            undeclared_tools=undeclared_tools,
            tool_errors=tool_errors,
            cache_key=cache_key,
        )

    @classmethod
    def from_config(cls, config: RunConfig) -> Agent:
        """An agent over a ready (already validated) configuration."""
        agent = cls.__new__(cls)
        agent.config = config
        return agent

    # --- runs: the same steps, streamed or not -------------------------------------------

    async def run_with_history(
        self,
        history: Sequence[Message],
        prompt: str,
        *,
        parts: Sequence[Part] = (),
        run_id: str | None = None,
        conversation_id: str | None = None,
        hooks: RunHooks | None = None,
    ) -> RunResult:
        """Continue ``history`` (``[]`` for a new conversation, an earlier ``messages`` or
        ``partial.messages``) with ``prompt``; each model turn asks for the whole reply.
        ``hooks`` approve tool calls and hear what is recorded (``RunHooks``)."""
        return await self._execute(history, prompt, parts, run_id, conversation_id, stream=False, hooks=hooks)

    async def run_stream_with_history(
        self,
        history: Sequence[Message],
        prompt: str,
        *,
        parts: Sequence[Part] = (),
        run_id: str | None = None,
        conversation_id: str | None = None,
        hooks: RunHooks | None = None,
    ) -> RunResult:
        """``run_with_history`` over streamed model turns (``hooks.on_delta`` and
        ``hooks.on_event`` hear them).

        Interruption (``KeyboardInterrupt`` anywhere, e.g. from ``on_delta``, or cancellation
        of the task) raises ``RunError(interrupted=True)``: at stage ``model``, with the text
        streamed so far kept as an assistant message marked by ``mark_interrupted`` and
        half-received tool calls kept verbatim; at stage ``tool`` if it hit a tool batch,
        with evidence ending at the turn that requested it. Unlike Go, ``partial`` is set for
        an interrupted run even when nothing but the prompt exists, so the caller keeps the
        prompt. A stream that dies with a ``ModelError`` keeps its partial text the same way
        (``interrupted`` stays False). Converting the cancellation into ``RunError`` means
        the task ends with that error rather than ``CancelledError``.
        """
        return await self._execute(history, prompt, parts, run_id, conversation_id, stream=True, hooks=hooks)

    # --- the steps -----------------------------------------------------------------------

    def process_history(self, history: Sequence[Message]) -> list[Message]:
        """Step 1: the processor's view of the history (a copy; the input is never mutated)."""
        supplied = list(history)
        processor = self.config.history_processor
        if processor is None:
            return supplied
        try:
            processed = processor(supplied)
        except Exception as exc:
            raise HistoryProcessorError(f"golem: history processor: {exc}") from exc
        return list(processed) if processed is not None else []

    async def _instructions(self) -> str:
        """The run's resolved instructions (static, then the function's text)."""
        dynamic = ""
        if self.config.instructions_func is not None:
            value = self.config.instructions_func()
            dynamic = await value if inspect.isawaitable(value) else value
        return resolve_instructions(self.config.instructions, dynamic or "")

    async def _execute(
        self,
        history: Sequence[Message],
        prompt: str,
        parts: Sequence[Part],
        run_id: str | None,
        conversation_id: str | None,
        *,
        stream: bool,
        hooks: RunHooks | None = None,
    ) -> RunResult:
        """Every run: steps 1-4 here, then the loop over the agent's configuration."""
        if stream and not callable(getattr(self.config.model, "stream", None)):
            model = self.config.model
            raise GolemError(f"golem: model {getattr(model, 'name', type(model).__name__)} does not support streaming")
        processed = self.process_history(history)
        validate_run_input(parts, processed)
        run_id = run_id or new_id()
        conversation_id = conversation_id or _inherited_conversation(processed) or new_id()
        instructions = await self._instructions()

        messages: list[Message] = []
        if instructions:
            messages.append(Message(role=SYSTEM, content=instructions))
        messages.extend(m for m in repair_history(processed) if m.role != SYSTEM)
        sent = len(messages) - (1 if instructions else 0)
        prompt_index = len(messages)
        messages.append(
            Message(role=USER, content=prompt, parts=list(parts), run_id=run_id, conversation_id=conversation_id)
        )
        state = RunState(
            messages=messages,
            prompt_index=prompt_index,
            sent_messages=sent,
            run_id=run_id,
            conversation_id=conversation_id,
        )
        loop = Loop(self.config, state, hooks or RunHooks(), stream=stream)
        response, output = await loop.run()
        return RunResult(
            messages=state.messages,
            new_messages=state.messages[prompt_index:],
            output=output,
            usage=state.usage,
            run_id=run_id,
            conversation_id=conversation_id,
            requests=state.requests,
            tool_calls=state.tool_calls,
            finish_reason=state.finish_reason,
            sent_messages=sent,
            response=response,
        )


def _inherited_conversation(history: Sequence[Message]) -> str:
    """The conversation ID of the last message carrying one (spec §6.2), else ``""``."""
    for message in reversed(history):
        if message.conversation_id:
            return message.conversation_id
    return ""
