"""Agent runs that succeed: request assembly, instructions, identity, stamping, processors,
validation, tools, usage and streaming (spec §5, §6, §8)."""

from __future__ import annotations

import asyncio
import time

import pytest
from golem_cli.core.agent import Agent, RunResult, resolve_instructions
from golem_cli.core.errors import GolemError, HistoryProcessorError, HistoryValidationError, ModelError, RunError
from golem_cli.core.history.processors import budget_history, trim_history
from golem_cli.core.history.repair import repair_history
from golem_cli.core.history.validate import validate_run_input
from golem_cli.core.ids import is_uuid7
from golem_cli.core.messages import INTERRUPTED, Message, Part, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelSettings, TextDelta, ThinkingDelta, ToolCallDelta
from golem_cli.core.offline import EchoModel
from golem_cli.core.retry import RetryPolicy
from golem_cli.core.runconfig import RunHooks
from golem_cli.core.tokens import EstimatingCounter
from golem_cli.core.tools import ModelRetry, Tool, ToolContext, ToolFailed, tool
from golem_cli.core.usage import Usage
from hypothesis import given, settings
from msgspec.structs import replace

from tests.core.strategies import HISTORIES
from tests.core.test_agent_support import assert_valid_request, run, stamps
from tests.scripted import ScriptedModel, Step, call, fail, reply


@tool
def echo(text: str = "") -> str:
    """Echo the text back."""
    return f"echo:{text}"


def calls(*specs: tuple[str, str, str], **kwargs) -> Step:
    return Step(tool_calls=[ToolCall(id=i, name=n, args=a) for i, n, a in specs], **kwargs)


# --- request assembly and instructions (spec §8) ------------------------------------------


def test_request_is_instructions_then_repaired_history_without_system_then_prompt():
    history = [
        Message(role="system", content="old instructions"),
        Message(role="user", content="q1"),
        Message(role="assistant", tool_calls=[ToolCall(id="c1", name="echo", args="{}")]),
        Message(role="system", content="mid-history system prompt"),
        Message(role="tool", content="orphan", tool_call_id="zz", tool_name="echo"),
        Message(role="assistant", content="a1"),
    ]
    model = ScriptedModel([reply("done")])
    result = run(Agent(model, instructions="Be brief.").run_with_history(history, "q2", run_id="r", conversation_id="c"))
    sent = model.requests[0].messages
    assert sent == [
        Message(role="system", content="Be brief."),
        history[1],
        history[2],
        Message(role="tool", content=INTERRUPTED, tool_call_id="c1", tool_name="echo"),
        history[5],
        Message(role="user", content="q2", run_id="r", conversation_id="c"),
    ]
    assert_valid_request(model.requests[0], "Be brief.")
    assert result.messages == [*sent, Message(role="assistant", content="done", run_id="r", conversation_id="c")]
    assert result.sent_messages == 4
    assert result.new_messages == result.messages[5:]


def test_no_instructions_means_no_system_message_and_empty_prompt_is_still_sent():
    model = ScriptedModel([reply("ok")])
    run(Agent(model).run_with_history([Message(role="system", content="x")], ""))
    assert [m.role for m in model.requests[0].messages] == ["user"]
    assert model.requests[0].messages[0].content == ""


@pytest.mark.parametrize(
    ("static", "dynamic", "want"),
    [("S", "", "S"), ("", "D", "D"), ("S", "D", "S\n\nD"), ("", "", ""), (" S ", " ", " S \n\n ")],
)
def test_instructions_join(static, dynamic, want):
    assert resolve_instructions(static, dynamic) == want
    model = ScriptedModel([reply("ok")])
    run(Agent(model, instructions=static, instructions_func=lambda: dynamic).run_with_history([], "hi"))
    first = model.requests[0].messages[0]
    if want:
        assert first == Message(role="system", content=want)
    else:
        assert first.role == "user"


def test_dynamic_instructions_are_evaluated_once_per_run_and_may_be_async():
    evaluations = []

    async def dynamic() -> str:
        evaluations.append(1)
        return f"call #{len(evaluations)}"

    model = ScriptedModel([call("echo"), reply("done"), reply("again")])
    agent = Agent(model, instructions="Static.", instructions_func=dynamic, tools=[echo])
    first = run(agent.run_with_history([], "hi"))
    assert len(evaluations) == 1  # two model turns, one evaluation
    assert all(r.messages[0].content == "Static.\n\ncall #1" for r in model.requests)
    second = run(agent.run_with_history(first.messages, "more"))
    assert model.requests[2].messages[0].content == "Static.\n\ncall #2"
    # the previous run's instructions message was replaced, not kept or duplicated
    assert [m.role for m in model.requests[2].messages].count("system") == 1
    assert second.messages[0].content == "Static.\n\ncall #2"


