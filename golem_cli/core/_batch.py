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
they changed is real, and the model must not be told otherwise); a call still running gets a
``failed`` result saying it was stopped, by whom (``stopped_by``: the user, or the signal the
caller names in the cancellation), after how long, and the output it had reported so far
(bounded), because it started and may have done part of its work; the calls that never
started stay without a result, for the next run's repair (spec §2), whose text says they
never ran. Go keeps no result of a failed batch; golem diverges here as it does for every
interruption (the partial evidence is always kept, ``_state.RunState.fail``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from msgspec import Struct, field

from golem_cli.core._state import RunState
from golem_cli.core.errors import RunCanceledError, RunError, ToolCallError
from golem_cli.core.events import ToolCallFinished, ToolCallOutput, ToolCallStarted
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
    stopped_by,
    stopped_text,
)

Outcome = ToolResult | BaseException | None  # None: the call never started (or is running)


#: Characters of a stopped call's output its result keeps: the first and the last.
OUTPUT_HEAD, OUTPUT_TAIL = 2_000, 6_000


class _Output:
    """What a running call reported (``ToolContext.output``), bounded: its beginning and its
    latest end, and how much was left out between them."""

    def __init__(self) -> None:
        self.head = ""
        self.tail = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.head) < OUTPUT_HEAD:
            room = OUTPUT_HEAD - len(self.head)
            self.head += text[:room]
            text = text[room:]
        self.tail += text
        if len(self.tail) > OUTPUT_TAIL:
            self.dropped += len(self.tail) - OUTPUT_TAIL
            self.tail = self.tail[-OUTPUT_TAIL:]

    def text(self) -> str:
        cut = f"\n[... {self.dropped:,} characters left out ...]\n" if self.dropped else ""
        return self.head + cut + self.tail


class _Failure(NamedTuple):
    """What fails the run at the ``tool`` stage (Go's rule): the error text, and its cause."""

    error: BaseException | str
    cause: BaseException


class _Call(Struct, eq=False, kw_only=True):
    """One call of the batch and what became of it."""

    call: ToolCall
    tool: Tool | None  # None: not declared (and the run answers such calls)
    args: dict[str, Any] = field(default_factory=dict)  # decoded, once they decode
    outcome: Outcome = None
    result: Message | None = None  # the stamped result message, once known
    failure: _Failure | None = None
    started: float | None = None  # when it began to run (monotonic)
    output: _Output = field(default_factory=_Output)

    def stops_run(self) -> bool:
        return isinstance(self.outcome, ToolCanceled) or self.failure is not None


async def run_batch(config: RunConfig, state: RunState, calls: Sequence[ToolCall], hooks: RunHooks) -> None:
    """Execute ``calls`` and append their stamped results to ``state.messages``, or raise the
    batch's ``RunError`` (stages ``tool`` and ``canceled``; ``tool`` with ``interrupted`` on
    Ctrl-C or cancellation, the evidence then ending with the results that finished)."""
    batch = [_Call(call=call, tool=_declared(config, state, call)) for call in calls]
    await _Batch(config, state, hooks, batch).run()


def _declared(config: RunConfig, state: RunState, call: ToolCall) -> Tool | None:
    tool = config.tool(call.name)
    if tool is None and config.undeclared_tools == "fail":
        raise state.fail("tool", ToolCallError(call.name, call.id, "tool was not declared for this run"))
    return tool


