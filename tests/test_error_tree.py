"""golem's errors form one documented tree, and what the user sees is read off the error.

The root and the shared kinds are in ``golem_cli.core.errors`` (whose docstring draws the tree);
the store and the config subclass them. ``hint`` and ``exit_code`` are attributes, so the CLI's
mapping is one lookup, and a failed run's come from its cause.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import golem_cli
import golem_cli.core.errors
import pytest
from golem_cli.cli.errors import describe, exit_code_for
from golem_cli.config.settings import ConfigError
from golem_cli.core.errors import (
    ContextTooLong,
    GolemError,
    HistoryFormatError,
    HistoryProcessorError,
    HistoryValidationError,
    InputError,
    ModelError,
    RunError,
    ToolCallError,
    UsageLimitError,
)
from golem_cli.store.errors import ConversationLocked, ConversationNotFound, CorruptConversation, InvalidReference

#: Raised on purpose but not errors: what a tool raises to steer its run (core.tools), and
#: exceptions that never leave the module that raises them.
NOT_IN_THE_TREE = {
    "ToolFailed", "ModelRetry", "ToolCanceled", "ToolTimeoutError",  # core.tools
    "LockBusy", "LockFileUnsafe",  # store.locks, turned into ConversationLocked / an OSError line
    "JSONSyntaxError",  # core._goparse, turned into HistoryFormatError by the codec
    "UnreadableFile",  # store.files (an OSError), turned into CorruptConversation, InputError or a listing problem
    "Problems",  # config.tables: a table that does not fit its declaration, turned into ConfigError or a refusal
    "NotRegular",  # tools.regular (an OSError): a FIFO or device a file tool refuses, a failed result
    "ServerFailed",  # tools.mcp.connection: a tool server did not start, turned into a line by Toolbox.start
    "SidecarChanged",  # store.sidecars: a sidecar replaced between its read and its write, merged by its kind's rule
    "NeedsLogin",  # tools.mcp.oauth: a server wants a sign-in, turned into "run `golem mcp login NAME`"
    "Unclassifiable",  # tools.rules: a command line the splitter cannot take apart, asked about
    "ResourceProblem",  # tools.mcp.resources: a resource golem cannot attach, turned into one line by the REPL
    "Lost",  # store.workers: a rebuild's worker ended early, its chunks then read by the refreshing process
}  # fmt: skip


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in golem_cli, by name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages([str(Path(golem_cli.__file__).parent)], "golem_cli."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[name] = value
    return found


def test_every_error_golem_raises_is_in_the_one_documented_tree():
    classes = {name: cls for name, cls in exception_classes().items() if not name.startswith("_")}
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, GolemError))
    assert outside == sorted(NOT_IN_THE_TREE & set(classes)) and NOT_IN_THE_TREE <= set(classes)
    tree = golem_cli.core.errors.__doc__ or ""
    undocumented = sorted(name for name, cls in classes.items() if issubclass(cls, GolemError) and name not in tree)
    assert undocumented == []


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InputError("conflicting options"), 2),
        (HistoryFormatError("message 0: not an object"), 2),
        (InvalidReference("'../x' is not a conversation ID"), 2),
        (CorruptConversation("0190", Path("/x.json"), "not JSON"), 2),
        (HistoryValidationError("golem: bad history"), 1),
        (HistoryProcessorError("golem: history processor: no"), 1),
        (ConfigError("config.toml: model must be a string"), 1),
        (ConversationNotFound("no conversation 0190"), 1),
        (ConversationLocked("held by pid 7", "0190", None), 1),
        (ModelError("HTTP 500", hint="try again"), 1),
        (ContextTooLong("HTTP 400: prompt is too long", status=400), 1),
        (UsageLimitError("request", 1, 2), 1),
        (KeyboardInterrupt(), 130),
        (OSError(28, "No space left on device"), 1),
        (RuntimeError("a bug"), 1),
    ],
)
def test_the_exit_code_is_the_errors_own(error, code):
    assert exit_code_for(error) == code
    if isinstance(error, GolemError):
        assert error.exit_code == code


def test_a_failed_runs_hint_and_exit_code_are_its_causes():
    provider = ModelError("HTTP 429 from openai", hint="wait a moment")
    failed = RunError("model", provider)
    assert (failed.hint, failed.exit_code) == ("wait a moment", 1)
    assert describe(failed) == "HTTP 429 from openai; wait a moment"
    unreadable = RunError("model", HistoryFormatError("message 2: not an object"))
    assert unreadable.exit_code == 2
    tool = RunError("tool", ToolCallError("x", "c1", ValueError("boom")))
    assert (tool.hint, tool.exit_code) == ("", 1)
    assert (RunError("loop", "turn limit").hint, RunError("loop", "turn limit").exit_code) == ("", 1)


def test_any_error_may_carry_a_hint():
    error = ConversationNotFound("no conversation 0190", hint="see `golem list`")
    assert describe(error) == "no conversation 0190; see `golem list`"
    assert GolemError("plain").hint == "" and describe(GolemError("golem: plain")) == "plain"


def test_a_request_too_long_is_a_model_error_of_its_own_kind():
    """What handles a provider's failure handles it too (a ``ModelError``, its hint and status);
    the chat tells it apart to send the turn again with less of the history."""
    error = ContextTooLong("HTTP 400 from claude: prompt is too long", status=400, hint="trim the history")
    assert isinstance(error, ModelError) and not error.retryable and error.status == 400
    assert describe(RunError("model", error)) == "HTTP 400 from claude: prompt is too long; trim the history"