# --- identity (spec §6) ---------------------------------------------------------------------


def test_fresh_run_mints_uuid7_identity_and_explicit_values_win():
    result = run(Agent(ScriptedModel([reply("ok")])).run_with_history([], "hi"))
    assert is_uuid7(result.run_id) and is_uuid7(result.conversation_id)
    assert result.run_id != result.conversation_id
    history = [Message(role="user", content="x", conversation_id="from-history")]
    pinned = run(Agent(ScriptedModel([reply("ok")])).run_with_history(history, "y", run_id="R", conversation_id="C"))
    assert (pinned.run_id, pinned.conversation_id) == ("R", "C")
    assert stamps(pinned.new_messages) == [("R", "C"), ("R", "C")]


def test_conversation_id_comes_from_the_last_message_carrying_one():
    history = [
        Message(role="user", content="1", conversation_id="older", run_id="r0"),
        Message(role="assistant", content="2", conversation_id="newer", run_id="r1"),
        Message(role="user", content="3"),  # no identity: skipped
    ]
    result = run(Agent(ScriptedModel([reply("ok")])).run_with_history(history, "4"))
    assert result.conversation_id == "newer"
    assert result.run_id not in ("r0", "r1") and is_uuid7(result.run_id)  # never inherited


def test_conversation_id_is_resolved_from_the_processed_history():
    history = [
        Message(role="user", content="1", conversation_id="kept"),
        Message(role="assistant", content="2", conversation_id="trimmed-away"),
    ]
    processed = run(
        Agent(ScriptedModel([reply("ok")]), history_processor=lambda h: h[:1]).run_with_history(history, "3")
    )
    assert processed.conversation_id == "kept"
    emptied = run(Agent(ScriptedModel([reply("ok")]), history_processor=lambda h: []).run_with_history(history, "3"))
    assert emptied.conversation_id not in ("kept", "trimmed-away") and is_uuid7(emptied.conversation_id)


def test_chained_runs_share_the_conversation_and_fork_with_a_new_id():
    agent = Agent(EchoModel())
    first = run(agent.run_with_history([], "hi"))
    second = run(agent.run_with_history(first.messages, "and then?"))
    assert second.conversation_id == first.conversation_id and second.run_id != first.run_id
    fork = run(agent.run_with_history(first.messages, "fork", conversation_id="forked"))
    assert fork.conversation_id == "forked"
    assert stamps(fork.messages[: len(first.messages)]) == stamps(first.messages)  # history untouched


def test_stamping_table():
    """§6.3: stamped = prompt, assistant responses, tool results (success, failed, retry
    rejection), decode corrections; not = instructions, supplied history, repair results."""
    attempts = []

    @tool
    def flaky(n: int) -> str:
        attempts.append(n)
        if n < 1:
            raise ModelRetry("n must be positive")
        return str(n)

    @tool
    def broken() -> str:
        raise ToolFailed("disk full")

    other = Message(role="user", content="from another conversation", run_id="old-run", conversation_id="old-conv")
    dangling = Message(role="assistant", tool_calls=[ToolCall(id="d1", name="flaky", args="{}")], run_id="old-run")
    model = ScriptedModel(
        [
            calls(("c1", "flaky", '{"n": 0}'), ("c2", "broken", "{}")),
            calls(("c3", "flaky", '{"n": 2}')),
            reply("not a number"),
            reply("42"),
        ]
    )

    def validate(text: str) -> int:
        if not text.isdigit():
            raise ModelRetry("answer with digits")
        return int(text)

    agent = Agent(model, instructions="I", tools=[flaky, broken], output_validator=validate, output_retries=1)
    result = run(agent.run_with_history([other, dangling], "go", run_id="R", conversation_id="C"))
    assert result.output == 42
    by_content = {(m.role, m.content, m.tool_call_id): (m.run_id, m.conversation_id) for m in result.messages}
    mine, none = ("R", "C"), ("", "")
    assert by_content[("system", "I", "")] == none
    assert by_content[("user", "from another conversation", "")] == ("old-run", "old-conv")
    assert result.messages[2] == dangling  # supplied history passes through as it was
    call_turns = [m for m in result.messages[3:] if m.role == "assistant" and m.tool_calls]
    assert len(call_turns) == 2 and all((m.run_id, m.conversation_id) == mine for m in call_turns)
    assert by_content[("tool", INTERRUPTED, "d1")] == none  # repair-synthesized
    assert by_content[("user", "go", "")] == mine
    rejection = "Your tool call was rejected: n must be positive. Correct the arguments and call the tool again."
    assert by_content[("tool", rejection, "c1")] == mine
    assert by_content[("tool", "disk full", "c2")] == mine
    assert by_content[("tool", "2", "c3")] == mine
    correction = "Your previous response was rejected: answer with digits. Correct it and respond again."
    assert by_content[("user", correction, "")] == mine
    assert by_content[("assistant", "not a number", "")] == mine
    assert by_content[("assistant", "42", "")] == mine
    assert all(s == mine for s in stamps(result.new_messages))
    failed = next(m for m in result.messages if m.tool_call_id == "c2")
    assert failed.failed is True
    assert attempts == [0, 2]


