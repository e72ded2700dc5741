"""golem's core runtime: the conversation model of the Go library golem, in Python.

Knows nothing of terminals, HTTP or files. A program embedding the runtime imports from the
modules in ``PUBLIC`` (each lists its public names in ``__all__``); the other modules, and
names outside ``__all__``, are golem's own plumbing and may change. Nothing is imported here,
so reading a history file (``golem_cli.core.codec.history``) never loads the run loop.
"""

from typing import Final

#: The public surface, by module: what a program embedding golem's runtime needs.
PUBLIC: Final = (
    "golem_cli.core.messages",  # Message, ToolCall, Part, ThinkingBlock, roles, interrupted marks
    "golem_cli.core.codec.history",  # load_history, dump_history: the JSON file Go golem reads
    "golem_cli.core.ids",  # new_id (UUIDv7)
    "golem_cli.core.history.repair",  # repair_history, normalize_history
    "golem_cli.core.history.sanitize",  # sanitize_history
    "golem_cli.core.history.processors",  # trim_history, budget_history
    "golem_cli.core.tokens",  # TokenCounter, EstimatingCounter
    "golem_cli.core.agent",  # Agent, RunResult
    "golem_cli.core.runconfig",  # RunConfig, RunHooks
    "golem_cli.core.events",  # ToolCallStarted, ToolCallFinished
    "golem_cli.core.tools",  # Tool, tool, SchemaTool, ToolFailed, ModelRetry, ToolCanceled, Approval
    "golem_cli.core.model",  # the model port: Model, ModelRequest, ModelResponse, stream events
    "golem_cli.core.offline",  # EchoModel
    "golem_cli.core.retry",  # RetryPolicy
    "golem_cli.core.usage",  # Usage, UsageLimits
    "golem_cli.core.errors",  # the error tree and PartialResult
)
