"""History processors: bound what a run sends, never what is stored (spec §5).

A processor receives the caller's history once per run, before validation and repair, and
returns the history to send. Cuts land only where a request can start (``opens_request``): a
cut never leaves a tool result whose call was trimmed, or a call turn whose results were, for
repair to patch with synthesized evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from golem_cli.core.errors import HistoryProcessorError
from golem_cli.core.messages import Message, opens_request

__all__ = ["HistoryProcessor", "TokenCounter", "budget_history", "trim_history"]

HistoryProcessor = Callable[[list[Message]], list[Message]]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens a list of messages costs (instructions and tools not included): the
    offline estimate (``tokens.EstimatingCounter``), or a provider's exact count."""

    def count(self, messages: Sequence[Message]) -> int: ...


def trim_history(max_messages: int) -> HistoryProcessor:
    """Keep the newest ``max_messages``, then skip forward to a message that can open a
    request. Short histories pass unchanged (the boundary rule applies only to a cut)."""

    def trim(history: list[Message]) -> list[Message]:
        if max_messages < 1:
            raise HistoryProcessorError(f"golem: TrimHistory budget must be at least 1, got {max_messages}")
        if len(history) <= max_messages:
            return list(history)
        start = len(history) - max_messages
        while start < len(history) and not opens_request(history[start]):
            start += 1
        if start == len(history):
            raise HistoryProcessorError(
                f"golem: TrimHistory left no messages; history of {len(history)} messages "
                "has no turn that can open a request"
            )
        return list(history[start:])

    return trim


def budget_history(counter: TokenCounter | None, max_tokens: int) -> HistoryProcessor:
    """Keep the longest suffix, starting at a message that can open a request, whose token
    count fits ``max_tokens``. Unlike trim, the boundary rule applies even under budget, and
    an empty history is an error (the reference's behaviour, kept for byte compatibility)."""

    def budget(history: list[Message]) -> list[Message]:
        if counter is None:
            raise HistoryProcessorError("golem: BudgetHistory requires a non-nil counter")
        if max_tokens < 1:
            raise HistoryProcessorError(f"golem: BudgetHistory budget must be at least 1, got {max_tokens}")
        drop = 0
        while True:
            while drop < len(history) and not opens_request(history[drop]):
                drop += 1
            kept = history[drop:]
            if not kept:
                raise HistoryProcessorError(
                    f"golem: BudgetHistory left no messages; history of {len(history)} messages "
                    "has no turn that can open a request"
                )
            try:
                count = counter.count(kept)
            except Exception as e:  # a counter is user code; its failure is wrapped, not lost
                raise HistoryProcessorError(f"golem: BudgetHistory: {e}") from e
            if count <= max_tokens:
                return list(kept)
            if len(kept) == 1:
                raise HistoryProcessorError(
                    f"golem: BudgetHistory: newest openable turn alone needs {count} tokens, over budget {max_tokens}"
                )
            drop += 1

    return budget