# --- processor and validation (spec §1.3, §5) ---------------------------------------------


def test_processor_sees_exactly_the_supplied_history_and_its_output_is_sent():
    seen = []

    def processor(history: list[Message]) -> list[Message]:
        seen.append(list(history))
        history.append(Message(role="user", content="processor mutated its copy"))
        return history[-3:]

    history = [Message(role="user", content=str(i)) for i in range(5)]
    original = list(history)
    model = ScriptedModel([reply("ok")])
    result = run(Agent(model, history_processor=processor).run_with_history(history, "p"))
    assert seen == [original] and history == original
    assert [m.content for m in model.requests[0].messages] == ["3", "4", "processor mutated its copy", "p"]
    assert result.sent_messages == 3
    run(Agent(ScriptedModel([reply("ok")]), history_processor=processor).run_with_history([], "p"))
    assert seen[-1] == []  # a plain run hands the processor an empty history
    none_model = ScriptedModel([reply("ok")])
    run(Agent(none_model, history_processor=lambda h: None).run_with_history(history, "p"))  # type: ignore[arg-type,return-value]
    assert [m.content for m in none_model.requests[0].messages] == ["p"]


def test_trim_processor_bounds_what_is_sent_and_new_messages_are_what_to_store():
    history = []
    for i in range(10):
        history += [Message(role="user", content=f"u{i}"), Message(role="assistant", content=f"a{i}")]
    model = ScriptedModel([reply("fresh")])
    result = run(Agent(model, history_processor=trim_history(4)).run_with_history(history, "now"))
    assert [m.content for m in model.requests[0].messages] == ["u8", "a8", "u9", "a9", "now"]
    assert result.sent_messages == 4
    assert [m.content for m in result.new_messages] == ["now", "fresh"]
    stored = history + result.new_messages  # what the CLI appends to its full file
    assert len(stored) == 22


@pytest.mark.parametrize(
    ("processor", "text"),
    [
        (trim_history(0), "golem: history processor: golem: TrimHistory budget must be at least 1, got 0"),
        (
            budget_history(EstimatingCounter(), 10),
            "golem: history processor: golem: BudgetHistory left no messages; history of 0 messages "
            "has no turn that can open a request",
        ),
        (lambda h: 1 / 0, "golem: history processor: division by zero"),
    ],
)
def test_processor_errors_are_plain_errors_before_any_model_call(processor, text):
    model = ScriptedModel([reply("never")])
    with pytest.raises(HistoryProcessorError) as info:
        run(Agent(model, history_processor=processor).run_with_history([], "hi"))
    assert str(info.value) == text
    assert not isinstance(info.value, RunError)
    assert model.requests == []


def test_budget_processor_keeps_the_newest_turns_within_budget():
    history = [Message(role="user", content="long " * 200), Message(role="assistant", content="ok")]
    history += [Message(role="user", content="short"), Message(role="assistant", content="fine")]
    counter = EstimatingCounter()
    model = ScriptedModel([reply("ok")])
    agent = Agent(model, history_processor=budget_history(counter, counter.count(history[2:])))
    run(agent.run_with_history(history, "next"))
    assert [m.content for m in model.requests[0].messages] == ["short", "fine", "next"]


