"""Runs that fail: every RunError stage with its partial evidence (spec §7), the Partial-nil
rule, cancellation (task cancel, Ctrl-C), dropped streams, and resuming from the partial."""

from __future__ import annotations

import asyncio

import pytest
from golem_cli.core.agent import Agent
from golem_cli.core.errors import ModelError, PartialResult, RunCanceledError, RunError, ToolCallError, UsageLimitError
from golem_cli.core.events import ToolCallFinished, ToolCallStarted
from golem_cli.core.history.repair import repair_history
from golem_cli.core.messages import (
    INTERRUPTED,
    INTERRUPTED_REPLY_MARK,
    Message,
    Part,
    ThinkingBlock,
    ToolCall,
    is_interrupted_reply,
    mark_interrupted,
)
from golem_cli.core.model import StreamDone, TextDelta, ToolCallDelta
from golem_cli.core.runconfig import RunHooks
from golem_cli.core.tools import ModelRetry, ToolCanceled, tool
from golem_cli.core.usage import Usage, UsageLimits
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.test_agent_support import assert_valid_request, run, stamps
from tests.scripted import ScriptedModel, Step, call, fail, reply


@tool
def echo() -> str:
    """Echo a fixed reply."""
    return "echoed"


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("tool exploded")


def run_error(coro) -> RunError:
    with pytest.raises(RunError) as info:
        run(coro)
    return info.value


def calls(*specs: tuple[str, str, str], **kwargs) -> Step:
    return Step(tool_calls=[ToolCall(id=i, name=n, args=a) for i, n, a in specs], **kwargs)


def resume_ok(partial: PartialResult, **agent_kwargs) -> ScriptedModel:
    """Feeding the partial back continues the conversation with a valid request."""
    model = ScriptedModel([reply("resumed")])
    result = run(Agent(model, **agent_kwargs).run_with_history(partial.messages, "next"))
    assert result.output == "resumed"
    assert_valid_request(model.requests[0])
    assert result.conversation_id == partial.conversation_id
    return model


# --- model stage ------------------------------------------------------------------------------


def test_model_failure_after_a_tool_turn_keeps_the_turn():
    model = ScriptedModel([call("echo", usage=Usage(input_tokens=11, output_tokens=4)), fail("provider gone")])
    err = run_error(Agent(model, tools=[echo]).run_with_history([], "go", run_id="R", conversation_id="C"))
    assert err.stage == "model" and str(err) == "golem: model stage: provider gone"
    assert isinstance(err.cause, ModelError) and err.__cause__ is err.cause
    p = err.partial
    assert isinstance(p, PartialResult)
    assert [m.role for m in p.messages] == ["user", "assistant", "tool"]
    assert (p.usage, p.requests, p.tool_calls, p.finish_reason) == (Usage(input_tokens=11, output_tokens=4), 2, 1, "tool_call")
    assert (p.run_id, p.conversation_id, err.run_id, err.conversation_id) == ("R", "C", "R", "C")
    assert p.new_messages == p.messages and p.sent_messages == 0
    assert not err.interrupted
    resume_ok(p, tools=[echo])


def test_partial_is_none_when_nothing_happened():
    err = run_error(Agent(ScriptedModel([fail("nothing ran")])).run_with_history([], "go"))
    assert err.stage == "model" and err.partial is None
    # a user-only supplied history changes nothing
    history = [Message(role="user", content="earlier")]
    assert run_error(Agent(ScriptedModel([fail("x")])).run_with_history(history, "go")).partial is None


def test_an_assistant_turn_in_supplied_history_makes_partial_non_nil():
    history = [Message(role="user", content="q"), Message(role="assistant", content="a")]
    err = run_error(Agent(ScriptedModel([fail("x")])).run_with_history(history, "go"))
    assert err.partial is not None
    assert [m.content for m in err.partial.messages] == ["q", "a", "go"]
    assert [m.content for m in err.partial.new_messages] == ["go"]
    assert err.partial.requests == 1 and err.partial.usage == Usage()


def test_usage_alone_makes_partial_non_nil():
    # a usage-limit crossing on a text reply: usage and an assistant turn
    limits = UsageLimits(input_tokens=50)
    err = run_error(Agent(ScriptedModel([reply("long answer", usage=Usage(input_tokens=100, output_tokens=0))]), usage_limits=limits).run_with_history([], "go"))
    assert err.partial is not None


