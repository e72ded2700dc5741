"""Cache-aware trimming: ``trim_history(N, stride=K)`` and ``budget_history(..., stride=K)``.

Properties (hypothesis), against the stride-1 processors of the same history: never a longer
window, never a window that starts where a request cannot (an orphaned result or call turn),
the same output for the same input, the window between N-K and N messages, and a start that
moves at most once while K messages are appended. Stride 1 is the reference processor itself,
checked against the spec's vectors elsewhere (tests/core/test_vectors.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from golem_cli.core.errors import HistoryProcessorError
from golem_cli.core.history.processors import budget_history, trim_history
from golem_cli.core.messages import Message, ToolCall, opens_request
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES


def window_or_error(processor, history: list[Message]) -> list[Message] | None:
    try:
        return processor(history)
    except HistoryProcessorError:
        return None


class Chars:
    """A token counter of one token per character (and one per message)."""

    def count(self, messages: Sequence[Message]) -> int:
        return sum(1 + len(m.content) for m in messages)


STRIDES = st.integers(min_value=1, max_value=6)


@st.composite
def sizes_and_strides(draw) -> tuple[int, int]:
    """A window N and a stride K below it (a stride of N or more is refused)."""
    k = draw(STRIDES)
    return draw(st.integers(min_value=max(1, k + (k > 1)), max_value=12)), k


@given(HISTORIES, sizes_and_strides())
def test_never_longer_than_trim_history_and_never_an_orphan(history, size):
    n, k = size
    plain = window_or_error(trim_history(n), history)
    strided = window_or_error(trim_history(n, stride=k), history)
    assert (plain is None) == (strided is None)  # the same failures, with the same words
    if plain is None or strided is None:
        return
    assert len(strided) <= len(plain)
    assert strided == history[len(history) - len(strided) :]  # a suffix of the history
    if len(strided) < len(history):
        assert strided and opens_request(strided[0])
    assert trim_history(n, stride=k)(list(history)) == strided  # deterministic


#: Histories in which every message can open a request, so the boundary rule never moves a cut.
OPENERS = st.lists(st.builds(Message, role=st.sampled_from(["system", "user", "assistant"]), content=st.text(max_size=3)),
                   max_size=30)  # fmt: skip


@given(OPENERS, sizes_and_strides())
def test_the_cut_is_on_a_step_and_leaves_between_n_minus_k_and_n(history, size):
    n, k = size
    window = trim_history(n, stride=k)(history)
    if len(history) <= n:
        assert window == history
        return
    first = next((i for i, m in enumerate(history) if m.role != "system"), len(history))
    if first == len(history):  # only system messages: no step to count from
        assert len(window) <= n
        return
    cut = len(history) - len(window)
    assert (cut - first) % k == 0
    # between N-K and N, unless fewer messages follow the leading system messages (the cut
    # never falls among those: it is counted from the first message after them)
    assert min(n - k + 1, len(history) - first) <= len(window) <= n


def chat(length: int) -> list[Message]:
    """A chat of prompts, replies and tool rounds: one system message, then turns in which
    every third reply calls a tool."""
    out = [Message(role="system", content="be brief")]
    turn = 0
    while len(out) < length:
        out.append(Message(role="user", content=f"prompt {turn}"))
        if turn % 3 == 2:
            out.append(Message(role="assistant", tool_calls=[ToolCall(id=f"c{turn}", name="f", args="{}")]))
            out.append(Message(role="tool", content="result", tool_call_id=f"c{turn}"))
        out.append(Message(role="assistant", content=f"reply {turn}"))
        turn += 1
    return out[:length]


@given(
    st.integers(min_value=2, max_value=10),
    st.integers(min_value=1, max_value=20),
    st.integers(min_value=0, max_value=20),
)
def test_the_start_moves_at_most_once_every_k_appended_messages(k, more, longer):
    """The window's start is the same for every history of one step (k sizes)."""
    n = k + more
    history = chat(n + 3 * k + longer)
    process = trim_history(n, stride=k)
    first = 1  # the system message comes first
    starts: dict[int, set[int]] = {}  # step -> where the history sent starts
    for size in range(n + 1, len(history) + 1):
        if not opens_request(history[size - 1]):
            continue  # a run starts after a reply or a prompt, not inside a tool round
        window = process(history[:size])
        step = -(-(size - n - first) // k)  # a new step every k appended messages
        starts.setdefault(step, set()).add(size - len(window))
    assert all(len(found) == 1 for found in starts.values()), starts
    assert len(starts) > 1


@given(HISTORIES, st.integers(min_value=1, max_value=60), STRIDES)
def test_token_mode_never_longer_than_budget_history_and_never_an_orphan(history, tokens, k):
    plain = window_or_error(budget_history(Chars(), tokens), history)
    strided = window_or_error(budget_history(Chars(), tokens, stride=k), history)
    assert (plain is None) == (strided is None)
    if plain is None or strided is None:
        return
    assert len(strided) <= len(plain) and Chars().count(strided) <= tokens
    assert strided == history[len(history) - len(strided) :]
    assert not strided or opens_request(strided[0])


def test_token_mode_moves_in_steps_of_k():
    history = chat(60)
    first = 1  # after the system message
    strided, plain = set(), set()
    for size in range(20, 61):
        start = size - len(budget_history(Chars(), 200, stride=10)(history[:size]))
        step = first + (start - first) // 10 * 10
        assert all(not opens_request(m) for m in history[step:start])  # the first opener from a step
        strided.add(start)
        plain.add(size - len(budget_history(Chars(), 200)(history[:size])))
    assert 1 < len(strided) < len(plain)


@pytest.mark.parametrize("n", [1, 3, 20])
def test_stride_one_is_trim_history(n):
    history = chat(50)
    for size in range(len(history) + 1):
        assert window_or_error(trim_history(n, stride=1), history[:size]) == window_or_error(
            trim_history(n), history[:size]
        )


def test_a_stride_of_the_window_or_more_is_refused():
    with pytest.raises(HistoryProcessorError, match="stride must be below the budget of 5 messages, got 5"):
        trim_history(5, stride=5)(chat(10))


def test_a_window_of_twenty_at_stride_ten_holds_the_same_start_for_ten_messages():
    history = [Message(role="user" if i % 2 == 0 else "assistant", content=str(i)) for i in range(60)]
    starts = [size - len(trim_history(20, stride=10)(history[:size])) for size in range(21, 61)]
    assert starts[:10] == [10] * 10 and starts[10:20] == [20] * 10  # counted from message 0
    assert min(size - s for size, s in zip(range(21, 61), starts, strict=True)) == 11