def test_validation_runs_on_the_processed_history_before_any_model_call():
    bad = [Message(role="user", content="ok"), Message(role="assistant", parts=[Part(kind="image", url="https://x")])]
    model = ScriptedModel([reply("never")])
    with pytest.raises(HistoryValidationError) as info:
        run(Agent(model).run_with_history(bad, "hi"))
    assert str(info.value) == "golem: history message 1: parts are only supported on user and tool messages"
    with pytest.raises(HistoryValidationError) as info:
        run(Agent(model, history_processor=lambda h: h[1:]).run_with_history(bad, "hi"))
    assert str(info.value).startswith("golem: history message 0:")  # processed indices
    with pytest.raises(HistoryValidationError, match=r'^golem: prompt part 0: model: unsupported part kind "x"$'):
        run(Agent(model).run_with_history([], "hi", parts=[Part(kind="x", url="https://x")]))
    assert model.requests == []
    run(Agent(model, history_processor=lambda h: h[:1]).run_with_history(bad, "hi"))  # trimmed away: fine
    assert len(model.requests) == 1


def test_prompt_parts_ride_the_prompt():
    image = Part(kind="image", data=b"\x89PNG", media_type="image/png")
    model = ScriptedModel([reply("a cat")])
    result = run(Agent(model).run_with_history([], "what is this?", parts=[image]))
    assert model.requests[0].messages[-1].parts == [image]
    assert result.new_messages[0].parts == [image]


# --- tools ----------------------------------------------------------------------------------


def test_tool_calls_run_in_parallel_and_results_keep_call_order():
    started: list[str] = []
    both_started = asyncio.Event()

    @tool
    async def slow(name: str, delay: float) -> str:
        started.append(name)
        if len(started) == 3:
            both_started.set()
        # would deadlock (and time out) if the calls ran one after another
        await asyncio.wait_for(both_started.wait(), 2)
        await asyncio.sleep(delay)
        return f"{name} done"

    model = ScriptedModel(
        [
            calls(
                ("c1", "slow", '{"name": "first", "delay": 0.06}'),
                ("c2", "slow", '{"name": "second", "delay": 0.0}'),
                ("c3", "slow", '{"name": "third", "delay": 0.03}'),
            ),
            reply("all done"),
        ]
    )
    result = run(Agent(model, tools=[slow]).run_with_history([], "go"))
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in tool_messages] == [
        ("c1", "first done"),
        ("c2", "second done"),
        ("c3", "third done"),
    ]
    assert result.tool_calls == 3 and result.requests == 2
    assert_valid_request(model.requests[1])
    assert [d.name for d in model.requests[0].tools] == ["slow"]


def test_sync_tools_run_in_parallel_threads():
    def nap(n: int) -> str:
        time.sleep(0.2)
        return str(n)

    specs = [(f"c{i}", "nap", f'{{"n": {i}}}') for i in range(4)]
    model = ScriptedModel([calls(*specs), reply("ok")])
    start = time.monotonic()
    result = run(Agent(model, tools=[Tool(nap)]).run_with_history([], "go"))
    assert time.monotonic() - start < 0.6  # 4 x 0.2 s would be 0.8 s sequentially
    assert [m.content for m in result.messages if m.role == "tool"] == ["0", "1", "2", "3"]


def test_sequential_tools_are_barriers_and_parallel_can_be_switched_off():
    log: list[str] = []

    async def step(name: str) -> str:
        log.append(f"start {name}")
        await asyncio.sleep(0.01)
        log.append(f"end {name}")
        return name

    par = Tool(step, name="par")
    bar = Tool(step, name="bar", sequential=True)
    specs = [("1", "par", '{"name":"a"}'), ("2", "par", '{"name":"b"}'), ("3", "bar", '{"name":"B"}'),
             ("4", "par", '{"name":"c"}')]  # fmt: skip
    run(Agent(ScriptedModel([calls(*specs), reply("ok")]), tools=[par, bar]).run_with_history([], "go"))
    assert log[:4] == ["start a", "start b", "end a", "end b"]
    assert log[4:] == ["start B", "end B", "start c", "end c"]
    log.clear()
    run(Agent(ScriptedModel([calls(*specs), reply("ok")]), tools=[par, bar], parallel_tool_calls=False).run_with_history([], "go"))
    assert log == ["start a", "end a", "start b", "end b", "start B", "end B", "start c", "end c"]


