"""The run loop behind ``Agent``: model turn, tool batch, repeat (Go ``internal/runner``).

Kept apart from ``agent.py`` so that file reads as the public contract (preparation, identity,
request assembly) and this one as the mechanics. Everything here works on one ``RunState``:
the request conversation so far plus counters. Every failure goes through
``RunState.fail``, the one place a ``RunError`` and its ``PartialResult`` are built, so the
evidence rules of spec §7 live in one function.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from golem_cli.core.errors import GolemError, ModelError, PartialResult, RunError
from golem_cli.core.messages import (
    ASSISTANT,
    INTERRUPTED,
    TOOL,
    USER,
    Message,
    ToolCall,
    mark_interrupted,
    replace,
)
from golem_cli.core.model import ModelRequest, ModelResponse, ResponseAccumulator, StreamEvent, TextDelta
from golem_cli.core.tools import ModelRetry, Tool, ToolCanceled, ToolContext, ToolFailed, ToolResult
from golem_cli.core.usage import Usage
from golem_cli.core.validate import go_quote_q, part_error, thinking_error

if TYPE_CHECKING:
    from golem_cli.core.agent import Agent

Callback = Callable[[Any], Any]


# --- errors carried as RunError causes ------------------------------------------------------


class ToolCallError(GolemError):
    """A tool call failed the run; ``str()`` is Go's ``runner: tool "<name>" (call "<id>"): <err>``."""

    def __init__(self, tool_name: str, call_id: str, error: BaseException | str) -> None:
        self.tool_name, self.call_id, self.error = tool_name, call_id, error
        super().__init__(f"runner: tool {go_quote_q(tool_name)} (call {go_quote_q(call_id)}): {error}")


class RunCanceledError(GolemError):
    """A tool ended the run with ``ToolCanceled`` (stage ``canceled``)."""

    def __init__(self, tool_name: str, call_id: str, reason: str) -> None:
        self.tool_name, self.call_id, self.reason = tool_name, call_id, reason
        super().__init__(
            f"runner: tool {go_quote_q(tool_name)} (call {go_quote_q(call_id)}) canceled the run: {reason}"
        )


class UsageLimitError(GolemError):
    """The run crossed a ``UsageLimits`` bound (stage ``usage``)."""

    def __init__(self, kind: str, limit: int, actual: int) -> None:
        self.kind, self.limit, self.actual = kind, limit, actual
        super().__init__(f"run exceeded the {kind} limit of {limit} (used {actual})")


# --- events beyond the model stream ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """Given to ``on_event`` before a tool call executes."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """Given to ``on_event`` once a batch is recorded: the result message of each call."""

    call: ToolCall
    result: Message


@dataclass
class RunPartial(PartialResult):
    """``PartialResult`` plus what the CLI needs to persist a failed run: ``new_messages``
    (the prompt and everything after it) and ``sent_messages`` (history messages sent)."""

    new_messages: list[Message] = field(default_factory=list)
    sent_messages: int = 0


async def call_back(callback: Callback | None, value: Any) -> None:
    """Call a sync or async callback."""
    if callback is not None:
        result = callback(value)
        if inspect.isawaitable(result):
            await result


# --- the state of one run ---------------------------------------------------------------------


@dataclass
class RunState:
    """One run's evidence: the request conversation plus what the loop appended."""

    messages: list[Message]
    prompt_index: int
    sent_messages: int
    run_id: str
    conversation_id: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = ""
    requests: int = 0
    tool_calls: int = 0
    feedbacks: dict[str, int] = field(default_factory=dict)

    def stamp(self, message: Message) -> Message:
        """A run-added message carries the run identity (spec §6.3)."""
        return replace(message, run_id=self.run_id, conversation_id=self.conversation_id)

    def fail(
        self,
        stage: str,
        cause: BaseException | str,
        *,
        interrupted: bool = False,
        cut: Message | None = None,
    ) -> RunError:
        """The ``RunError`` for a failure now, with the partial evidence of spec §7.

        ``cut`` is an assistant reply that was streaming when the run failed; it is kept
        (stamped) after the completed evidence. ``partial`` is None by Go's rule (no tool
        executed, no usage, no assistant message anywhere) except when the caller or user
        interrupted the run: then it is always set, so the caller keeps the prompt it typed.
        """
        messages = list(self.messages)
        if cut is not None:
            messages.append(self.stamp(cut))
        nothing = (
            self.tool_calls == 0
            and self.usage.input_tokens == 0
            and self.usage.output_tokens == 0
            and not any(m.role == ASSISTANT for m in messages)
        )
        partial = None
        if interrupted or not nothing:
            partial = RunPartial(
                messages=messages,
                usage=self.usage,
                finish_reason=self.finish_reason,
                requests=self.requests,
                tool_calls=self.tool_calls,
                run_id=self.run_id,
                conversation_id=self.conversation_id,
                new_messages=messages[self.prompt_index :],
                sent_messages=self.sent_messages,
            )
        error = RunError(
            stage,
            cause,
            partial,
            interrupted=interrupted,
            run_id=self.run_id,
            conversation_id=self.conversation_id,
        )
        if isinstance(cause, BaseException):
            error.__cause__ = cause
        return error