def test_an_exception_from_on_delta_fails_at_the_model_stage_keeping_streamed_text():
    def on_delta(text: str) -> None:
        raise ValueError("terminal closed")

    err = run_error(Agent(ScriptedModel([Step(text="hello there", chunk=5)])).run_stream_with_history([], "go", hooks=RunHooks(on_delta=on_delta)))
    assert err.stage == "model" and str(err) == "golem: model stage: terminal closed" and not err.interrupted
    assert err.partial.messages[-1].content == mark_interrupted("hello")


# --- tool stage -------------------------------------------------------------------------------


def test_tool_failure_keeps_evidence_through_the_requesting_turn():
    model = ScriptedModel([calls(("c1", "echo", "{}"), ("c2", "explode", "{}"), usage=Usage(input_tokens=7, output_tokens=3))])
    err = run_error(Agent(model, tools=[echo, explode]).run_with_history([], "go"))
    assert err.stage == "tool"
    assert str(err) == 'golem: tool stage: runner: tool "explode" (call "c2"): tool exploded'
    assert isinstance(err.cause, ToolCallError) and isinstance(err.cause.error, RuntimeError)
    assert err.__cause__ is err.cause.error  # the original exception stays reachable
    p = err.partial
    assert [m.role for m in p.messages] == ["user", "assistant"]  # none of the batch's results
    assert (p.requests, p.tool_calls) == (1, 2)
    resumed = resume_ok(p, tools=[echo])
    closings = [m for m in resumed.requests[0].messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content, m.run_id) for m in closings] == [("c1", INTERRUPTED, ""), ("c2", INTERRUPTED, "")]


def test_undeclared_tool_fails_without_executing_anything():
    model = ScriptedModel([calls(("c1", "echo", "{}"), ("c2", "nope", "{}"))])
    err = run_error(Agent(model, tools=[echo]).run_with_history([], "go"))
    assert str(err) == 'golem: tool stage: runner: tool "nope" (call "c2"): tool was not declared for this run'
    assert err.partial.tool_calls == 0 and err.partial.messages[-1].tool_calls[1].name == "nope"


def test_retry_budget_exhausted_fails_at_the_tool_stage():
    @tool
    def picky() -> str:
        raise ModelRetry("wrong")

    model = ScriptedModel([call("picky", id="a"), call("picky", id="b")])
    err = run_error(Agent(model, tools=[picky], tool_retries=1).run_with_history([], "go"))
    assert str(err) == 'golem: tool stage: runner: tool "picky" (call "b"): tool failed after 2 attempts: wrong'
    assert [m.role for m in err.partial.messages] == ["user", "assistant", "tool", "assistant"]
    err = run_error(Agent(ScriptedModel([call("picky", id="a")]), tools=[picky], tool_retries=0).run_with_history([], "go"))
    assert str(err) == 'golem: tool stage: runner: tool "picky" (call "a"): wrong'


def test_invalid_tool_part_and_timeout_fail_at_the_tool_stage():
    @tool
    def bad_part() -> Part:
        return Part(kind="image")

    err = run_error(Agent(ScriptedModel([call("bad_part", id="p")]), tools=[bad_part]).run_with_history([], "go"))
    assert str(err) == (
        'golem: tool stage: runner: tool "bad_part" (call "p"): '
        "tool produced an invalid part 0: model: image part has neither a URL nor inline data"
    )

    @tool(timeout=0.01)
    async def hang() -> str:
        await asyncio.sleep(5)
        return "late"

    err = run_error(Agent(ScriptedModel([call("hang", id="h")]), tools=[hang]).run_with_history([], "go"))
    assert str(err) == 'golem: tool stage: runner: tool "hang" (call "h"): tool timed out after 0.01s'
    assert err.partial.tool_calls == 1


# --- loop, usage and decode stages ----------------------------------------------------------


def test_turn_limit_keeps_every_completed_round():
    model = ScriptedModel([call("echo", usage=Usage(input_tokens=5, output_tokens=2)), call("echo")])
    err = run_error(Agent(model, tools=[echo], max_turns=1).run_with_history([], "go"))
    assert str(err) == "golem: loop stage: runner: model turn limit exceeded after 1 turns"
    assert [m.role for m in err.partial.messages] == ["user", "assistant", "tool"]
    assert err.partial.tool_calls == 1 and len(model.requests) == 1
    resume_ok(err.partial, tools=[echo])