def test_tool_context_carries_the_call_and_run_identity():
    seen: list[ToolContext] = []

    @tool
    def who(ctx: ToolContext) -> str:
        seen.append(ctx)
        return "me"

    run(Agent(ScriptedModel([call("who", id="c9"), reply("ok")]), tools=[who]).run_with_history([], "go", run_id="R", conversation_id="C"))
    [ctx] = seen
    assert (ctx.call_id, ctx.tool_name, ctx.args, ctx.run_id, ctx.conversation_id) == ("c9", "who", "{}", "R", "C")
    assert callable(ctx.output)


def test_a_call_stopped_while_it_runs_gets_its_stopped_result_with_its_output():
    """Issue 24 bug 1, in the core: a call that started is never closed as one that never ran."""
    from golem_cli.core.events import ToolCallOutput

    heard: list[str] = []

    @tool
    async def slow(ctx: ToolContext) -> str:
        assert ctx.output is not None
        ctx.output("started\n")
        await asyncio.sleep(60)
        return "never"

    async def main() -> RunError:
        agent = Agent(ScriptedModel([call("slow", id="s1"), reply("ok")]), tools=[slow])

        def on_event(event: object) -> None:
            if isinstance(event, ToolCallOutput):
                heard.append(event.text)
                task.cancel("golem: a signal (SIGTERM)")

        task = asyncio.ensure_future(agent.run_stream_with_history([], "go", hooks=RunHooks(on_event=on_event)))
        try:
            await task
        except RunError as e:
            return e
        raise AssertionError("the run was not stopped")

    error = asyncio.run(main())
    assert heard == ["started\n"] and error.interrupted and error.partial is not None
    [result] = [m for m in error.partial.new_messages if m.role == "tool"]
    assert result.failed and result.tool_call_id == "s1"
    assert result.content.startswith("The call was stopped by a signal (SIGTERM) after ")
    assert result.content.endswith("Its output so far:\nstarted")


def test_tool_parts_are_kept_on_the_result_message():
    image = Part(kind="image", data=b"PNG", media_type="image/png")

    @tool
    def snap() -> list:
        return ["cropped", image]

    result = run(Agent(ScriptedModel([call("snap"), reply("ok")]), tools=[snap]).run_with_history([], "go"))
    tool_message = next(m for m in result.messages if m.role == "tool")
    assert tool_message.content == "cropped" and tool_message.parts == [image]


def test_model_retry_budget_is_per_tool_and_per_run():
    @tool(max_retries=2)
    def picky(n: int) -> str:
        raise ModelRetry(f"bad {n}")

    model = ScriptedModel([call("picky", '{"n": 1}', id="a"), call("picky", '{"n": 2}', id="b"), reply("gave up")])
    result = run(Agent(model, tools=[picky], tool_retries=0).run_with_history([], "go"))
    rejections = [m.content for m in result.messages if m.role == "tool"]
    assert rejections == [
        "Your tool call was rejected: bad 1. Correct the arguments and call the tool again.",
        "Your tool call was rejected: bad 2. Correct the arguments and call the tool again.",
    ]
    assert result.tool_calls == 2


def test_bad_arguments_are_fed_back_as_a_rejection():
    model = ScriptedModel([call("echo", '{"text": 5}', id="x"), call("echo", '{"text": "5"}', id="y"), reply("ok")])
    result = run(Agent(model, tools=[echo]).run_with_history([], "go"))
    first = next(m for m in result.messages if m.tool_call_id == "x")
    assert first.content.startswith("Your tool call was rejected: invalid arguments: Expected `str`, got `int`")
    assert next(m for m in result.messages if m.tool_call_id == "y").content == "echo:5"


# --- usage, result fields, streaming ---------------------------------------------------------


