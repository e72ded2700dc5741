"""The store's last line of defence (issue 8, item 1): a save whose bytes would not load back is
refused, and the file on disk stays as it was."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.errors import HistoryFormatError
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store
from golem_cli.store.errors import StoreError
from hypothesis import given, settings
from hypothesis import strategies as st


def test_a_history_that_would_not_load_back_is_not_saved(tmp_path) -> None:
    store = Store(tmp_path)
    cid = store.create([Message(role="user", content="hi")])
    before = store.messages_path(cid).read_bytes()
    bad = Message(role="assistant", tool_calls=[ToolCall(id=123, name="f", args="{}")])  # type: ignore[arg-type]
    with pytest.raises(StoreError) as caught:
        store.save(cid, [Message(role="user", content="hi"), bad])
    assert "would not load back" in str(caught.value) and 'field "id" must be a string' in str(caught.value)
    assert store.messages_path(cid).read_bytes() == before and store.load(cid) == [Message(role="user", content="hi")]


# --- the check in proportion to what changed: only what is new is decoded, never less ----------

LONG = 3000  # messages: a conversation long enough that a whole decode is what the check avoids


def _bad_call(call_id: object = 1234567890) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(id=call_id, name="f", args='{"n":1}')])  # type: ignore[arg-type]


@pytest.fixture
def long_one(tmp_path) -> tuple[Store, str, list[Message]]:
    """A store holding one conversation of LONG messages: the store, its id, its messages as
    loaded (what the check remembers)."""
    store = Store(tmp_path)
    history = []
    for i in range(LONG // 3):
        history += [
            Message(role="user", content=f"question {i}"),
            Message(role="assistant", tool_calls=[ToolCall(id=f"{i:08d}", name="f", args='{"n": 1}')]),
            Message(role="tool", content=f"answer {i}", tool_call_id=f"{i:08d}", tool_name="f"),
        ]
    cid = store.create(history)
    return store, cid, store.load(cid)


def _accepts(read: Callable[[], object]) -> bool:
    """Whether ``read`` gets through without a HistoryFormatError."""
    try:
        read()
    except HistoryFormatError:
        return False
    return True


def _refused(store: Store, cid: str, history: list[Message]) -> None:
    before = store.messages_path(cid).read_bytes()
    with pytest.raises(StoreError, match="would not load back"):
        store.save(cid, history)
    assert store.messages_path(cid).read_bytes() == before


def test_a_bad_turn_appended_to_a_long_loaded_conversation_is_refused(long_one) -> None:
    store, cid, history = long_one
    store.append(cid, [*history, Message(role="user", content="fine")])  # a good turn is saved
    history = store.load(cid)
    before = store.messages_path(cid).read_bytes()
    with pytest.raises(StoreError, match="would not load back"):
        store.append(cid, [*history, Message(role="user", content="next"), _bad_call()])
    assert store.messages_path(cid).read_bytes() == before
    assert len(store.load(cid)) == LONG + 1


def test_a_bad_turn_after_saves_is_refused_with_the_position_in_the_file(long_one) -> None:
    store, cid, history = long_one
    for i in range(3):  # saved turn after turn, as a chat session does
        history = [*history, Message(role="user", content=f"turn {i}")]
        store.append(cid, history)
    with pytest.raises(StoreError) as caught:
        store.append(cid, [*history, _bad_call({"x": 1})])
    assert f"message {LONG + 3}, tool call 0" in str(caught.value)  # the file's own numbering


def test_a_conversation_changed_in_place_is_checked_whole(long_one) -> None:
    store, cid, history = long_one
    changed = [*history[:10], _bad_call(), *history[11:], Message(role="user", content="new turn")]
    assert len(dump_history(changed[:LONG])) == len(dump_history(history))  # the same length in bytes
    _refused(store, cid, changed)  # an early message replaced, and a good turn appended


def test_a_message_whose_list_is_changed_in_place_is_checked_again(long_one) -> None:
    """Messages are frozen but their lists are not: the same objects can encode differently."""
    store, cid, history = long_one
    store.save(cid, history)
    history[1].tool_calls[0] = ToolCall(id=1234567890, name="f", args='{"n":1}')  # type: ignore[arg-type]  # "00000000": as long
    _refused(store, cid, [*history, Message(role="user", content="new turn")])


@given(st.integers(1, 40), st.integers(0, 8), st.integers(-1, 8), st.booleans())
@settings(max_examples=200)
def test_an_append_is_refused_exactly_when_the_whole_file_would_not_load(tmp_path_factory, known, new, bad_at, empty):
    """Whatever is appended to a file golem loaded, the save is refused exactly when a whole
    load of what it would write is refused (ADR 0014's argument, now on copied bytes)."""
    store = Store(tmp_path_factory.mktemp("a"))
    first = [] if empty else [Message(role="user", content=f"k{i}") for i in range(known)]
    cid = store.create(first)
    history = store.load(cid)
    more = [_bad_call() if i == bad_at else Message(role="assistant", content=f"n{i}") for i in range(new)]
    whole = _accepts(lambda: load_history(dump_history([*history, *more])))
    try:
        store.append(cid, [*history, *more])
    except StoreError:
        saved = False
    else:
        saved = True
    assert saved == whole
    assert store.load(cid) == ([*history, *more] if saved else history)


# --- a whole save is checked a batch at a time: never a second copy of every message ---------


def test_a_long_first_save_is_checked_a_batch_at_a_time(tmp_path, monkeypatch) -> None:
    from golem_cli.core.codec import history as codec

    history = [Message(role="user", content=f"message {i} " * 20) for i in range(3 * codec._BATCH)]
    decoded: list[int] = []
    load = codec.load_history

    def recording(data: bytes) -> list[Message]:
        decoded.append(len(data))
        return load(data)

    monkeypatch.setattr(codec, "load_history", recording)
    store = Store(tmp_path)
    cid = store.create(history)
    data = store.messages_path(cid).read_bytes()
    assert data == dump_history(history)
    assert len(decoded) == 3 and max(decoded) < len(data) / 2  # three batches, never the whole


def test_a_bad_message_deep_in_a_first_save_is_refused_with_its_position(tmp_path) -> None:
    history = [Message(role="user", content=f"message {i}") for i in range(700)]
    history[600] = _bad_call()
    with pytest.raises(StoreError) as caught:
        Store(tmp_path).create(history)
    assert "message 600, tool call 0" in str(caught.value)


def test_a_save_over_the_history_size_limit_is_refused_and_the_file_kept(tmp_path):
    """Reading refuses a file over GOLEM_MAX_HISTORY_BYTES, so a save over it would be
    unreadable to golem: it is refused before anything is written, saying how to raise it."""
    store = Store(tmp_path, max_history_bytes=400)
    first = [Message("user", "hi"), Message("assistant", "hello")]
    cid = store.create(first)
    saved, sidecar = store.messages_path(cid).read_bytes(), store.meta_path(cid).read_bytes()
    longer = [*first, Message("user", "x" * 400)]
    with pytest.raises(StoreError) as caught:
        store.save(cid, longer)
    message = str(caught.value)
    assert cid in message and "400 bytes limit" in message and "GOLEM_MAX_HISTORY_BYTES to at least" in message
    assert "\n" not in message
    assert store.messages_path(cid).read_bytes() == saved and store.meta_path(cid).read_bytes() == sidecar
    assert store.load(cid) == first and [c.meta.messages for c in store.list()] == [2]
    with pytest.raises(StoreError, match="GOLEM_MAX_HISTORY_BYTES"):
        store.create(longer)
    assert len(store.list()) == 1  # nothing of the refused conversation was written
    raised = Store(tmp_path, max_history_bytes=1 << 20)
    raised.save(cid, longer)  # with the limit raised as the message says, it saves and loads
    assert raised.load(cid) == longer
