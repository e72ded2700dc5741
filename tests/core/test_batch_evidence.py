"""What a tool batch leaves when it does not simply succeed: results of calls that finished
before a stop, retry feedback counted per model response, and the ``tool_errors="answer"``
policy a chat uses (one call's error is that call's failed result, the others stand)."""

from __future__ import annotations

import asyncio

import pytest
from golem_cli.core.agent import Agent
from golem_cli.core.errors import RunError
from golem_cli.core.events import ToolCallFinished
from golem_cli.core.history.repair import normalize_history
from golem_cli.core.messages import INTERRUPTED, Part, ToolCall
from golem_cli.core.runconfig import RunHooks
from golem_cli.core.tools import ToolCanceled, tool

from tests.core.test_agent_support import run
from tests.scripted import ScriptedModel, Step, reply


@tool
def quick(path: str) -> str:
    """Answer at once."""
    return f"did {path}"


@tool
async def slow() -> str:
    """Take a long time."""
    await asyncio.sleep(30)
    return "never"


@tool
def broken(path: str) -> str:
    """Raise like a tool with a bug or an OS error nobody caught."""
    raise OSError(36, "File name too long", path)


def batch(*specs: tuple[str, str, str], text: str = "") -> Step:
    return Step(text=text, tool_calls=[ToolCall(id=i, name=n, args=a) for i, n, a in specs])


def results(messages) -> list[tuple[str, str, bool]]:
    return [(m.tool_call_id, m.content, m.failed) for m in messages if m.role == "tool"]


def test_ctrl_c_keeps_the_results_of_calls_that_finished():
    events: list[object] = []

    async def scenario() -> RunError:
        model = ScriptedModel([batch(("q", "quick", '{"path":"a"}'), ("s", "slow", "{}"))])
        task = asyncio.create_task(Agent(model, tools=[quick, slow]).run_with_history([], "go", hooks=RunHooks(on_event=events.append)))
        while not any(isinstance(e, ToolCallFinished) for e in events):  # quick is done, slow runs
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(RunError) as info:
            await task
        return info.value

    err = run(scenario())
    assert err.stage == "tool" and err.interrupted
    assert str(err) == 'golem: tool stage: runner: tool "slow" (call "s"): interrupted'
    history = err.partial.messages
    [finished, stopped] = results(history)
    assert finished == ("q", "did a", False)  # it ran: kept, never called "interrupted"
    assert stopped[0] == "s" and stopped[2] and stopped[1].startswith("The call was stopped by the user (Ctrl-C)")
    assert history[-1].run_id == err.run_id
    assert not normalize_history(history)[1].changed  # the call still running was closed truthfully


def test_results_are_announced_as_each_call_finishes_and_recorded_in_call_order():
    @tool
    async def late() -> str:
        """Finish second."""
        await asyncio.sleep(0.2)
        return "late"

    events: list[object] = []
    model = ScriptedModel([batch(("l", "late", "{}"), ("q", "quick", '{"path":"x"}')), reply("done")])
    result = run(Agent(model, tools=[late, quick]).run_with_history([], "go", hooks=RunHooks(on_event=events.append)))
    finished = [e.call.id for e in events if isinstance(e, ToolCallFinished)]
    assert finished == ["q", "l"]
    assert [m.tool_call_id for m in result.messages if m.role == "tool"] == ["l", "q"]


def test_two_bad_calls_of_one_tool_in_one_response_both_get_feedback():
    model = ScriptedModel([batch(("b1", "quick", '{"pathx":"a"}'), ("b2", "quick", '{"pathy":"b"}')), reply("fixed")])
    result = run(Agent(model, tools=[quick], tool_retries=1).run_with_history([], "go"))
    rejected = results(result.messages)
    assert [r[0] for r in rejected] == ["b1", "b2"]
    assert all(r[1].startswith("Your tool call was rejected: invalid arguments:") and not r[2] for r in rejected)
    assert result.output == "fixed"


def test_the_retry_budget_counts_responses_and_says_how_many():
    bad = '{"pathx":"a"}'
    model = ScriptedModel([batch(("b1", "quick", bad), ("b2", "quick", bad)), batch(("b3", "quick", bad))])
    with pytest.raises(RunError) as info:
        run(Agent(model, tools=[quick], tool_retries=1).run_with_history([], "go"))
    assert str(info.value).startswith(
        'golem: tool stage: runner: tool "quick" (call "b3"): tool failed after 2 attempts:'
    )


def test_answer_mode_turns_one_calls_error_into_its_failed_result():
    model = ScriptedModel([batch(("w", "quick", '{"path":"a"}'), ("x", "broken", '{"path":"long"}')), reply("ok")])
    result = run(Agent(model, tools=[quick, broken], tool_errors="answer").run_with_history([], "go"))
    assert results(result.messages) == [
        ("w", "did a", False),
        ("x", "the tool failed: OSError: [Errno 36] File name too long: 'long'", True),
    ]
    # Go's rule stays the default: the batch fails the run and keeps no result
    with pytest.raises(RunError) as info:
        run(Agent(ScriptedModel(model.steps), tools=[quick, broken]).run_with_history([], "go"))
    assert info.value.stage == "tool" and results(info.value.partial.messages) == []


def test_answer_mode_answers_an_invalid_part_and_the_others_stand():
    @tool
    def bad_part() -> Part:
        """Return an image with neither a URL nor data."""
        return Part(kind="image")

    model = ScriptedModel([batch(("p", "bad_part", "{}"), ("w", "quick", '{"path":"a"}')), reply("ok")])
    result = run(Agent(model, tools=[bad_part, quick], tool_errors="answer").run_with_history([], "go"))
    assert results(result.messages) == [
        ("p", "tool produced an invalid part 0: model: image part has neither a URL nor inline data", True),
        ("w", "did a", False),
    ]


def test_a_stop_closes_each_call_id_once_even_when_the_model_repeats_one():
    @tool(sequential=True)
    def stop() -> str:
        """End the run."""
        raise ToolCanceled("enough")

    # "a" answered before the stop; the model used "a" again for the stopping call's sibling
    model = ScriptedModel([batch(("a", "quick", '{"path":"x"}'), ("s", "stop", "{}"), ("a", "quick", '{"path":"y"}'))])
    with pytest.raises(RunError) as info:
        run(Agent(model, tools=[quick, stop]).run_with_history([], "go"))
    assert info.value.stage == "canceled"
    assert results(info.value.partial.messages) == [("a", "did x", False), ("s", INTERRUPTED, False)]


def test_answer_mode_answers_a_retry_past_the_budget():
    bad = '{"pathx":"a"}'
    model = ScriptedModel([batch(("b1", "quick", bad)), batch(("b2", "quick", bad)), reply("gave up")])
    result = run(Agent(model, tools=[quick], tool_retries=1, tool_errors="answer").run_with_history([], "go"))
    (first, second) = results(result.messages)
    assert first[1].startswith("Your tool call was rejected:") and not first[2]
    assert second[1].startswith("Your tool call was rejected again: tool failed after 2 attempts: invalid arguments")
    assert second[2] and result.output == "gave up"


def test_a_failure_stops_later_groups_from_starting():
    ran: list[str] = []

    @tool(sequential=True)
    def after() -> str:
        """Runs alone, after the failing group."""
        ran.append("after")
        return "after"

    model = ScriptedModel([batch(("x", "broken", '{"path":"p"}'), ("a", "after", "{}"))])
    with pytest.raises(RunError):
        run(Agent(model, tools=[broken, after]).run_with_history([], "go"))
    assert ran == []
