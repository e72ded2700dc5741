"""One tool batch: the calls of one assistant turn, executed and recorded (Go ``runToolCalls``).

Calls run in groups: consecutive non-sequential tools together (in parallel), a sequential
tool alone, as a barrier. Results are recorded in call order whatever the finishing order;
the caller hears each result (``ToolCallFinished``) as soon as it is known. Go's rules for
what a batch leaves behind (spec §7, §8):

* success: a tool message with the text and parts (parts are validated first);
* ``ToolFailed``: a ``failed`` tool message, content = reason;
* ``ModelRetry`` within the tool's budget: the rejection text as the result. The budget is
  counted per model response: every rejected call of a tool in one batch gets its feedback,
  and the batch uses one retry of that tool, however many of its calls were rejected;
* ``ToolCanceled``: results recorded before the stopping call stay; every call without a
  result (the stopping call, its parallel siblings even if they ran, later groups, which
  never start) is closed with ``INTERRUPTED``; the run ends at the ``canceled`` stage;
* anything else (or an undeclared tool, checked before anything runs): the run fails at the
  ``tool`` stage once the call's group is done (later groups never start) and the batch
  contributes no result at all.

Two caller policies soften the last rule for a chat, where a person is waiting and the model
can read what went wrong: with ``RunConfig.undeclared_tools == "answer"`` an undeclared tool
gets a ``failed`` result and the rest of the batch runs; with ``RunConfig.tool_errors ==
"answer"`` any other error of one call (an exception, a retry past the budget, an invalid
part) is that call's ``failed`` result, and the results of the other calls stand.

Before a group starts, each of its calls is decoded (bad arguments are a ``ModelRetry``
outcome and are never asked about) and put to the caller's approval hook, one at a time in
call order. A denial is a ``failed`` result with Go's denial text; ``ToolFailed`` from the hook
(a call the caller knows will fail) is that call's ``failed`` result, never run; ``ToolCanceled`` from the
hook, or Ctrl-C / cancellation while it waits for an answer, stops the run like a tool's
``ToolCanceled`` (nothing of that group ran, so the batch is simply closed).

Ctrl-C or cancellation while calls run is not a deliberate stop: the run fails at the
``tool`` stage, interrupted. The results of the calls that finished are kept (they ran: what
they changed is real, and the model must not be told otherwise); the calls still running,
and those that never started, stay without a result, for the next run's repair (spec §2).
Go keeps no result of a failed batch; golem diverges here as it does for every interruption
(the partial evidence is always kept, ``_state.RunState.fail``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from golem_cli.core._state import RunState
from golem_cli.core.errors import RunCanceledError, ToolCallError
from golem_cli.core.events import ToolCallFinished, ToolCallStarted
from golem_cli.core.history.validate import part_error
from golem_cli.core.messages import INTERRUPTED, TOOL, Message, ToolCall
from golem_cli.core.runconfig import RunConfig, RunHooks
from golem_cli.core.tools import (
    STOPPED_AT_QUESTION,
    ApprovalRequest,
    ModelRetry,
    Tool,
    ToolCanceled,
    ToolContext,
    ToolFailed,
    ToolResult,
    denial_text,
)

Outcome = ToolResult | BaseException | None  # None: the call never started (or is running)


class _Fatal:
    """An outcome that fails the run at the ``tool`` stage (Go's rule)."""

    def __init__(self, error: BaseException | str, cause: BaseException) -> None:
        self.error, self.cause = error, cause


async def run_batch(config: RunConfig, state: RunState, calls: Sequence[ToolCall], hooks: RunHooks) -> None:
    """Execute ``calls`` and append their stamped results to ``state.messages``, or raise the
    batch's ``RunError`` (stages ``tool`` and ``canceled``; ``tool`` with ``interrupted`` on
    Ctrl-C or cancellation, the evidence then ending with the results that finished)."""
    declared: list[Tool | None] = []
    for call in calls:
        found = config.tool(call.name)
        if found is None and config.undeclared_tools == "fail":
            raise state.fail("tool", ToolCallError(call.name, call.id, "tool was not declared for this run"))
        declared.append(found)
    outcomes: list[Outcome] = [None] * len(calls)
    results: list[Message | None] = [None] * len(calls)
    fatal: list[_Fatal | None] = [None] * len(calls)
    arguments: list[dict[str, Any]] = [{} for _ in calls]
    budget = dict(state.feedbacks)  # retries used before this response
    rejected: set[str] = set()  # tools whose retry this response uses

    def conclude(i: int) -> Message | None:
        """Call ``i``'s result message from its outcome (None: it stops or fails the run)."""
        call, tool, outcome = calls[i], declared[i], outcomes[i]
        answer = config.tool_errors == "answer"
        if isinstance(outcome, ToolResult):
            for j, part in enumerate(outcome.parts):
                if (err := part_error(part)) is not None:
                    problem = f"tool produced an invalid part {j}: {err}"
                    if answer:
                        return _failed(call, problem)
                    fatal[i] = _Fatal(problem, ValueError(problem))
                    return None
            return Message(role=TOOL, content=outcome.text, parts=list(outcome.parts), tool_call_id=call.id,
                           tool_name=call.name)  # fmt: skip
        if isinstance(outcome, ToolFailed):
            return _failed(call, outcome.reason)
        if isinstance(outcome, ToolCanceled | KeyboardInterrupt) or outcome is None:
            return None
        used = budget.get(call.name, 0)
        if isinstance(outcome, ModelRetry) and used < _retry_limit(config, tool):
            rejected.add(call.name)
            rejection = f"Your tool call was rejected: {outcome.reason}. Correct the arguments and call the tool again."
            return Message(role=TOOL, content=rejection, tool_call_id=call.id, tool_name=call.name)
        error: BaseException | str = outcome
        if isinstance(outcome, ModelRetry) and used > 0:
            error = f"tool failed after {used + 1} attempts: {outcome}"
        if answer:
            if isinstance(outcome, ModelRetry):
                return _failed(call, f"Your tool call was rejected again: {error}. Do not call it this way again.")
            return _failed(call, f"the tool failed: {_describe(outcome)}")
        fatal[i] = _Fatal(error, outcome)
        return None

    async def settle(i: int) -> None:
        message = conclude(i)
        if message is not None:
            results[i] = stamped = state.stamp(message)
            await hooks.event(ToolCallFinished(calls[i], stamped))

    async def prepare(i: int) -> bool:
        """Decode and approve call ``i``; True when it is to run (else its outcome is set)."""
        call, tool = calls[i], declared[i]
        if tool is None:
            outcomes[i] = ToolFailed(f"tool {call.name!r} is not available in this chat")
            return False
        try:
            arguments[i] = tool.decode_args(call.args)
        except ModelRetry as retry:
            state.tool_calls += 1  # an attempted execution, as when the function rejects them
            outcomes[i] = retry
            return False
        try:
            answer = await hooks.approval(ApprovalRequest(call, tool, arguments[i]))
        except ToolCanceled as stop:
            outcomes[i] = stop
            return False
        except ToolFailed as failed:  # known to fail before it runs: its failed result, no question
            outcomes[i] = failed
            return False
        except (asyncio.CancelledError, KeyboardInterrupt):
            outcomes[i] = ToolCanceled(STOPPED_AT_QUESTION)
            return False
        if not answer.approved:
            outcomes[i] = ToolFailed(denial_text(answer.reason))
            return False
        return True

    async def execute(i: int) -> None:
        call, tool = calls[i], declared[i]
        assert tool is not None
        state.tool_calls += 1
        context = ToolContext(call.id, call.name, call.args, state.run_id, state.conversation_id)
        try:
            outcomes[i] = await tool.call(arguments[i], context)
        except KeyboardInterrupt as exc:  # a BaseException escaping a child task would
            outcomes[i] = exc  # bypass the run and stop the event loop itself
            return
        except Exception as exc:
            outcomes[i] = exc
        await settle(i)

    stop: int | None = None  # the call that stopped (ToolCanceled) or failed the run
    try:
        for group in _groups(declared, config.parallel_tool_calls):
            runnable: list[int] = []
            for i in group:
                if await prepare(i):
                    runnable.append(i)
                    continue
                await settle(i)
                if isinstance(outcomes[i], ToolCanceled):
                    break
            if not any(isinstance(outcomes[i], ToolCanceled) for i in group):
                for i in runnable:
                    await hooks.event(ToolCallStarted(calls[i]))
                if len(runnable) == 1:
                    await execute(runnable[0])
                elif runnable:
                    await asyncio.gather(*(execute(i) for i in runnable))
                for i in runnable:
                    if isinstance(outcomes[i], KeyboardInterrupt):
                        raise outcomes[i]  # type: ignore[misc]
            # stopped at a question (nothing of this group ran), by a tool, or failed:
            # later groups never start
            stop = next((i for i in group if isinstance(outcomes[i], ToolCanceled) or fatal[i]), None)
            if stop is not None:
                break
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:
        _keep_feedback(state, rejected)
        state.messages.extend(m for m in results if m is not None)
        stopped = next((c for c, m in zip(calls, results, strict=True) if m is None), calls[-1])
        raise state.fail("tool", ToolCallError(stopped.name, stopped.id, "interrupted"), interrupted=True) from exc

    _keep_feedback(state, rejected)
    if stop is not None and (failure := fatal[stop]) is not None:
        raise state.fail("tool", ToolCallError(calls[stop].name, calls[stop].id, failure.error)) from failure.cause
    if stop is not None:
        # Results before the stopping call stay; every other call is closed with the repair
        # text, so the transcript resumes without repair.
        kept = [m for m in results[:stop] if m is not None]
        answered = {m.tool_call_id for m in kept}
        closed = [
            state.stamp(Message(role=TOOL, content=INTERRUPTED, tool_call_id=c.id, tool_name=c.name))
            for c in calls
            if c.id not in answered
        ]
        state.messages.extend(kept + closed)
        outcome = outcomes[stop]
        assert isinstance(outcome, ToolCanceled)
        raise state.fail("canceled", RunCanceledError(calls[stop].name, calls[stop].id, outcome.reason))
    state.messages.extend(m for m in results if m is not None)


def _failed(call: ToolCall, reason: str) -> Message:
    return Message(role=TOOL, content=reason, tool_call_id=call.id, tool_name=call.name, failed=True)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _keep_feedback(state: RunState, rejected: set[str]) -> None:
    for name in rejected:
        state.feedbacks[name] = state.feedbacks.get(name, 0) + 1


def _sequential(tool: Tool | None) -> bool:
    return tool is not None and tool.sequential


def _groups(declared: Sequence[Tool | None], parallel: bool) -> list[list[int]]:
    """Indices of the calls that run together, in call order."""
    if not parallel:
        return [[i] for i in range(len(declared))]
    groups: list[list[int]] = []
    for i, t in enumerate(declared):
        if _sequential(t) or not groups or _sequential(declared[groups[-1][0]]):
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def _retry_limit(config: RunConfig, tool: Tool | None) -> int:
    if tool is None:
        return 0
    return config.tool_retries if tool.max_retries is None else tool.max_retries
