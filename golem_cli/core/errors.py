"""golem's error hierarchy: one root, a few kinds, each carrying what a caller needs to recover.

Every error golem raises on purpose is a ``GolemError``, whose ``hint`` says what the user can
do about it and whose ``exit_code`` is what a command that ends with it exits with. The CLI
turns any of them into one line (the text, then the hint) and that code by one attribute
lookup (``cli/errors.py``); nothing below the CLI prints. The root and the kinds shared by the
layers live here, because the core imports no other layer; the other layers subclass them::

    GolemError                      exit 1; hint "" unless the error knows better
    ├── InputError                  exit 2: input golem cannot use (cli: conflicting options,
    │   │                           unreadable files)
    │   ├── HistoryFormatError      not a JSON array of golem messages (names the position)
    │   │   └── store.CorruptConversation    a stored conversation file that does not load
    │   ├── store.InvalidReference  text that cannot be a conversation ID (``../x``)
    │   ├── store.ForkPointOutOfRange  a fork point that is not a message number (1 to N)
    │   ├── tools.ToolSelectionError  a tool or group name that does not exist, or names clash
    │   └── tools.RuleError         an allow or deny rule golem cannot read (``rules.py``)
    ├── HistoryValidationError      a history or prompt breaks the run-start rules (spec §1.3)
    ├── HistoryProcessorError       trim or budget could not produce a history (spec §5)
    ├── ModelError                  a provider failed; its hint, retryable, retry_after, attempts
    │   └── ContextTooLong          the provider said the request is longer than the model takes
    ├── RunError                    a run failed after it started: stage, cause, partial
    │                               evidence; hint and exit code are its cause's
    ├── ToolCallError               a tool call failed the run (a RunError cause, stage tool)
    ├── RunCanceledError            a tool stopped the run (a RunError cause, stage canceled)
    ├── UsageLimitError             a UsageLimits bound was crossed (a RunError cause)
    ├── BudgetError                 a turn refused before sending: --max-cost would be passed
    ├── compaction.CompactionError  nothing to compact, or no summary in the model's answer
    ├── config.ConfigError          config.toml cannot be read or holds a wrong value
    └── store.StoreError            the conversation store
        ├── ConversationNotFound, AmbiguousReference (``candidates``), ConversationExists
        ├── ConversationLocked      another golem process holds it (``holder``)
        └── ChangedOnDisk           replaced by another program while a save was written

Not errors but signals, raised by a tool to steer its run (``core.tools``): ``ToolFailed``,
``ModelRetry``, ``ToolCanceled``; a tool past its deadline raises ``ToolTimeoutError`` (a
``TimeoutError``), which fails the run through ``ToolCallError``. Exceptions private to a
module (the store's ``LockBusy``, the codec's parse errors) never leave it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

__all__ = [
    "BudgetError",
    "ContextTooLong",
    "GolemError",
    "HistoryFormatError",
    "HistoryProcessorError",
    "HistoryValidationError",
    "InputError",
    "ModelError",
    "PartialResult",
    "RunCanceledError",
    "RunError",
    "ToolCallError",
    "UsageLimitError",
]

if TYPE_CHECKING:
    from golem_cli.core.messages import Message
    from golem_cli.core.usage import Usage

STAGES: Final = ("model", "decode", "tool", "loop", "usage", "canceled")


class GolemError(Exception):
    """Root of every error golem raises on purpose.

    ``hint`` (keyword, or set by a subclass) says what to do about it; ``exit_code`` is the
    exit code of a command that ends with it (a class attribute, except for ``RunError``).
    """

    exit_code: int = 1
    hint: str = ""

    def __init__(self, *args: object, hint: str = "") -> None:
        super().__init__(*args)
        if hint:
            self.hint = hint


class InputError(GolemError):
    """Input a command cannot use: a file that is not a history, text that is not a
    conversation ID, a missing or unreadable file, conflicting options (exit 2)."""

    exit_code = 2


class HistoryFormatError(InputError, ValueError):
    """A history file or string is not a JSON array of golem messages.

    The message names the position (message index, line and column) and the problem.
    """


class HistoryValidationError(GolemError, ValueError):
    """A history or prompt breaks the run-start rules of spec §1.3 (exact Go texts)."""


class HistoryProcessorError(GolemError):
    """A history processor (trim, budget) could not produce a history (spec §5 texts)."""


class ModelError(GolemError):
    """A model or provider failed: HTTP status, connection, protocol, or a dropped stream.

    ``message`` says what happened and ``hint`` what the user can do about it. ``retryable``
    and ``retry_after`` are the adapter's classification, which the one retry policy
    (``core.retry``) reads. ``attempts`` > 1 marks the last failure of a call that was
    retried: ``str()`` is then Go's ``runner: model failed after <n> attempts: <message>``.
    Messages never contain API keys.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        hint: str = "",
        retryable: bool = False,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        text = message if attempts <= 1 else f"runner: model failed after {attempts} attempts: {message}"
        super().__init__(text, hint=hint)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.attempts = attempts