def cut_message(acc: ResponseAccumulator) -> Message | None:
    """What a stream delivered before it died, as a resumable assistant message.

    The text is marked interrupted; half-received tool calls are kept verbatim (their args
    may be cut JSON; the next run's repair closes them). Reasoning blocks are kept only when
    complete: a half-streamed block has no signature yet, and a provider that verifies
    signatures would reject the whole resumed request.
    """
    if acc.done is not None:
        return acc.done.message
    if acc.is_empty():
        return None
    thinking = [
        b for b in acc.thinking() if thinking_error(b) is None and (b.redacted or b.signature)
    ]
    return Message(role=ASSISTANT, content=mark_interrupted(acc.text), tool_calls=acc.tool_calls(), thinking=thinking)


# --- the loop ---------------------------------------------------------------------------------


class Loop:
    """Drives one run of ``agent`` over ``state`` (streamed when ``stream`` is true)."""

    def __init__(
        self,
        agent: Agent,
        state: RunState,
        *,
        stream: bool,
        on_delta: Callback | None = None,
        on_event: Callback | None = None,
    ) -> None:
        self.agent, self.state, self.stream = agent, state, stream
        self.on_delta, self.on_event = on_delta, on_event
        self.tools = {t.name: t for t in agent.tools}
        self.definitions = [t.definition() for t in agent.tools]

    async def run(self) -> tuple[ModelResponse, Any]:
        """Turns until a reply without tool calls; returns it and the decoded output.

        Failures the steps below did not classify (a callback raising, Ctrl-C between
        steps) surface at the ``model`` stage, Go's stage for unclassified errors.
        """
        try:
            return await self._turns()
        except RunError:
            raise
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            cause = "interrupted" if isinstance(exc, KeyboardInterrupt) else "canceled"
            raise self.state.fail("model", cause, interrupted=True) from exc
        except Exception as exc:
            raise self.state.fail("model", exc) from exc

    async def _turns(self) -> tuple[ModelResponse, Any]:
        agent, state = self.agent, self.state
        corrections = 0
        turn = 0
        while True:
            if turn >= agent.max_turns:
                raise state.fail("loop", f"runner: model turn limit exceeded after {agent.max_turns} turns")
            request = ModelRequest(messages=list(state.messages), tools=self.definitions, settings=agent.settings)
            self._check_request_size(request)
            response = await self._model_turn(request)
            state.finish_reason = response.finish_reason
            state.usage = state.usage + response.usage
            state.messages.append(state.stamp(response.message))
            self._check_limits()
            calls = response.message.tool_calls
            if not calls:
                try:
                    return response, await self._decode(response)
                except ModelRetry as rejection:
                    if corrections >= agent.output_retries:
                        raise self._decode_failure(rejection, corrections) from rejection
                    corrections += 1
                    state.messages.append(
                        state.stamp(
                            Message(
                                role=USER,
                                content=f"Your previous response was rejected: {rejection.reason}. "
                                "Correct it and respond again.",
                            )
                        )
                    )
                    turn = 0  # a correction round restarts the loop, as in Go
                    continue
                except Exception as exc:
                    raise self._decode_failure(exc, corrections) from exc
            await self._tool_batch(calls)
            self._check_limits()
            turn += 1

    # --- model ---------------------------------------------------------------------------

    async def _model_turn(self, request: ModelRequest) -> ModelResponse:
        """One model turn with the agent's retry policy; every failure becomes a RunError."""
        agent, state = self.agent, self.state
        attempt = 0
        while True:
            attempt += 1
            state.requests += 1
            acc = ResponseAccumulator()
            try:
                if self.stream:
                    return await self._stream_once(request, acc)
                return await agent.model.request(request)
            except (asyncio.CancelledError, KeyboardInterrupt) as exc:
                cause = "interrupted" if isinstance(exc, KeyboardInterrupt) else "canceled"
                raise state.fail("model", cause, interrupted=True, cut=cut_message(acc)) from exc
            except Exception as exc:
                retryable = isinstance(exc, ModelError) and exc.retryable and acc.is_empty()
                if retryable and attempt < agent.max_attempts:
                    delay = agent.retry_backoff(attempt, exc)
                    try:
                        if delay > 0:
                            await asyncio.sleep(delay)
                    except (asyncio.CancelledError, KeyboardInterrupt) as stop:
                        raise state.fail("model", "canceled", interrupted=True) from stop
                    continue
                cause: BaseException = exc
                if attempt > 1:
                    cause = _retried(exc, attempt)
                raise state.fail("model", cause, cut=cut_message(acc)) from exc

    async def _stream_once(self, request: ModelRequest, acc: ResponseAccumulator) -> ModelResponse:
        stream_method = getattr(self.agent.model, "stream", None)
        events: AsyncIterator[StreamEvent] = stream_method(request)  # type: ignore[misc]
        try:
            async for event in events:
                acc.add(event)
                await call_back(self.on_event, event)
                if isinstance(event, TextDelta) and event.text:
                    await call_back(self.on_delta, event.text)
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    pass
        if acc.done is None:
            raise ModelError("model: stream ended before the response was complete")
        return acc.done

    def _check_request_size(self, request: ModelRequest) -> None:
        """The pre-send per-request bound (needs the agent's token counter)."""
        limit = self.agent.usage_limits.per_request_input_tokens if self.agent.usage_limits else 0
        counter = self.agent.token_counter
        if not limit or counter is None:
            return
        try:
            count = counter.count(request.messages)
        except Exception as exc:
            raise self.state.fail("model", f"golem: token count failed before request: {exc}") from exc
        if count > limit:
            raise self.state.fail("usage", UsageLimitError("per-request input token", limit, count))

    def _check_limits(self) -> None:
        limits, state = self.agent.usage_limits, self.state
        if limits is None:
            return
        usage = state.usage
        checks = (
            ("input token", limits.input_tokens, usage.input_tokens),
            ("output token", limits.output_tokens, usage.output_tokens),
            ("total token", limits.total_tokens, usage.input_tokens + usage.output_tokens),
            ("request", limits.requests, state.requests),
            ("tool call", limits.tool_calls, state.tool_calls),
        )
        for kind, limit, actual in checks:
            if limit and actual > limit:
                raise state.fail("usage", UsageLimitError(kind, limit, actual))

    async def _decode(self, response: ModelResponse) -> Any:
        validator = self.agent.output_validator
        if validator is None:
            return response.message.content
        value = validator(response.message.content)
        return await value if inspect.isawaitable(value) else value

    def _decode_failure(self, exc: BaseException, corrections: int) -> RunError:
        if corrections > 0:
            return self.state.fail("decode", f"golem: output failed validation after {corrections + 1} attempts: {exc}")
        return self.state.fail("decode", exc)

    # --- tools ---------------------------------------------------------------------------

    async def _tool_batch(self, calls: Sequence[ToolCall]) -> None:
        """Run one batch (parallel groups split at sequential tools), record results in call
        order, and apply Go's rules for failed, rejected and canceling calls."""
        state = self.state
        declared: list[Tool] = []
        for call in calls:
            found = self.tools.get(call.name)
            if found is None:
                raise state.fail("tool", ToolCallError(call.name, call.id, "tool was not declared for this run"))
            declared.append(found)
        outcomes: list[ToolResult | BaseException | None] = [None] * len(calls)

        async def execute(i: int) -> None:
            call = calls[i]
            state.tool_calls += 1
            context = ToolContext(call.id, call.name, call.args, state.run_id, state.conversation_id)
            try:
                outcomes[i] = await declared[i].execute(call.args, context)
            except KeyboardInterrupt as exc:  # keep Ctrl-C from escaping a child task
                outcomes[i] = exc
            except Exception as exc:
                outcomes[i] = exc

        try:
            for group in self._groups(declared):
                for i in group:
                    await call_back(self.on_event, ToolCallStarted(calls[i]))
                if len(group) == 1:
                    await execute(group[0])
                else:
                    await asyncio.gather(*(execute(i) for i in group))
                for i in group:
                    if isinstance(outcomes[i], KeyboardInterrupt):
                        raise outcomes[i]  # type: ignore[misc]
                if any(isinstance(outcomes[i], ToolCanceled) for i in group):
                    break  # the stop ends the batch: later groups never start
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            pending = next(
                (c for c, o in zip(calls, outcomes) if o is None or isinstance(o, KeyboardInterrupt)), calls[-1]
            )
            raise state.fail(
                "tool", ToolCallError(pending.name, pending.id, "interrupted"), interrupted=True
            ) from exc

        results = self._record(calls, declared, outcomes)
        state.messages.extend(results)
        for call in calls:
            for message in results:
                if message.tool_call_id == call.id:
                    await call_back(self.on_event, ToolCallFinished(call, message))
                    break

    def _groups(self, declared: Sequence[Tool]) -> list[list[int]]:
        if not self.agent.parallel_tool_calls:
            return [[i] for i in range(len(declared))]
        groups: list[list[int]] = []
        for i, t in enumerate(declared):
            if t.sequential or not groups or declared[groups[-1][0]].sequential:
                groups.append([i])
            else:
                groups[-1].append(i)
        return groups

    def _record(
        self, calls: Sequence[ToolCall], declared: Sequence[Tool], outcomes: Sequence[ToolResult | BaseException | None]
    ) -> list[Message]:
        """Result messages in call order (stamped), or raise the batch's failure."""
        state, agent = self.state, self.agent
        messages: list[Message] = []
        canceled: RunCanceledError | None = None
        for call, tool, outcome in zip(calls, declared, outcomes):
            if outcome is None:
                continue  # never started: a canceling call came first
            if isinstance(outcome, ToolResult):
                for j, part in enumerate(outcome.parts):
                    if (err := part_error(part)) is not None:
                        raise state.fail(
                            "tool", ToolCallError(call.name, call.id, f"tool produced an invalid part {j}: {err}")
                        )
                messages.append(
                    Message(role=TOOL, content=outcome.text, parts=list(outcome.parts),
                            tool_call_id=call.id, tool_name=call.name)
                )
            elif isinstance(outcome, ToolCanceled):
                canceled = RunCanceledError(call.name, call.id, outcome.reason)
                break
            elif isinstance(outcome, ToolFailed):
                messages.append(
                    Message(role=TOOL, content=outcome.reason, tool_call_id=call.id, tool_name=call.name, failed=True)
                )
            elif isinstance(outcome, ModelRetry) and state.feedbacks.get(tool.name, 0) < _retry_limit(agent, tool):
                state.feedbacks[tool.name] = state.feedbacks.get(tool.name, 0) + 1
                messages.append(
                    Message(
                        role=TOOL,
                        content=f"Your tool call was rejected: {outcome.reason}. "
                        "Correct the arguments and call the tool again.",
                        tool_call_id=call.id,
                        tool_name=call.name,
                    )
                )
            else:
                used = state.feedbacks.get(tool.name, 0)
                error: BaseException | str = outcome
                if isinstance(outcome, asyncio.TimeoutError):
                    error = f"tool timed out after {tool.timeout}s"
                if used > 0:
                    error = f"tool failed after {used + 1} attempts: {error}"
                raise state.fail("tool", ToolCallError(call.name, call.id, error)) from outcome
        if canceled is not None:
            # Close every call still without a result with the repair text, so the
            # transcript resumes without repair (spec §7 ``canceled``).
            answered = {m.tool_call_id for m in messages}
            for call in calls:
                if call.id not in answered:
                    answered.add(call.id)
                    messages.append(
                        Message(role=TOOL, content=INTERRUPTED, tool_call_id=call.id, tool_name=call.name)
                    )
            state.messages.extend(state.stamp(m) for m in messages)
            raise state.fail("canceled", canceled)
        return [state.stamp(m) for m in messages]


def _retry_limit(agent: Agent, tool: Tool) -> int:
    return agent.tool_retries if tool.max_retries is None else tool.max_retries


def _retried(exc: Exception, attempts: int) -> Exception:
    """Go's ``runner: model failed after <n> attempts: <err>``, keeping ModelError details."""
    text = f"runner: model failed after {attempts} attempts: {exc}"
    if isinstance(exc, ModelError):
        wrapped: Exception = ModelError(text, status=exc.status, hint=exc.hint, retryable=exc.retryable)
    else:
        wrapped = GolemError(text)
    wrapped.__cause__ = exc
    return wrapped


def default_backoff(attempt: int, error: BaseException) -> float:
    """Seconds to wait after failed attempt ``attempt``: the provider's ``retry_after`` when
    given, else 0.5 s doubling per attempt, capped at 30 s (Go's default)."""
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, int | float) and retry_after >= 0:
        return min(float(retry_after), 30.0)
    return min(0.5 * (2 ** (attempt - 1)), 30.0)

