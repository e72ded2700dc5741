"""What golem tells the person about how a reply ended, when it did not end normally: cut off
at the output limit or by a filter, or refused. The reply itself is always shown and saved."""

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
