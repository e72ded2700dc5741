"""The window of a turn sent again because the provider said it was too long (``halved``):
properties (hypothesis) against the window it halves. A suffix of that window, without its
system messages; never starting where a request cannot (an orphaned result or call turn); half
of it or less, unless the newest half is one tool round, when it reaches back to the newest
message that can open a request (as ``message_window`` does); the same output for the same
input."""

from __future__ import annotations

from golem_cli.core.errors import HistoryProcessorError
from golem_cli.core.messages import SYSTEM, Message, opens_request
from golem_cli.session import halved, message_window
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES


@given(HISTORIES, st.integers(min_value=1, max_value=12))
def test_half_the_window_cut_where_a_request_can_start(history, n):
    window = message_window(n)
    try:
        kept = [m for m in window(list(history)) if m.role != SYSTEM]
    except HistoryProcessorError:
        return
    tighter = halved(window)
    try:
        half = tighter(list(history))
    except HistoryProcessorError:  # no message of the window can open a request
        assert not any(opens_request(m) for m in kept)
        return
    assert half == kept[len(kept) - len(half) :]  # a suffix of the window
    assert all(m.role != SYSTEM for m in half)
    if len(kept) <= 1:
        assert half == []
        return
    assert half and opens_request(half[0])
    if len(half) > len(kept) // 2:  # the newest half held no opener: from the newest one
        newest = max(i for i, m in enumerate(kept) if opens_request(m))
        assert half == kept[newest:]
    assert tighter(list(history)) == half


def test_a_window_of_one_message_is_trim_history_of_one():
    """Half of a two-message window is one message: stride 1 fits a window of 1 (it is
    ``TrimHistory(1)``), only a stride above 1 must be below the window."""
    history = [Message(role="user", content="a"), Message(role="assistant", content="b")]
    assert message_window(1)(history) == history[1:]
    assert halved(message_window(2))(history) == history[1:]