@pytest.mark.parametrize(
    ("limits", "text"),
    [
        (UsageLimits(input_tokens=50), "run exceeded the input token limit of 50 (used 100)"),
        (UsageLimits(output_tokens=5), "run exceeded the output token limit of 5 (used 7)"),
        (UsageLimits(total_tokens=100), "run exceeded the total token limit of 100 (used 107)"),
    ],
)
def test_usage_limits_keep_the_crossing_response(limits, text):
    model = ScriptedModel([reply("a very long answer", usage=Usage(input_tokens=100, output_tokens=7))])
    err = run_error(Agent(model, usage_limits=limits).run_with_history([], "go"))
    assert err.stage == "usage" and str(err) == f"golem: usage stage: {text}"
    assert isinstance(err.cause, UsageLimitError)
    assert [m.content for m in err.partial.messages] == ["go", "a very long answer"]
    assert err.partial.usage.input_tokens == 100 and err.partial.requests == 1


def test_request_and_tool_call_limits():
    model = ScriptedModel([call("echo"), call("echo"), reply("x")])
    err = run_error(Agent(model, tools=[echo], usage_limits=UsageLimits(requests=1)).run_with_history([], "go"))
    assert str(err) == "golem: usage stage: run exceeded the request limit of 1 (used 2)"
    model = ScriptedModel([calls(("a", "echo", "{}"), ("b", "echo", "{}")), reply("x")])
    err = run_error(Agent(model, tools=[echo], usage_limits=UsageLimits(tool_calls=1)).run_with_history([], "go"))
    assert str(err) == "golem: usage stage: run exceeded the tool call limit of 1 (used 2)"
    assert [m.role for m in err.partial.messages] == ["user", "assistant", "tool", "tool"]


class Counter:
    """A token counter from a function of the messages."""

    def __init__(self, func):
        self.count = func


def test_per_request_bound_is_checked_before_sending():
    model = ScriptedModel([reply("never")])
    counter = Counter(lambda messages: 1000)
    agent = Agent(model, usage_limits=UsageLimits(per_request_input_tokens=10), token_counter=counter)
    err = run_error(agent.run_with_history([], "go"))
    assert str(err) == "golem: usage stage: run exceeded the per-request input token limit of 10 (used 1000)"
    assert model.requests == [] and err.partial is None

    def broken(messages):
        raise RuntimeError("tokenizer missing")

    agent = Agent(model, usage_limits=UsageLimits(per_request_input_tokens=10), token_counter=Counter(broken))
    err = run_error(agent.run_with_history([], "go"))
    assert str(err) == "golem: model stage: golem: token count failed before request: tokenizer missing"


def test_decode_failure_keeps_the_rejected_response_and_corrections_accumulate():
    def never(text: str) -> str:
        raise ValueError("unparseable")

    err = run_error(Agent(ScriptedModel([reply("not a number", usage=Usage(input_tokens=6, output_tokens=5))]), output_validator=never).run_with_history([], "go"))
    assert str(err) == "golem: decode stage: unparseable"
    assert [m.content for m in err.partial.messages] == ["go", "not a number"]

    def picky(text: str) -> str:
        raise ModelRetry("try again")

    model = ScriptedModel([reply("first try", usage=Usage(input_tokens=10, output_tokens=3)), fail("provider gone mid-correction")])
    err = run_error(Agent(model, output_validator=picky, output_retries=1).run_with_history([], "go"))
    assert err.stage == "model" and err.partial.requests == 2 and err.partial.usage.input_tokens == 10
    assert [m.role for m in err.partial.messages] == ["user", "assistant", "user"]
    model = ScriptedModel([reply("one"), reply("two")])
    err = run_error(Agent(model, output_validator=picky, output_retries=1).run_with_history([], "go"))
    assert str(err) == "golem: decode stage: golem: output failed validation after 2 attempts: try again"
    assert len(err.partial.messages) == 4


# --- canceled stage ---------------------------------------------------------------------------


