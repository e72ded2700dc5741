"""What golem tells the person about how a reply ended, when it did not end normally: cut off
at the output limit or by a filter, or refused, or ended by Ctrl-C or a failure before the
model finished it. The reply itself, as much of it as arrived, is always shown and saved."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.session import TurnOutcome


def ending_notice(outcome: TurnOutcome) -> str:
    """One line for a reply that was refused or cut off, else ``""``."""
    word = f" ({outcome.stop_reason})" if outcome.stop_reason else ""
    if outcome.refusal:
        return f"The model refused to answer{word}; its reply is saved as it is."
    if not outcome.cut_off:
        return ""
    if outcome.finish_reason == "length":
        return (
            f"The reply was cut off: the model reached its output token limit{word}. "
            "Raise it with -o max_tokens N (or /option max_tokens N) and ask again."
        )
    return f"The reply was cut off by the provider's content filter{word}."


def what_is_saved(outcome: TurnOutcome, *, streamed: bool = True) -> str:
    """What a turn that Ctrl-C or the model's failure ended kept of the reply, in words, else
    ``""`` (a finished turn; a tool's failure, said by its own line). Only the command can say
    it: the provider's error tells what happened to the stream, not what golem saved. A reply
    asked for whole (``streamed=False``) keeps nothing of a body cut short, though bytes came."""
    from golem_cli.core.errors import RunError

    failed = isinstance(outcome.error, RunError) and outcome.error.stage == "model"
    if not (outcome.interrupted or failed):
        return ""
    if outcome.cut:
        return "the partial reply is saved"
    reply = "the model's next reply" if outcome.earlier_replies else "the reply"
    return f"nothing of {reply} arrived" if streamed else f"nothing of {reply} is saved"