class _Batch:
    """The steps of one batch over its calls, in call order."""

    def __init__(self, config: RunConfig, state: RunState, hooks: RunHooks, calls: list[_Call]) -> None:
        self.config, self.state, self.hooks, self.calls = config, state, hooks, calls
        self.used = dict(state.feedbacks)  # retries each tool used before this response
        self.rejected: set[str] = set()  # tools whose retry this response uses

    async def run(self) -> None:
        try:
            stop = await self._groups()
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            raise self._interrupted(exc) from exc
        self._keep_feedback()
        if stop is None:
            self.state.messages.extend(self._results(self.calls))
        elif stop.failure is not None:
            raise self.state.fail(
                "tool", ToolCallError(stop.call.name, stop.call.id, stop.failure.error)
            ) from stop.failure.cause
        else:
            raise self._canceled(stop)

    async def _groups(self) -> _Call | None:
        """Each group approved, then run; the call that stops the run (later groups never start)."""
        for group in _groups(self.calls, self.config.parallel_tool_calls):
            runnable = await self._approve(group)
            if not any(isinstance(c.outcome, ToolCanceled) for c in group):  # a stop at a question runs nothing
                await self._execute_all(runnable)
            stop = next((c for c in group if c.stops_run()), None)
            if stop is not None:
                return stop
        return None

    # --- before a group runs: decode and approval ---------------------------------------------

    async def _approve(self, group: list[_Call]) -> list[_Call]:
        """The calls of ``group`` that are to run; the others are settled as they are asked."""
        runnable = []
        for c in group:
            if await self._prepare(c):
                runnable.append(c)
                continue
            await self._settle(c)
            if isinstance(c.outcome, ToolCanceled):
                break
        return runnable

    async def _prepare(self, c: _Call) -> bool:
        """Decode and approve one call; True when it is to run (else its outcome is set)."""
        if c.tool is None:
            c.outcome = ToolFailed(f"tool {c.call.name!r} is not available in this chat")
            return False
        try:
            c.args = c.tool.decode_args(c.call.args)
        except ModelRetry as retry:
            self.state.tool_calls += 1  # an attempted execution, as when the function rejects them
            c.outcome = retry
            return False
        try:
            answer = await self.hooks.approval(ApprovalRequest(call=c.call, tool=c.tool, args=c.args))
        except (ToolCanceled, ToolFailed) as said:  # ToolFailed: known to fail, never asked
            c.outcome = said
            return False
        except (asyncio.CancelledError, KeyboardInterrupt):
            c.outcome = ToolCanceled(STOPPED_AT_QUESTION)
            return False
        if not answer.approved:
            c.outcome = ToolFailed(denial_text(answer.reason))
        return answer.approved

    # --- running ------------------------------------------------------------------------------

    async def _execute_all(self, runnable: list[_Call]) -> None:
        for c in runnable:
            await self.hooks.event(ToolCallStarted(call=c.call))
        if len(runnable) == 1:
            await self._execute(runnable[0])
        elif runnable:
            await asyncio.gather(*(self._execute(c) for c in runnable))
        for c in runnable:
            if isinstance(c.outcome, KeyboardInterrupt):
                raise c.outcome

    async def _execute(self, c: _Call) -> None:
        assert c.tool is not None
        self.state.tool_calls += 1
        c.started = time.monotonic()

        def output(text: str) -> None:
            c.output.add(text)
            self.hooks.event_now(ToolCallOutput(call=c.call, text=text))

        context = ToolContext(
            call_id=c.call.id,
            tool_name=c.call.name,
            args=c.call.args,
            run_id=self.state.run_id,
            conversation_id=self.state.conversation_id,
            output=output,
            before_change=self._before_change(c.call),
        )
        try:
            c.outcome = await c.tool.call(c.args, context)
        except KeyboardInterrupt as exc:  # a BaseException escaping a child task would
            c.outcome = exc  # bypass the run and stop the event loop itself
            return
        except Exception as exc:
            c.outcome = exc
        await self._settle(c)

    def _before_change(self, call: ToolCall) -> Callable[[Path, bytes | None, bytes], None] | None:
        """The caller's ``before_change`` for this call's tool, when it has one."""
        hook = self.hooks.before_change
        if hook is None:
            return None
        return lambda path, before, after: hook(call, path, before, after)

    # --- outcomes -----------------------------------------------------------------------------

    async def _settle(self, c: _Call) -> None:
        """Record the call's result as soon as it is known, and tell the caller."""
        message = self._conclude(c)
        if message is not None:
            c.result = self.state.stamp(message)
            await self.hooks.event(ToolCallFinished(call=c.call, result=c.result))

    def _conclude(self, c: _Call) -> Message | None:
        """The call's result message from its outcome (None: it stops or fails the run)."""
        outcome = c.outcome
        if isinstance(outcome, ToolResult):
            return self._success(c, outcome)
        if isinstance(outcome, ToolFailed):
            return _failed(c.call, outcome.reason)
        if outcome is None or isinstance(outcome, ToolCanceled | KeyboardInterrupt):
            return None
        if isinstance(outcome, ModelRetry):
            return self._rejection(c, outcome)
        return self._refuse(c, f"the tool failed: {_describe(outcome)}", outcome, outcome)

    def _success(self, c: _Call, result: ToolResult) -> Message | None:
        for j, part in enumerate(result.parts):
            if (err := part_error(part)) is not None:
                problem = f"tool produced an invalid part {j}: {err}"
                return self._refuse(c, problem, problem, ValueError(problem))
        return Message(role=TOOL, content=result.text, parts=list(result.parts), tool_call_id=c.call.id,
                       tool_name=c.call.name)  # fmt: skip

    def _rejection(self, c: _Call, retry: ModelRetry) -> Message | None:
        """Feedback within the tool's budget (counted per response), else a failure."""
        name = c.call.name
        used = self.used.get(name, 0)
        if used < _retry_limit(self.config, c.tool):
            self.rejected.add(name)
            rejection = f"Your tool call was rejected: {retry.reason}. Correct the arguments and call the tool again."
            return Message(role=TOOL, content=rejection, tool_call_id=c.call.id, tool_name=name)
        error: BaseException | str = f"tool failed after {used + 1} attempts: {retry}" if used > 0 else retry
        return self._refuse(
            c, f"Your tool call was rejected again: {error}. Do not call it this way again.", error, retry
        )

    def _refuse(self, c: _Call, answer: str, error: BaseException | str, cause: BaseException) -> Message | None:
        """A call's error: its ``failed`` result saying ``answer`` (``tool_errors="answer"``),
        or the run's failure (None)."""
        if self.config.tool_errors == "answer":
            return _failed(c.call, answer)
        c.failure = _Failure(error, cause)
        return None

    # --- the end of a batch that did not finish -------------------------------------------------

    def _interrupted(self, stop: BaseException) -> RunError:
        """Ctrl-C or cancellation: the results that finished stay, a call still running gets
        its stopped result, the calls that never started wait for repair."""
        self._keep_feedback()
        stopped = next((c.call for c in self.calls if c.result is None), self.calls[-1].call)
        now = time.monotonic()
        for c in self.calls:
            if c.started is not None and c.result is None:
                text = stopped_text(stopped_by(stop), now - c.started, c.output.text())
                c.result = self.state.stamp(_failed(c.call, text))
        self.state.messages.extend(self._results(self.calls))
        return self.state.fail("tool", ToolCallError(stopped.name, stopped.id, "interrupted"), interrupted=True)

    def _canceled(self, stop: _Call) -> RunError:
        """Results before the stopping call stay; every other call is closed with the repair
        text, so the transcript resumes without repair."""
        kept = self._results(self.calls[: self.calls.index(stop)])
        answered = {m.tool_call_id for m in kept}
        closed = [
            self.state.stamp(Message(role=TOOL, content=INTERRUPTED, tool_call_id=c.call.id, tool_name=c.call.name))
            for c in self.calls
            if c.call.id not in answered
        ]
        self.state.messages.extend(kept + closed)
        assert isinstance(stop.outcome, ToolCanceled)
        return self.state.fail("canceled", RunCanceledError(stop.call.name, stop.call.id, stop.outcome.reason))

    def _keep_feedback(self) -> None:
        for name in self.rejected:
            self.state.feedbacks[name] = self.state.feedbacks.get(name, 0) + 1

    @staticmethod
    def _results(calls: Sequence[_Call]) -> list[Message]:
        return [c.result for c in calls if c.result is not None]


def _failed(call: ToolCall, reason: str) -> Message:
    return Message(role=TOOL, content=reason, tool_call_id=call.id, tool_name=call.name, failed=True)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _sequential(c: _Call) -> bool:
    return c.tool is not None and c.tool.sequential


def _groups(calls: list[_Call], parallel: bool) -> list[list[_Call]]:
    """The calls that run together, in call order: consecutive non-sequential ones, a
    sequential one alone."""
    if not parallel:
        return [[c] for c in calls]
    groups: list[list[_Call]] = []
    for c in calls:
        if _sequential(c) or not groups or _sequential(groups[-1][0]):
            groups.append([c])
        else:
            groups[-1].append(c)
    return groups


def _retry_limit(config: RunConfig, tool: Tool | None) -> int:
    assert tool is not None  # a rejection comes from a declared tool: its decoding or its function
    return config.tool_retries if tool.max_retries is None else tool.max_retries
