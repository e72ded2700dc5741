"""The caller's part in a tool batch: approval before a call runs, answers for undeclared
tools, schema-declared tools, and the record hook that lets a caller save a tool round."""

from __future__ import annotations

import asyncio

import pytest
from golem_cli.core.agent import Agent
from golem_cli.core.errors import RunError
from golem_cli.core.history.repair import normalize_history
from golem_cli.core.messages import INTERRUPTED, Message, ToolCall
from golem_cli.core.runconfig import RunHooks
from golem_cli.core.tools import (
    APPROVED,
    Approval,
    ApprovalRequest,
    ModelRetry,
    SchemaTool,
    ToolCanceled,
    ToolContext,
    ToolFailed,
    denial_text,
    tool,
)

from tests.core.test_agent_support import run
from tests.scripted import ScriptedModel, Step, reply

ran: list[str] = []


@tool
def write(path: str) -> str:
    """Write a file."""
    ran.append(path)
    return f"wrote {path}"


@tool
def look(path: str) -> str:
    """Read a file."""
    ran.append("look:" + path)
    return f"saw {path}"


@pytest.fixture(autouse=True)
def _clear():
    ran.clear()


def batch(*specs: tuple[str, str, str]) -> Step:
    return Step(tool_calls=[ToolCall(id=i, name=n, args=a) for i, n, a in specs])


def tool_results(messages: list[Message]) -> list[tuple[str, str, bool]]:
    return [(m.tool_call_id, m.content, m.failed) for m in messages if m.role == "tool"]


def test_approved_denied_and_reasoned_denials_become_results():
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        path = request.args["path"]
        return APPROVED if path == "ok" else Approval(approved=False, reason="not that one" if path == "why" else "")

    model = ScriptedModel(
        [batch(("c1", "write", '{"path":"ok"}'), ("c2", "write", '{"path":"no"}'), ("c3", "write", '{"path":"why"}')),
         reply("done")]
    )  # fmt: skip
    result = run(Agent(model, tools=[write]).run_with_history([], "go", hooks=RunHooks(approve=approve)))
    assert [(r.call.id, r.tool.name, r.args) for r in asked] == [
        ("c1", "write", {"path": "ok"}), ("c2", "write", {"path": "no"}), ("c3", "write", {"path": "why"}),
    ]  # fmt: skip
    assert ran == ["ok"]
    assert tool_results(result.messages) == [
        ("c1", "wrote ok", False),
        ("c2", "Your tool call was denied. Do not call it again; continue without its result.", True),
        ("c3", "Your tool call was denied: not that one. Do not call it again; continue without its result.", True),
    ]
    assert result.tool_calls == 1  # denied calls never executed
    assert denial_text("") == tool_results(result.messages)[1][1]


def test_a_call_the_hook_knows_will_fail_is_its_failed_result_and_never_runs():
    def approve(request: ApprovalRequest) -> Approval:
        if request.args["path"] == "/etc":
            raise ToolFailed("outside the project")
        return APPROVED

    model = ScriptedModel([batch(("c1", "write", '{"path":"/etc"}'), ("c2", "write", '{"path":"ok"}')), reply("done")])
    result = run(Agent(model, tools=[write]).run_with_history([], "go", hooks=RunHooks(approve=approve)))
    assert ran == ["ok"]
    assert tool_results(result.messages) == [("c1", "outside the project", True), ("c2", "wrote ok", False)]
    assert result.tool_calls == 1


def test_questions_are_asked_one_at_a_time_before_the_group_runs():
    events: list[str] = []

    async def approve(request: ApprovalRequest) -> Approval:
        events.append(f"ask {request.call.id}")
        await asyncio.sleep(0.01)
        events.append(f"answer {request.call.id}")
        return APPROVED

    @tool
    async def slow(n: int) -> str:
        events.append(f"start {n}")
        await asyncio.sleep(0.05)
        events.append(f"end {n}")
        return str(n)

    model = ScriptedModel([batch(("a", "slow", '{"n":1}'), ("b", "slow", '{"n":2}')), reply("done")])
    run(Agent(model, tools=[slow]).run_with_history([], "go", hooks=RunHooks(approve=approve)))
    assert events[:4] == ["ask a", "answer a", "ask b", "answer b"]
    assert events[4:6] == ["start 1", "start 2"]  # approved calls still run in parallel


def test_bad_arguments_are_never_asked_about():
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request.call.id)
        return APPROVED

    model = ScriptedModel([batch(("c1", "write", '{"path": 3}')), batch(("c2", "write", '{"path":"x"}')), reply("ok")])
    result = run(Agent(model, tools=[write]).run_with_history([], "go", hooks=RunHooks(approve=approve)))
    assert asked == ["c2"]
    assert tool_results(result.messages)[0][1].startswith("Your tool call was rejected: invalid arguments")


