"""How a failed run reads on the screen."""

from __future__ import annotations

from golem_cli.cli.errors import describe
from golem_cli.core.errors import ModelError, RunError


def test_a_model_failure_reads_as_the_provider_said_it_with_the_hint():
    cause = ModelError("HTTP 401 from openai model 'gpt-x' at https://api.openai.com/v1: bad key", hint="check OPENAI_API_KEY")
    line = describe(RunError("model", cause))
    assert line == "HTTP 401 from openai model 'gpt-x' at https://api.openai.com/v1: bad key; check OPENAI_API_KEY"


def test_other_stages_are_named():
    assert describe(RunError("tool", "runner: tool \"x\" (call \"c\"): boom")) == 'tool stage failed: runner: tool "x" (call "c"): boom'
    assert describe(RunError("loop", "runner: output retries exhausted")).startswith("loop stage failed:")
    limit = describe(RunError("loop", "runner: model turn limit exceeded after 10 turns"))  # said for people
    assert limit.startswith("the model used tools for 10 tool rounds in a row") and "`continue`" in limit


def test_a_retried_failure_reads_as_the_provider_said_it_and_how_often_it_was_tried():
    cause = ModelError("HTTP 500 from openai model 'm' at http://h/v1: upstream exploded", hint="try again", attempts=3)
    assert str(cause).startswith("runner: model failed after 3 attempts: HTTP 500")  # Go's text, for programs
    line = describe(RunError("model", cause))
    assert line == "HTTP 500 from openai model 'm' at http://h/v1: upstream exploded (after 3 attempts); try again"


def test_a_tool_failure_or_stop_reads_as_what_the_tool_did():
    from golem_cli.core.errors import RunCanceledError, ToolCallError
    from golem_cli.core.tools import STOPPED_AT_QUESTION

    failed = RunError("tool", ToolCallError("write_file", "w2", "[Errno 36] File name too long"))
    assert describe(failed) == "the write_file call failed: [Errno 36] File name too long"
    stopped = RunError("canceled", RunCanceledError("run_command", "a2", STOPPED_AT_QUESTION))
    assert describe(stopped) == "stopped at the approval question; the tool calls of that turn are closed, nothing else ran"
    assert describe(RunError("canceled", RunCanceledError("deploy", "c1", "the user said stop"))) == "deploy stopped the turn: the user said stop"
    for line in (describe(failed), describe(stopped)):
        assert "stage" not in line and "runner" not in line