def test_tool_cancel_closes_the_batch_so_no_repair_is_needed():
    log: list[str] = []

    @tool
    async def work(name: str) -> str:
        log.append(name)
        await asyncio.sleep(0.01)
        return f"{name} done"

    @tool
    async def stop(reason: str) -> str:
        log.append("stop")
        raise ToolCanceled(reason)

    @tool(sequential=True)
    def later() -> str:
        log.append("later")
        return "never"

    model = ScriptedModel(
        [
            calls(
                ("c1", "work", '{"name": "a"}'),
                ("c2", "stop", '{"reason": "user said stop"}'),
                ("c3", "work", '{"name": "b"}'),
                ("c4", "later", "{}"),
            )
        ]
    )
    err = run_error(Agent(model, tools=[work, stop, later]).run_with_history([], "go", run_id="R", conversation_id="C"))
    assert err.stage == "canceled" and not err.interrupted
    assert str(err) == 'golem: canceled stage: runner: tool "stop" (call "c2") canceled the run: user said stop'
    assert isinstance(err.cause, RunCanceledError) and err.cause.reason == "user said stop"
    assert sorted(log) == ["a", "b", "stop"]  # the parallel sibling ran; the later group never started
    results = [(m.tool_call_id, m.content) for m in err.partial.messages if m.role == "tool"]
    assert results == [("c1", "a done"), ("c2", INTERRUPTED), ("c3", INTERRUPTED), ("c4", INTERRUPTED)]
    assert all(s == ("R", "C") for s in stamps(err.partial.messages))
    assert repair_history(err.partial.messages) == err.partial.messages  # resumes with zero repair
    assert err.partial.tool_calls == 3
    resumed = resume_ok(err.partial, tools=[work, stop, later])
    assert resumed.requests[0].messages[:-1] == err.partial.messages


# --- interruption: task cancellation and Ctrl-C ---------------------------------------------


SLOW_REPLY = Step(
    text="The answer is forty-two, as everyone knows.",
    tool_calls=[ToolCall(id="c1", name="echo", args='{"text": "a long argument"}')],
    chunk=4,
    delay=0.01,
)


def test_task_cancellation_mid_stream_keeps_text_and_the_cut_tool_call():
    history = [Message(role="user", content="earlier"), Message(role="assistant", content="before")]
    seen: list[object] = []

    async def scenario() -> RunError:
        model = ScriptedModel([SLOW_REPLY])
        task = asyncio.create_task(
            Agent(model, tools=[echo]).run_stream_with_history(history, "go", hooks=RunHooks(on_event=seen.append))
        )
        while sum(type(e).__name__ == "ToolCallDelta" for e in seen) < 2:
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(RunError) as info:
            await task
        return info.value

    err = run(scenario())
    assert err.stage == "model" and err.interrupted and str(err) == "golem: model stage: canceled"
    assert isinstance(err.__cause__, asyncio.CancelledError)
    cut = err.partial.messages[-1]
    assert cut.role == "assistant" and is_interrupted_reply(cut)
    assert cut.content == mark_interrupted("The answer is forty-two, as everyone knows.")
    assert len(cut.tool_calls) == 1 and cut.tool_calls[0].id == "c1"
    args = cut.tool_calls[0].args
    assert '{"text": "a long argument"}'.startswith(args) and len(args) < len('{"text": "a long argument"}')
    assert (cut.run_id, cut.conversation_id) == (err.partial.run_id, err.partial.conversation_id)
    assert [m.content for m in err.partial.new_messages][:1] == ["go"] and err.partial.sent_messages == 2
    resumed = resume_ok(err.partial, tools=[echo])
    sent = resumed.requests[0].messages
    assert sent[3] == cut  # the cut call stays verbatim ...
    assert sent[4] == Message(role="tool", content=INTERRUPTED, tool_call_id="c1", tool_name="echo")  # ... and is closed


def test_ctrl_c_from_on_delta_keeps_what_arrived():
    got: list[str] = []

    def on_delta(text: str) -> None:
        got.append(text)
        if len(got) == 3:
            raise KeyboardInterrupt

    err = run_error(Agent(ScriptedModel([SLOW_REPLY]), tools=[echo]).run_stream_with_history([], "go", hooks=RunHooks(on_delta=on_delta)))
    assert err.stage == "model" and err.interrupted and str(err) == "golem: model stage: interrupted"
    assert isinstance(err.__cause__, KeyboardInterrupt)
    assert err.partial.messages[-1].content == mark_interrupted("".join(got))
    assert err.partial.messages[-1].tool_calls == []  # the calls had not started streaming
    resume_ok(err.partial)


