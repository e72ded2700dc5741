"""golem's error hierarchy: one root, a few kinds, each carrying what a caller needs to recover.

The CLI turns every ``GolemError`` into one line and an exit code in a single place; nothing
below the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from golem_cli.core.usage import Usage

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

STAGES: Final = ("model", "decode", "tool", "loop", "usage", "canceled")


class GolemError(Exception):
    """Root of every error golem raises on purpose."""


class HistoryFormatError(GolemError, ValueError):
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
        super().__init__(message if attempts <= 1 else f"runner: model failed after {attempts} attempts: {message}")
        self.message = message
        self.status = status
        self.hint = hint
        self.retryable = retryable
        self.retry_after = retry_after
        self.attempts = attempts


@dataclass
class PartialResult:
    """Evidence a failed run leaves behind (Go ``PartialResult``); ``messages`` is resume-ready.

    Beyond Go's fields: ``new_messages`` are the messages the run added (its prompt and what
    followed), which a caller appends to its full stored history when the history sent was
    trimmed; ``sent_messages`` counts the history messages the model was sent.
    """

    messages: list[Message]
    usage: Usage = field(default_factory=Usage)
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
    ) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown run stage {stage!r}")
        self.stage = stage
        self.cause = cause
        self.partial = partial
        self.interrupted = interrupted
        self.run_id = run_id
        self.conversation_id = conversation_id
        super().__init__(f"golem: {stage} stage: {cause}")
