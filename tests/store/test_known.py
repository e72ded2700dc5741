"""A turn's save encodes only the turn (known.py): the bytes of the messages last loaded or saved
are reused when the saved messages start with those very messages, unchanged, and never else."""

from __future__ import annotations

import typing

import msgspec
import pytest
from golem_cli.core.codec import history as codec
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall
from golem_cli.store import Store
from golem_cli.store.saving import LIST_FIELDS, KnownMessages
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.strategies import messages


@pytest.fixture
def encoded(monkeypatch) -> list[int]:
    """How many messages each call of the encoder encoded."""
    counts: list[int] = []
    encode = codec._encode_items

    def counting(batch: list[Message]) -> bytes:
        counts.append(len(batch))
        return encode(batch)

    monkeypatch.setattr(codec, "_encode_items", counting)
    return counts


def _conversation(n: int) -> list[Message]:
    out = []
    for i in range(n // 3):
        out += [
            Message("user", f"question {i} <b> & é"),
            Message("assistant", tool_calls=[ToolCall(f"c{i}", "f", '{"n": 1}')], thinking=[ThinkingBlock("hm")]),
            Message("tool", f"answer {i}", parts=[Part("image", data=b"\x00\x01")], tool_call_id=f"c{i}"),
        ]
    return out


def test_a_turn_saved_after_a_load_encodes_only_the_turn(tmp_path, encoded) -> None:
    store = Store(tmp_path)
    cid = store.create(_conversation(900))
    resumed = Store(tmp_path)  # a fresh process resuming: it knows only the file it reads
    history = resumed.load(cid)
    for i in range(3):  # turn after turn, as a chat session saves
        history = [*history, Message("user", f"turn {i}"), Message("assistant", f"reply {i} <")]
        expected = dump_history(history)
        encoded.clear()
        resumed.save(cid, history)
        assert encoded == [2]
        assert resumed.messages_path(cid).read_bytes() == expected
    encoded.clear()
    resumed.save(cid, history)  # nothing new: the known bytes as they are
    assert encoded == [] and Store(tmp_path).load(cid) == history


def test_a_message_whose_list_changed_in_place_is_encoded_again(tmp_path, encoded) -> None:
    """Messages are frozen but their lists are not: the known bytes no longer hold them."""
    store = Store(tmp_path)
    cid = store.create(_conversation(30))
    history = store.load(cid)
    history[1].tool_calls[0] = ToolCall("c0", "g", '{"n": 2}')
    history[2].parts.append(Part("image", url="https://example.com/x.png"))
    history[4].thinking.clear()
    history.append(Message("user", "next"))
    encoded.clear()
    store.save(cid, history)
    assert sum(encoded) == len(history)
    assert store.messages_path(cid).read_bytes() == dump_history(history)  # not the stale bytes


def test_a_message_replaced_by_an_equal_looking_one_is_encoded_again(tmp_path, encoded) -> None:
    store = Store(tmp_path)
    cid = store.create(_conversation(30))
    history = store.load(cid)
    history[3] = Message("user", "question 1 <b> & e")  # as long as the message it replaces
    history.append(Message("user", "next"))
    encoded.clear()
    store.save(cid, history)
    assert sum(encoded) == len(history) and store.load(cid) == history


def test_a_shorter_or_other_history_is_encoded_whole(tmp_path, encoded) -> None:
    store = Store(tmp_path)
    cid = store.create(_conversation(30))
    history = store.load(cid)
    for other in (history[:-3], [Message("user", "other"), *history]):
        encoded.clear()
        store.save(cid, other)
        assert sum(encoded) == len(other) and store.load(cid) == other


def test_a_file_in_foreign_spelling_is_rewritten_as_golem_writes(tmp_path, encoded) -> None:
    """Bytes only Go's rules read (key case, nulls) are not reused: the file would stay slow."""
    store = Store(tmp_path)
    cid = store.create([Message("user", "hi")])
    store.messages_path(cid).write_bytes(b'[{"Role":"user","content":"hi","toolName":null}]')
    fresh = Store(tmp_path)
    history = [*fresh.load(cid), Message("assistant", "hello")]
    fresh.save(cid, history)
    assert fresh.messages_path(cid).read_bytes() == dump_history(history)


def test_bytes_the_fast_path_reads_are_kept_and_the_file_holds_the_messages(tmp_path) -> None:
    """Spaces or explicit empty fields read on the fast path: the turn is appended to them."""
    store = Store(tmp_path)
    cid = store.create([Message("user", "hi")])
    spaced = b'[ {"role": "user", "content": "hi", "parts": []} ]'
    store.messages_path(cid).write_bytes(spaced)
    fresh = Store(tmp_path)
    history = [*fresh.load(cid), Message("assistant", "hello")]
    fresh.save(cid, history)
    data = fresh.messages_path(cid).read_bytes()
    assert data.startswith(spaced[:-1]) and load_history(data) == history
    assert codec.read_history(data)[1]  # still read by the fast path


@settings(max_examples=60)  # messages() draws much
@given(
    st.lists(messages(), min_size=1, max_size=6),
    st.lists(messages(), max_size=6),
    st.integers(0, 2 * codec._BATCH + 3),
    st.booleans(),
)
def test_encoding_after_the_known_messages_is_the_whole_encoding(known, more, pad, through_load) -> None:
    """Whatever was known (saved, or read back from golem's bytes), and however many batches,
    the bytes for the known messages plus more are ``dump_history`` of all of them."""
    known = (known * (pad // len(known) + 1))[: max(1, pad)]
    state = KnownMessages()
    data = dump_history(known)
    if through_load:
        known, fast = codec.read_history(data)
        assert fast
    state.remember(data, known)
    assert state.extended_by([*known, *more])
    encoding = state.encode([*known, *more])
    assert encoding.data == dump_history([*known, *more]) and encoding.encoded == len(more)
    state.adopt(encoding)  # and after it, as a session saves turn after turn
    assert state.encode([*known, *more, *more]).data == dump_history([*known, *more, *more])


def test_what_unchanged_means_rests_on_the_declarations() -> None:
    """known.py takes a message with the same identity and the same list contents as unchanged:
    true while messages and their parts are frozen and hold only immutable values besides
    those lists, and parts compare equal exactly when they encode the same. A new field of
    another kind must revisit known.py."""
    immutable = {str, bytes, bool}
    assert Message.__struct_config__.frozen
    hints = typing.get_type_hints(Message)
    for name in Message.__struct_fields__:
        hint = hints[name]
        if name in LIST_FIELDS:
            (item,) = typing.get_args(hint)
            assert typing.get_origin(hint) is list and issubclass(item, msgspec.Struct)
            assert item.__struct_config__.frozen, item
            assert set(typing.get_type_hints(item).values()) <= immutable, item
        else:
            assert hint in immutable, name
    assert set(LIST_FIELDS) == {"parts", "tool_calls", "thinking"}


def test_a_body_crc_continued_from_a_known_prefix_is_the_whole_files() -> None:
    import zlib

    from golem_cli.store.saving import BodyCrc, body_crc

    history = _conversation(30)
    old, new = dump_history(history[:12]), dump_history(history)
    assert new.startswith(old[:-1])
    continued = BodyCrc(new, (len(old), body_crc(old)))
    assert continued.computed() is None  # nothing asked yet: nothing read
    assert continued.of_prefix(len(old)) == zlib.crc32(old[:-1]) and continued.body() == zlib.crc32(new[:-1])
    fresh = BodyCrc(new)
    assert fresh.of_prefix(len(old)) == zlib.crc32(old[:-1]) and fresh.body() == zlib.crc32(new[:-1])
    assert fresh.computed() == zlib.crc32(new[:-1]) and BodyCrc(new).body() == zlib.crc32(new[:-1])