def test_usage_requests_tool_calls_and_finish_reason_add_up():
    model = ScriptedModel(
        [
            call("echo", usage=Usage(input_tokens=10, output_tokens=2, cache_read_tokens=5)),
            calls(("a", "echo", "{}"), ("b", "echo", "{}"), usage=Usage(input_tokens=20, output_tokens=3, reasoning_tokens=1)),
            reply("done", usage=Usage(input_tokens=30, output_tokens=4), finish_reason="length"),
        ]
    )
    result = run(Agent(model, tools=[echo]).run_with_history([], "go"))
    assert isinstance(result, RunResult)
    assert result.usage == Usage(input_tokens=60, output_tokens=9, cache_read_tokens=5, reasoning_tokens=1)
    assert (result.requests, result.tool_calls, result.finish_reason) == (3, 3, "length")
    assert result.output == "done" and result.response.message.content == "done"


def test_streaming_delivers_every_text_delta_in_order_across_tool_turns():
    model = ScriptedModel(
        [
            Step(text="Let me check. ", tool_calls=[ToolCall(id="c1", name="echo", args='{"text":"x"}')], chunk=3),
            Step(text="It said echo:x.", thinking=[ThinkingBlock(text="ok", signature="s")], chunk=4),
        ]
    )
    deltas: list[str] = []
    events: list[object] = []

    async def on_delta(text: str) -> None:  # async callbacks are awaited
        deltas.append(text)

    result = run(Agent(model, tools=[echo]).run_stream_with_history([], "go", hooks=RunHooks(on_delta=on_delta, on_event=events.append)))
    assert "".join(deltas) == "Let me check. It said echo:x."
    assert deltas[:2] == ["Let", " me"]
    assert any(isinstance(e, ToolCallDelta) for e in events)
    assert any(isinstance(e, ThinkingDelta) for e in events)
    assert [type(e).__name__ for e in events if not isinstance(e, TextDelta | ThinkingDelta | ToolCallDelta)] == [
        "StreamDone", "ToolCallStarted", "ToolCallFinished", "StreamDone",
    ]  # fmt: skip
    assert result.output == "It said echo:x." and result.messages[-1].thinking == [ThinkingBlock(text="ok", signature="s")]
    plain = run(Agent(ScriptedModel(model.steps), tools=[echo]).run_with_history([], "go", run_id=result.run_id,
                                                                    conversation_id=result.conversation_id))
    assert plain.messages == result.messages  # same shape streamed or not


def test_echo_fallback_end_to_end():
    deltas: list[str] = []
    agent = Agent(EchoModel())
    first = run(agent.run_stream_with_history([], "hello", hooks=RunHooks(on_delta=deltas.append)))
    assert "".join(deltas) == first.output and "You said: hello" in first.output
    second = run(agent.run_stream_with_history(first.messages, "again", hooks=RunHooks(on_delta=deltas.append)))
    assert "3 messages" in second.output
    assert first.usage.input_tokens > 0


def test_streaming_needs_a_streaming_model():
    class RequestOnly:
        name = "x:plain"

        async def request(self, request):
            return await EchoModel().request(request)

    agent = Agent(RequestOnly())  # type: ignore[arg-type]
    with pytest.raises(GolemError, match="does not support streaming"):
        run(agent.run_stream_with_history([], "hi"))
    assert "You said: hi" in run(agent.run_with_history([], "hi")).output


NO_WAIT = RetryPolicy(max_attempts=3, backoff_base=0)


def test_retryable_model_errors_are_retried_up_to_max_attempts():
    flaky = ModelError("overloaded", status=529, retryable=True)
    model = ScriptedModel([fail(flaky), fail(flaky), reply("finally")])
    result = run(Agent(model, retry=NO_WAIT).run_with_history([], "hi"))
    assert result.output == "finally" and result.requests == 3 and len(model.requests) == 3
    model = ScriptedModel([fail(flaky), fail(flaky)])
    with pytest.raises(RunError) as info:
        run(Agent(model, retry=replace(NO_WAIT, max_attempts=2)).run_with_history([], "hi"))
    assert str(info.value) == "golem: model stage: runner: model failed after 2 attempts: overloaded"
    assert info.value.cause.status == 529 and info.value.cause.attempts == 2 and info.value.cause.message == "overloaded"
    model = ScriptedModel([fail(ModelError("bad request", status=400)), reply("never")])
    with pytest.raises(RunError, match="^golem: model stage: bad request$"):
        run(Agent(model, retry=NO_WAIT).run_with_history([], "hi"))
    assert len(model.requests) == 1