@pytest.mark.parametrize("how", ["tool-canceled", "ctrl-c", "task-cancel"])
def test_stopping_at_the_question_closes_the_batch(how):
    """Ctrl-C at the question stops the run at the ``canceled`` stage: the call answered
    before the stop keeps its result, every other call is closed, resume needs no repair."""

    async def approve(request: ApprovalRequest) -> Approval:
        if request.call.id != "c2":
            return APPROVED
        if how == "tool-canceled":
            raise ToolCanceled("stopped by the user")
        if how == "ctrl-c":
            raise KeyboardInterrupt
        raise asyncio.CancelledError

    model = ScriptedModel(
        [batch(("c1", "look", '{"path":"a"}'), ("c2", "write", '{"path":"b"}'), ("c3", "look", '{"path":"c"}')),
         reply("never")]
    )  # fmt: skip
    with pytest.raises(RunError) as info:
        run(Agent(model, tools=[write, look]).run_with_history([], "go", hooks=RunHooks(approve=approve)))
    err = info.value
    assert err.stage == "canceled" and not err.interrupted
    assert ran == []  # the group never started: c1 was approved but had not run yet
    assert tool_results(err.partial.messages) == [(c, INTERRUPTED, False) for c in ("c1", "c2", "c3")]
    _, report = normalize_history(err.partial.messages)
    assert not report.changed


def test_a_stop_in_a_later_group_keeps_the_earlier_results():
    seq = tool(lambda path: ran.append("seq:" + path) or "s", name="seq", sequential=True)

    def approve(request: ApprovalRequest) -> Approval:
        if request.call.id == "c3":
            raise ToolCanceled("no")
        return APPROVED

    model = ScriptedModel([batch(("c1", "look", '{"path":"a"}'), ("c2", "seq", '{"path":"b"}'),
                                 ("c3", "look", '{"path":"c"}'))])  # fmt: skip
    with pytest.raises(RunError) as info:
        run(Agent(model, tools=[look, seq]).run_with_history([], "go", hooks=RunHooks(approve=approve)))
    assert ran == ["look:a", "seq:b"]
    assert tool_results(info.value.partial.messages) == [
        ("c1", "saw a", False), ("c2", "s", False), ("c3", INTERRUPTED, False)
    ]  # fmt: skip


def test_an_approval_hook_must_answer_with_an_approval():
    model = ScriptedModel([batch(("c1", "write", '{"path":"x"}'))])
    with pytest.raises(RunError) as info:
        run(Agent(model, tools=[write]).run_with_history([], "go", hooks=RunHooks(approve=lambda r: True)))  # type: ignore[arg-type,return-value]
    assert info.value.stage == "model" and "must return an Approval, got True" in str(info.value)


def test_undeclared_tools_fail_the_run_or_are_answered():
    steps = [batch(("c1", "gone", "{}"), ("c2", "look", '{"path":"a"}')), reply("fine")]
    with pytest.raises(RunError, match="tool was not declared for this run"):
        run(Agent(ScriptedModel(steps), tools=[look]).run_with_history([], "go"))
    result = run(Agent(ScriptedModel(steps), tools=[look], undeclared_tools="answer").run_with_history([], "go"))
    assert tool_results(result.messages) == [
        ("c1", "tool 'gone' is not available in this chat", True), ("c2", "saw a", False)
    ]  # fmt: skip
    with pytest.raises(ValueError, match="undeclared_tools"):
        Agent(ScriptedModel(), undeclared_tools="skip")  # type: ignore[arg-type]


def test_record_hook_sees_the_calling_turn_before_any_tool_runs():
    seen: list[tuple[list[str], list[str]]] = []

    def on_record(messages: list[Message]) -> None:
        seen.append(([m.role for m in messages], list(ran)))

    model = ScriptedModel([batch(("c1", "look", '{"path":"a"}')), reply("done")])
    result = run(Agent(model, tools=[look]).run_with_history([], "go", hooks=RunHooks(on_record=on_record)))
    assert seen == [(["user", "assistant"], []), (["user", "assistant", "tool"], ["look:a"])]
    assert len(result.new_messages) == 4


def test_interrupting_a_running_tool_saves_its_stopped_result():
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    async def main() -> RunError:
        task = asyncio.ensure_future(Agent(ScriptedModel([batch(("h1", "hang", "{}"))]), tools=[hang]).run_with_history([], "go"))
        await started.wait()
        task.cancel()
        try:
            await task
        except RunError as err:
            return err
        raise AssertionError("the run did not stop")

    err = run(main())
    assert err.stage == "tool" and err.interrupted
    stopped = err.partial.messages[-1]  # it ran: its result says it was stopped, no repair needed
    assert stopped.tool_call_id == "h1" and stopped.failed and "stopped by the user (Ctrl-C)" in stopped.content
    _, report = normalize_history(err.partial.messages)
    assert not report.changed


def test_schema_tools_take_the_argument_object_and_send_their_schema():
    got: list[tuple[dict, ToolContext]] = []
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    async def search(arguments: dict, context: ToolContext) -> str:
        got.append((arguments, context))
        return "found " + str(arguments.get("q"))

    t = SchemaTool("srv__search", "Search it.", schema, search)
    assert t.definition().parameters is schema and t.definition().name == "srv__search"
    assert t.decode_args(' {"q": 1, "extra": [1]} ') == {"q": 1, "extra": [1]}  # the server judges
    with pytest.raises(ModelRetry, match="Expected `object`, got `array`"):
        t.decode_args("[1]")
    with pytest.raises(ModelRetry, match="not a valid JSON object"):
        t.decode_args('{"q":')
    model = ScriptedModel([batch(("s1", "srv__search", '{"q":"x"}')), reply("ok")])
    result = run(Agent(model, tools=[t]).run_with_history([], "go"))
    assert tool_results(result.messages) == [("s1", "found x", False)]
    assert got[0][1].call_id == "s1"
    sync = SchemaTool("plain", "", {"type": "object"}, lambda arguments, context: arguments)
    assert run(sync.call(sync.decode_args('{"a":1}'), got[0][1])).text == '{"a":1}'