def test_interruption_before_anything_arrived_still_keeps_the_prompt():
    async def scenario() -> RunError:
        model = ScriptedModel([Step(text="slow", delay=1.0)])
        task = asyncio.create_task(Agent(model).run_stream_with_history([], "my carefully typed prompt"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(RunError) as info:
            await task
        return info.value

    err = run(scenario())
    assert err.interrupted and err.stage == "model"
    assert err.partial is not None  # unlike Go's nil rule: the caller keeps the prompt
    assert [m.content for m in err.partial.messages] == ["my carefully typed prompt"]
    assert err.partial.new_messages == err.partial.messages
    resume_ok(err.partial)


def test_cancellation_of_a_non_streamed_request():
    async def scenario() -> RunError:
        task = asyncio.create_task(Agent(ScriptedModel([Step(text="x", delay=1.0)])).run_with_history([], "go"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(RunError) as info:
            await task
        return info.value

    err = run(scenario())
    assert err.interrupted and err.stage == "model" and [m.content for m in err.partial.messages] == ["go"]


def test_ctrl_c_inside_a_tool_fails_at_the_tool_stage():
    @tool
    async def interrupted_tool() -> str:
        raise KeyboardInterrupt

    model = ScriptedModel([calls(("c1", "echo", "{}"), ("c2", "interrupted_tool", "{}"))])
    err = run_error(Agent(model, tools=[echo, interrupted_tool]).run_stream_with_history([], "go"))
    assert err.stage == "tool" and err.interrupted
    assert str(err) == 'golem: tool stage: runner: tool "interrupted_tool" (call "c2"): interrupted'
    # c1 finished before the stop: it ran, so its result is evidence and stays (stamped);
    # c2 had started: its result says it was stopped (never that it did not run)
    assert [m.role for m in err.partial.messages] == ["user", "assistant", "tool", "tool"]
    kept, stopped = err.partial.messages[-2:]
    assert kept.tool_call_id == "c1" and kept.content != INTERRUPTED and kept.run_id == err.run_id
    assert stopped.tool_call_id == "c2" and stopped.failed and stopped.content.startswith("The call was stopped by ")
    resumed = resume_ok(err.partial, tools=[echo])
    closings = [m for m in resumed.requests[0].messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content == INTERRUPTED) for m in closings] == [("c1", False), ("c2", False)]


def test_task_cancellation_during_a_tool_batch():
    started = asyncio.Event

    async def scenario() -> RunError:
        began = started()

        @tool
        async def wait_forever() -> str:
            began.set()
            await asyncio.sleep(10)
            return "never"

        model = ScriptedModel([call("wait_forever", id="w")])
        task = asyncio.create_task(Agent(model, tools=[wait_forever]).run_with_history([], "go"))
        await began.wait()
        task.cancel()
        with pytest.raises(RunError) as info:
            await task
        return info.value

    err = run(scenario())
    assert err.stage == "tool" and err.interrupted and err.partial.tool_calls == 1
    assert str(err) == 'golem: tool stage: runner: tool "wait_forever" (call "w"): interrupted'


# --- dropped streams ----------------------------------------------------------------------------


def test_dropped_stream_keeps_partial_text_and_a_cut_tool_call():
    step = Step(
        text="Checking the weather",
        thinking=[ThinkingBlock(text="unsigned half thought")],
        tool_calls=[ToolCall(id="w1", name="echo", args='{"city": "Paris"}')],
        chunk=6,
        cut_after=10,
        error=ModelError("connection reset by peer", status=None),
    )
    err = run_error(Agent(ScriptedModel([step]), tools=[echo]).run_stream_with_history([], "weather?"))
    assert err.stage == "model" and not err.interrupted
    assert str(err) == "golem: model stage: connection reset by peer"
    cut = err.partial.messages[-1]
    assert cut.content == mark_interrupted("Checking the weather")
    assert cut.content.endswith(INTERRUPTED_REPLY_MARK)
    assert cut.tool_calls == [ToolCall(id="w1", name="echo", args='{"city": "Pa')]
    assert cut.thinking == []  # a half-received reasoning block has no signature yet: dropped
    assert err.partial.requests == 1 and err.partial.usage == Usage()
    resumed = resume_ok(err.partial, tools=[echo])
    assert resumed.requests[0].messages[1].tool_calls[0].args == '{"city": "Pa'  # never rewritten


def test_dropped_stream_before_any_delta_follows_the_nil_rule():
    err = run_error(Agent(ScriptedModel([Step(text="abc", cut_after=0)])).run_stream_with_history([], "go"))
    assert err.stage == "model" and err.partial is None


def test_stream_ending_without_a_final_response_is_a_model_error():
    class Truncating:
        name = "x:truncating"

        async def request(self, request):
            raise NotImplementedError

        async def stream(self, request):
            yield TextDelta(text="half an ans")

    err = run_error(Agent(Truncating()).run_stream_with_history([], "go"))  # type: ignore[arg-type]
    assert str(err) == "golem: model stage: model: stream ended before the response was complete"
    assert err.partial.messages[-1].content == mark_interrupted("half an ans")


def test_resume_chain_after_repeated_interruptions_stays_valid():
    """Interrupt, resume, interrupt again: every request stays valid and nothing repeats."""
    messages: list[Message] = []
    for round_ in range(3):
        step = Step(text=f"round {round_} answer", tool_calls=[ToolCall(id=f"c{round_}", name="echo", args='{"x": 1}')],
                    chunk=3, cut_after=7)  # fmt: skip
        model = ScriptedModel([step])
        err = run_error(Agent(model, tools=[echo]).run_stream_with_history(messages, f"prompt {round_}"))
        assert_valid_request(model.requests[0])
        messages = err.partial.messages
    closings = [m for m in repair_history(messages) if m.role == "tool"]
    assert [m.tool_call_id for m in closings] == ["c0", "c1", "c2"]


def test_a_real_sigint_under_asyncio_run_becomes_an_interrupted_run_error():
    """Ctrl-C in a terminal: asyncio.run turns SIGINT into cancelling the main task; the run
    converts that into RunError(interrupted=True) with the streamed text kept."""
    import signal

    got: list[str] = []

    def on_delta(text: str) -> None:
        got.append(text)
        if len(got) == 2:
            signal.raise_signal(signal.SIGINT)

    model = ScriptedModel([Step(text="one two three four five six", chunk=4, delay=0.01)])
    # asyncio.run handles SIGINT only over Python's default handler, which a process started
    # in the background (SIGINT ignored) does not have: install it as a terminal would.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(RunError) as info:
            asyncio.run(Agent(model).run_stream_with_history([], "go", hooks=RunHooks(on_delta=on_delta)))
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # asyncio.run restored it
    finally:
        signal.signal(signal.SIGINT, previous)
    err = info.value
    assert err.interrupted and err.stage == "model"
    assert err.partial.messages[-1].content == mark_interrupted("".join(got))


@settings(max_examples=80)
@given(
    text=st.text(max_size=30),
    args=st.sampled_from(['{"text": "hello"}', '{"text": "a\\u00e9 <b>"}', "{}", '{"a": [1, 2, {"b": null}]}']),
    chunk=st.integers(1, 7),
    cut_at=st.integers(0, 40),
    second_turn=st.booleans(),
    how=st.sampled_from(["drop", "ctrl-c"]),
)
def test_any_cut_point_leaves_a_resumable_partial(text, args, chunk, cut_at, second_turn, how):
    """Wherever a stream dies (dropped after N deltas, or Ctrl-C raised from on_event at the
    N-th delta), the partial keeps exactly what arrived and the next run sends a valid
    request. With ``second_turn`` the cut hits the turn after a completed tool round."""
    step = Step(text=text, tool_calls=[ToolCall(id="k1", name="echo", args=args)], chunk=chunk)
    events = step.events()
    seen = {"done": 0, "deltas": 0}

    def on_event(event: object) -> None:
        if isinstance(event, StreamDone):
            seen["done"] += 1
        elif not isinstance(event, ToolCallStarted | ToolCallFinished) and seen["done"] == int(second_turn):
            seen["deltas"] += 1
            if how == "ctrl-c" and seen["deltas"] == cut_at:
                raise KeyboardInterrupt

    cut_step = Step(text=text, tool_calls=step.tool_calls, chunk=chunk, cut_after=cut_at) if how == "drop" else step
    model = ScriptedModel([*([call("echo", id="first")] if second_turn else []), cut_step, reply("end")])
    try:
        run(Agent(model, tools=[echo]).run_stream_with_history([], "go", hooks=RunHooks(on_event=on_event)))
    except RunError as err:
        partial = err.partial
        assert err.interrupted == (how == "ctrl-c")
    else:
        assert how == "ctrl-c" and (cut_at == 0 or cut_at > len(events))  # no cut happened
        return
    delivered = events[:cut_at]
    if not delivered and not second_turn:
        assert partial is None  # a drop before anything arrived: Go's nil rule
        return
    last = partial.messages[-1]
    if delivered:
        assert last.role == "assistant"
        assert last.content == mark_interrupted("".join(e.text for e in delivered if isinstance(e, TextDelta)))
        if any(isinstance(e, ToolCallDelta) for e in delivered):
            cut_args = "".join(e.args for e in delivered if isinstance(e, ToolCallDelta))
            assert last.tool_calls == [ToolCall(id="k1", name="echo", args=cut_args)]
        else:
            assert last.tool_calls == []
    else:
        assert (last.role, last.tool_call_id) == ("tool", "first")
    resume_ok(partial, tools=[echo])