class ContextTooLong(ModelError):
    """The provider refused the request as longer than the model's context window (OpenAI's
    ``context_length_exceeded``, Anthropic's "prompt is too long"). Its own kind because a
    chat can do something about it: send the turn again with less of the history."""


# --- a run that failed ------------------------------------------------------------------------


def _no_usage() -> Usage:
    # Imported here: every command imports this module to report errors, and the usage
    # records are msgspec Structs, which a command that reads no config (--help) never loads.
    from golem_cli.core.usage import Usage

    return Usage()


@dataclass(kw_only=True)  # not a Struct: this module must not load msgspec (see _no_usage)
class PartialResult:
    """Evidence a failed run leaves behind (Go ``PartialResult``); ``messages`` is resume-ready.

    Beyond Go's fields: ``new_messages`` are the messages the run added (its prompt and what
    followed), which a caller appends to its full stored history when the history sent was
    trimmed; ``sent_messages`` counts the history messages the model was sent.
    """

    messages: list[Message]
    usage: Usage = field(default_factory=_no_usage)
    finish_reason: str = ""
    requests: int = 0
    tool_calls: int = 0
    run_id: str = ""
    conversation_id: str = ""
    new_messages: list[Message] = field(default_factory=list)
    sent_messages: int = 0


class RunError(GolemError):
    """A run failed after it started; ``str()`` is ``golem: <stage> stage: <cause>``.

    ``partial`` is None when the run produced nothing worth keeping (spec §7 rule).
    ``interrupted`` is True when the user or the caller stopped the run (Ctrl-C, task
    cancellation): the partial reply streamed so far is kept in ``partial.messages``.
    ``hint`` and ``exit_code`` are those of the cause when it is a ``GolemError`` (a provider's
    hint reaches the user through the run that failed). ``requests`` counts the model requests
    the run sent, also when ``partial`` is None (each one may be billed, and the ledger counts it).
    """

    def __init__(
        self,
        stage: str,
        cause: BaseException | str,
        partial: PartialResult | None = None,
        *,
        interrupted: bool = False,
        run_id: str = "",
        conversation_id: str = "",
        requests: int = 0,
    ) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown run stage {stage!r}")
        super().__init__(f"golem: {stage} stage: {cause}")
        self.stage = stage
        self.cause = cause
        self.partial = partial
        self.interrupted = interrupted
        self.run_id = run_id
        self.conversation_id = conversation_id
        self.requests = partial.requests if partial is not None else requests
        if isinstance(cause, GolemError):
            self.hint = cause.hint
            self.exit_code = cause.exit_code


class ToolCallError(GolemError):
    """A tool call failed the run; ``str()`` is Go's ``runner: tool "<name>" (call "<id>"): <err>``."""

    def __init__(self, tool_name: str, call_id: str, error: BaseException | str) -> None:
        from golem_cli.core.codec.gojson import go_quote_q  # msgspec: not for every command that imports errors

        self.tool_name, self.call_id, self.error = tool_name, call_id, error
        super().__init__(f"runner: tool {go_quote_q(tool_name)} (call {go_quote_q(call_id)}): {error}")


class RunCanceledError(GolemError):
    """A tool ended the run with ``ToolCanceled`` (stage ``canceled``)."""

    def __init__(self, tool_name: str, call_id: str, reason: str) -> None:
        from golem_cli.core.codec.gojson import go_quote_q

        self.tool_name, self.call_id, self.reason = tool_name, call_id, reason
        super().__init__(
            f"runner: tool {go_quote_q(tool_name)} (call {go_quote_q(call_id)}) canceled the run: {reason}"
        )


class UsageLimitError(GolemError):
    """The run crossed a ``UsageLimits`` bound (stage ``usage``)."""

    def __init__(self, kind: str, limit: int, actual: int) -> None:
        self.kind, self.limit, self.actual = kind, limit, actual
        super().__init__(f"run exceeded the {kind} limit of {limit} (used {actual})")


class BudgetError(GolemError):
    """A turn refused before anything is sent: what this invocation may spend
    (``--max-cost``, ``max_cost``) would be passed, or the model's price is unknown."""
