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
from golem_cli.core.messages import SYSTEM, Message, opens_request

__all__ = ["HistoryProcessor", "TokenCounter", "budget_history", "trim_history"]

HistoryProcessor = Callable[[list[Message]], list[Message]]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens a list of messages costs (instructions and tools not included): the
    offline estimate (``tokens.EstimatingCounter``), or a provider's exact count."""

    def count(self, messages: Sequence[Message]) -> int: ...


def trim_history(max_messages: int, stride: int = 1) -> HistoryProcessor:
    """Keep the newest ``max_messages``, then skip forward to a message that can open a
    request. Short histories pass unchanged (the boundary rule applies only to a cut).

    With a ``stride`` K above 1 the cut moves in steps of K (``strided``): the window keeps
    between N-K and N messages and its start stays put while K messages are appended, so a
    provider's prompt cache keeps hitting; it is never longer than the stride-1 window."""
    if stride > 1:
        strided = _strided(trim_history(max_messages), stride, lambda history: len(history) - max_messages)

        def trim_strided(history: list[Message]) -> list[Message]:
            if stride >= max_messages:  # a step would reach past the newest message
                raise HistoryProcessorError(
                    f"golem: TrimHistory stride must be below the budget of {max_messages} messages, got {stride}"
                )
            return strided(history)

        return trim_strided

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


def budget_history(counter: TokenCounter | None, max_tokens: int, stride: int = 1) -> HistoryProcessor:
    """Keep the longest suffix, starting at a message that can open a request, whose token
    count fits ``max_tokens``. Unlike trim, the boundary rule applies even under budget, and
    an empty history is an error (the reference's behaviour, kept for byte compatibility).
    ``stride``: as ``trim_history``'s, the cut in steps of K messages."""
    if stride > 1:
        return _strided(budget_history(counter, max_tokens), stride, lambda history: 0)

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


def _strided(processor: HistoryProcessor, stride: int, least: Callable[[list[Message]], int]) -> HistoryProcessor:
    """``processor`` (trim or budget at stride 1) with its cut on a step of ``stride``.

    The steps are ``stride`` messages apart, counted from the first non-system message. The
    cut is the first step at or after ``least(history)`` (trim: what leaves at most N
    messages) from which the boundary rule reaches a message at or after where the stride-1
    window starts: so the window is never longer than that one, and its start stays put
    while the history grows within one step. When no message after the step can open a
    request (the newest are an unfinished tool round), the cut stays on the step before, or
    on the stride-1 window's start where that one would be longer."""

    def process(history: list[Message]) -> list[Message]:
        window = processor(history)
        start = len(history) - len(window)
        if start == 0:
            return window
        first = next((i for i, m in enumerate(history) if m.role != SYSTEM), len(history))
        step = first + -(-max(0, least(history) - first) // stride) * stride
        while True:
            cut = _opener_from(history, step)
            if cut >= len(history):  # the newest messages are one tool round: the step before, if it may
                before = _opener_from(history, step - stride) if step - stride >= first else start
                return list(history[max(before, start) :])
            if cut >= start:
                return list(history[cut:])
            step += stride

    return process


def _opener_from(history: list[Message], index: int) -> int:
    """The first message at or after ``index`` that can open a request (``len`` if none)."""
    while index < len(history) and not opens_request(history[index]):
        index += 1
    return index