def test_a_stream_is_retried_only_if_nothing_arrived():
    flaky = ModelError("reset", retryable=True)
    model = ScriptedModel([fail(flaky), reply("second try")])
    assert run(Agent(model, retry=NO_WAIT).run_stream_with_history([], "hi")).output == "second try"
    model = ScriptedModel([Step(text="partial answer", cut_after=1, error=flaky), reply("never")])
    with pytest.raises(RunError):
        run(Agent(model, retry=NO_WAIT).run_stream_with_history([], "hi"))
    assert len(model.requests) == 1


def test_the_retry_policy_is_the_agents_else_the_models_else_one_attempt():
    flaky = ModelError("overloaded", retryable=True)

    class Declaring(ScriptedModel):
        retry_policy = RetryPolicy(max_attempts=2, backoff_base=0)

    model = Declaring([fail(flaky), reply("declared")])
    assert run(Agent(model).run_with_history([], "hi")).output == "declared"  # the model's own policy
    model = Declaring([fail(flaky), fail(flaky), reply("the agent's")])
    assert run(Agent(model, retry=NO_WAIT).run_with_history([], "hi")).output == "the agent's"
    model = ScriptedModel([fail(flaky), reply("never")])
    with pytest.raises(RunError):
        run(Agent(model).run_with_history([], "hi"))  # a model declaring nothing gets one attempt
    assert len(model.requests) == 1


def test_ctrl_c_during_the_wait_between_attempts_ends_the_run_as_interrupted():
    model = ScriptedModel([fail(ModelError("busy", retryable=True, retry_after=30)), reply("never")])

    async def go():
        task = asyncio.create_task(Agent(model, retry=RetryPolicy(max_attempts=2)).run_with_history([], "hi"))
        while not model.requests:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        task.cancel()
        return await asyncio.gather(task, return_exceptions=True)

    [error] = run(go())
    assert isinstance(error, RunError) and error.interrupted and error.partial is not None
    assert len(model.requests) == 1


def test_construction_errors():
    model = ScriptedModel()
    with pytest.raises(ValueError, match="max iterations must be at least 1, got 0"):
        Agent(model, max_turns=0)
    with pytest.raises(ValueError, match="duplicate name"):
        Agent(model, tools=[echo, echo])
    with pytest.raises(ValueError, match="tool retries must not be negative"):
        Agent(model, tool_retries=-1)
    from golem_cli.core.usage import UsageLimits

    with pytest.raises(ValueError, match="requires a token_counter"):
        Agent(model, usage_limits=UsageLimits(per_request_input_tokens=5))
    with pytest.raises(ValueError, match="duplicate name"):  # a variation is validated too
        replace(Agent(model, tools=[echo]).config, tools=(echo, echo))


def test_one_run_can_use_a_variation_of_the_agents_config():
    """What a CLI does to switch tools or settings for one run: the agent stays as it was."""
    model = ScriptedModel([calls(("c1", "echo", '{"text": "x"}')), reply("done"), reply("plain")])
    agent = Agent(model, instructions="be brief")
    with_tools = Agent.from_config(replace(agent.config, tools=(echo,), settings=ModelSettings(temperature=0.5)))
    result = run(with_tools.run_with_history([], "use the tool"))
    assert result.output == "done" and result.tool_calls == 1
    assert [d.name for d in model.requests[0].tools] == ["echo"] and model.requests[0].settings.temperature == 0.5
    assert model.requests[0].messages[0].content == "be brief"
    assert run(agent.run_with_history([], "no tools now")).output == "plain"
    assert model.requests[2].tools == [] and model.requests[2].settings == ModelSettings()
    assert agent.config.tools == () and with_tools.config.model is agent.config.model


# --- property: any valid history yields a valid request and untouched evidence -------------


@settings(max_examples=60)
@given(HISTORIES)
def test_any_valid_history_yields_a_valid_request(history):
    try:
        validate_run_input((), history)
    except HistoryValidationError:
        return
    model = ScriptedModel([reply("ok")])
    result = run(Agent(model, instructions="I").run_with_history(history, "next", run_id="R", conversation_id="C"))
    sent = model.requests[0].messages
    assert sent[0].content == "I" and all(m.role != "system" for m in sent[1:])
    expected = [m for m in repair_history(history) if m.role != "system"]
    assert sent[1:-1] == expected  # history passes through repaired, unstamped
    assert sent[-1] == Message(role="user", content="next", run_id="R", conversation_id="C")
    assert result.new_messages == result.messages[-2:]
    assert result.sent_messages == len(expected)
