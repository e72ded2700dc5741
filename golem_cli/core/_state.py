"""The state of one run and the evidence a failure leaves (spec §6.3, §7).

``RunState`` is the request conversation so far plus counters; ``RunState.fail`` is the one
place a ``RunError`` and its ``PartialResult`` are built, so the evidence rules (contents per
failure kind, the Partial-nil rule and golem's divergence from it for interruptions) live in
one function. ``cut_message`` turns a stream that died into a resumable assistant message.
"""

from __future__ import annotations

from msgspec import Struct, field

from golem_cli.core.errors import PartialResult, RunError
from golem_cli.core.history.validate import thinking_error
from golem_cli.core.messages import ASSISTANT, Message, mark_interrupted, replace
from golem_cli.core.model import ResponseAccumulator
from golem_cli.core.usage import Usage


def interruption(exc: BaseException) -> str:
    """The cause text of an interrupted run: Ctrl-C, or cancellation of the task."""
    return "interrupted" if isinstance(exc, KeyboardInterrupt) else "canceled"


# --- the state of one run ---------------------------------------------------------------------


class RunState(Struct, kw_only=True):
    """One run's evidence: the request conversation plus what the loop appended."""

    messages: list[Message]
    prompt_index: int
    sent_messages: int
    run_id: str
    conversation_id: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = ""
    requests: int = 0
    tool_calls: int = 0
    feedbacks: dict[str, int] = field(default_factory=dict)

    def stamp(self, message: Message) -> Message:
        """A run-added message carries the run identity (spec §6.3)."""
        return replace(message, run_id=self.run_id, conversation_id=self.conversation_id)

    def fail(
        self,
        stage: str,
        cause: BaseException | str,
        *,
        interrupted: bool = False,
        cut: Message | None = None,
    ) -> RunError:
        """The ``RunError`` for a failure now, with the partial evidence of spec §7.

        ``cut`` is an assistant reply that was streaming when the run failed; it is kept
        (stamped) after the completed evidence. ``partial`` is None by Go's rule (no tool
        executed, no usage, no assistant message anywhere) except when the caller or user
        interrupted the run: then it is always set, so the caller keeps the prompt it typed.
        """
        messages = list(self.messages)
        if cut is not None:
            messages.append(self.stamp(cut))
        nothing = (
            self.tool_calls == 0
            and self.usage.input_tokens == 0
            and self.usage.output_tokens == 0
            and not any(m.role == ASSISTANT for m in messages)
        )
        partial = None
        if interrupted or not nothing:
            partial = PartialResult(
                messages=messages,
                usage=self.usage,
                finish_reason=self.finish_reason,
                requests=self.requests,
                tool_calls=self.tool_calls,
                run_id=self.run_id,
                conversation_id=self.conversation_id,
                new_messages=messages[self.prompt_index :],
                sent_messages=self.sent_messages,
            )
        error = RunError(
            stage,
            cause,
            partial,
            interrupted=interrupted,
            run_id=self.run_id,
            conversation_id=self.conversation_id,
            requests=self.requests,
        )
        if isinstance(cause, BaseException):
            error.__cause__ = cause
        return error


def cut_message(acc: ResponseAccumulator) -> Message | None:
    """What a stream delivered before it died, as a resumable assistant message.

    The text is marked interrupted; half-received tool calls are kept verbatim (their args
    may be cut JSON; the next run's repair closes them). Reasoning blocks are kept only when
    complete: a half-streamed block has no signature yet, and a provider that verifies
    signatures would reject the whole resumed request.
    """
    if acc.done is not None:
        return acc.done.message
    if acc.is_empty():
        return None
    thinking = [b for b in acc.thinking() if thinking_error(b) is None and (b.redacted or b.signature)]
    return Message(role=ASSISTANT, content=mark_interrupted(acc.text), tool_calls=acc.tool_calls(), thinking=thinking)
