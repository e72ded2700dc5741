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
    assert describe(RunError("loop", "runner: model turn limit exceeded after 10 turns")).startswith("loop stage failed:")
