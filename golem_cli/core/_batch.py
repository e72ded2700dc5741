"""One tool batch: the calls of one assistant turn, executed and recorded (Go ``runToolCalls``).

Calls run in groups: consecutive non-sequential tools together (in parallel), a sequential
tool alone, as a barrier. Results are recorded in call order whatever the finishing order.
Go's rules for what a batch leaves behind (spec §7, §8):

* success: a tool message with the text and parts (parts are validated first);
* ``ToolFailed``: a ``failed`` tool message, content = reason;
* ``ModelRetry`` within the tool's budget: the rejection text as the result;
* ``ToolCanceled``: results recorded before the stopping call stay; every call without a
  result (the stopping call, its parallel siblings even if they ran, later groups, which
  never start) is closed with ``INTERRUPTED``; the run ends at the ``canceled`` stage;
* anything else (or an undeclared tool, checked before anything runs): the run fails at the
  ``tool`` stage and the batch contributes no result at all. With
  ``RunConfig.undeclared_tools == "answer"`` an undeclared tool gets a ``failed`` result
  instead and the rest of the batch runs.

Before a group starts, each of its calls is decoded (bad arguments are a ``ModelRetry``
outcome and are never asked about) and put to the caller's approval hook, one at a time in
call order. A denial is a ``failed`` result with Go's denial text; ``ToolCanceled`` from the
hook, or Ctrl-C / cancellation while it waits for an answer, stops the run like a tool's
``ToolCanceled`` (nothing of that group ran, so the batch is simply closed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from golem_cli.core._state import RunState
from golem_cli.core.errors import RunCanceledError, ToolCallError
from golem_cli.core.events import ToolCallFinished, ToolCallStarted
from golem_cli.core.messages import INTERRUPTED, TOOL, Message, ToolCall
from golem_cli.core.runconfig import RunConfig, RunHooks
from golem_cli.core.tools import (
    ApprovalRequest,
    ModelRetry,
    Tool,
    ToolCanceled,
    ToolContext,
    ToolFailed,
    ToolResult,
    denial_text,
)
from golem_cli.core.validate import part_error

Outcome = ToolResult | BaseException | None  # None: the call never started


async def run_batch(config: RunConfig, state: RunState, calls: Sequence[ToolCall], hooks: RunHooks) -> None:
    """Execute ``calls`` and append their stamped results to ``state.messages``, or raise the
    batch's ``RunError`` (stages ``tool`` and ``canceled``; ``tool`` with ``interrupted`` on
    Ctrl-C or cancellation, the evidence then ending at the requesting turn)."""
    declared: list[Tool | None] = []
    for call in calls:
        found = config.tool(call.name)
        if found is None and config.undeclared_tools == "fail":
            raise state.fail("tool", ToolCallError(call.name, call.id, "tool was not declared for this run"))
        declared.append(found)
    outcomes: list[Outcome] = [None] * len(calls)
    arguments: list[dict[str, Any]] = [{} for _ in calls]

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
        except (asyncio.CancelledError, KeyboardInterrupt):
            outcomes[i] = ToolCanceled("the user stopped the run at the approval question")
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
        except Exception as exc:
            outcomes[i] = exc

    try:
        for group in _groups(declared, config.parallel_tool_calls):
            runnable: list[int] = []
            for i in group:
                if await prepare(i):
                    runnable.append(i)
                elif isinstance(outcomes[i], ToolCanceled):
                    break
            if any(isinstance(outcomes[i], ToolCanceled) for i in group):
                break  # stopped at a question: nothing of this group runs, later groups never start
            for i in runnable:
                await hooks.event(ToolCallStarted(calls[i]))
            if len(runnable) == 1:
                await execute(runnable[0])
            elif runnable:
                await asyncio.gather(*(execute(i) for i in runnable))
            for i in runnable:
                if isinstance(outcomes[i], KeyboardInterrupt):
                    raise outcomes[i]  # type: ignore[misc]
            if any(isinstance(outcomes[i], ToolCanceled) for i in group):
                break  # the stop ends the batch: later groups never start
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:
        stopped = next(
            (c for c, o in zip(calls, outcomes, strict=True) if o is None or isinstance(o, KeyboardInterrupt)),
            calls[-1],
        )
        raise state.fail("tool", ToolCallError(stopped.name, stopped.id, "interrupted"), interrupted=True) from exc

    results = _record(config, state, calls, declared, outcomes)
    state.messages.extend(results)
    for call in calls:
        result = next((m for m in results if m.tool_call_id == call.id), None)
        if result is not None:
            await hooks.event(ToolCallFinished(call, result))


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


def _record(
    config: RunConfig,
    state: RunState,
    calls: Sequence[ToolCall],
    declared: Sequence[Tool | None],
    outcomes: Sequence[Outcome],
) -> list[Message]:
    """Result messages in call order (stamped), or raise the batch's failure."""
    messages: list[Message] = []
    canceled: RunCanceledError | None = None
    for call, tool, outcome in zip(calls, declared, outcomes, strict=True):
        if outcome is None:
            continue
        if isinstance(outcome, ToolResult):
            for j, part in enumerate(outcome.parts):
                if (err := part_error(part)) is not None:
                    problem = f"tool produced an invalid part {j}: {err}"
                    raise state.fail("tool", ToolCallError(call.name, call.id, problem))
            messages.append(
                Message(
                    role=TOOL,
                    content=outcome.text,
                    parts=list(outcome.parts),
                    tool_call_id=call.id,
                    tool_name=call.name,
                )
            )
        elif isinstance(outcome, ToolCanceled):
            canceled = RunCanceledError(call.name, call.id, outcome.reason)
            break
        elif isinstance(outcome, ToolFailed):
            messages.append(
                Message(role=TOOL, content=outcome.reason, tool_call_id=call.id, tool_name=call.name, failed=True)
            )
        elif isinstance(outcome, ModelRetry) and state.feedbacks.get(call.name, 0) < _retry_limit(config, tool):
            state.feedbacks[call.name] = state.feedbacks.get(call.name, 0) + 1
            rejection = f"Your tool call was rejected: {outcome.reason}. Correct the arguments and call the tool again."
            messages.append(Message(role=TOOL, content=rejection, tool_call_id=call.id, tool_name=call.name))
        else:
            used = state.feedbacks.get(call.name, 0)
            error: BaseException | str = outcome
            if used > 0:
                error = f"tool failed after {used + 1} attempts: {error}"
            raise state.fail("tool", ToolCallError(call.name, call.id, error)) from outcome
    if canceled is not None:
        # Close every call still without a result with the repair text, so the transcript
        # resumes without repair.
        answered = {m.tool_call_id for m in messages}
        for call in calls:
            if call.id not in answered:
                answered.add(call.id)
                messages.append(Message(role=TOOL, content=INTERRUPTED, tool_call_id=call.id, tool_name=call.name))
        state.messages.extend(state.stamp(m) for m in messages)
        raise state.fail("canceled", canceled)
    return [state.stamp(m) for m in messages]
