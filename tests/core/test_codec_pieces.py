"""Reading a history as its bytes arrive (``codec.read_history_pieces``): a batch of whole
messages at a time, and exactly what ``read_history`` reads from the whole, or None where its
strict fast path declines the bytes (the caller then reads them whole, for Go's semantics and
errors that name the position)."""

from __future__ import annotations

import json
from unittest import mock

from golem_cli.core.codec import history as codec
from golem_cli.core.codec.history import dump_history
from golem_cli.core.errors import HistoryFormatError
from golem_cli.core.messages import Message, ToolCall
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import messages
from tests.core.test_codec import foreign_json
from tests.core.test_codec_fuzz import mutated

# Text and arguments that hold what a cut looks for, and what a naive splitter trips on:
# brackets, braces, quotes and backslashes in strings, and raw arguments that are arrays of
# objects starting with "role" (the only place ',{"role":' can occur but between messages).
TRICKY_TEXT = st.sampled_from(['},{"role":"user"}', "[[{", "\\", '\\"', '"]', ",{", "x}]", "é中😀 <&>"])
TRICKY_ARGS = st.sampled_from([
    '[{"role":"user"},{"role":"assistant"}]', '{"m":[{"role":"a","x":"]"},{"role":"b"}]}',
    '{"role":"x"}', '{"s":",{\\"role\\":"}', "[1,{", '{"a":[{"role":1}', "",
])  # fmt: skip


@st.composite
def tricky_messages(draw) -> Message:
    base = draw(messages())
    calls = [ToolCall(f"t{i}", "f", draw(TRICKY_ARGS)) for i in range(draw(st.integers(0, 2)))]
    return Message(base.role, draw(TRICKY_TEXT) + base.content, base.parts, base.tool_calls + calls,
                   run_id=base.run_id, conversation_id=base.conversation_id)  # fmt: skip


TRICKY_HISTORIES = st.lists(st.one_of(messages(), tricky_messages()), max_size=20)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the given offsets (taken modulo its length)."""
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def expected(data: bytes) -> tuple[list[Message], bool] | None:
    """What the pieces must read: the whole's reading, or None where the fast path declines."""
    try:
        read = codec.read_history(data)
    except HistoryFormatError:
        return None
    return read if read[1] else None


def read_in_pieces(data: bytes, piece: int, cuts: list[int]) -> tuple[list[Message], bool] | None:
    with mock.patch.object(codec, "PIECE", piece):
        return codec.read_history_pieces(split(data, cuts))


CUTS = st.lists(st.integers(0, 10**6), max_size=8)
PIECE_SIZES = st.integers(1, 400)


@given(TRICKY_HISTORIES, PIECE_SIZES, CUTS)
def test_a_history_read_in_pieces_is_the_history(history, piece, cuts):
    data = dump_history(history)
    assert read_in_pieces(data, piece, cuts) == codec.read_history(data)


@given(st.one_of(mutated(), foreign_json(), TRICKY_HISTORIES.map(dump_history).map(lambda d: b"\xef\xbb\xbf" + d)),
       PIECE_SIZES, CUTS)  # fmt: skip
def test_any_bytes_read_in_pieces_read_as_the_whole_or_are_declined(data, piece, cuts):
    assert read_in_pieces(data, piece, cuts) == expected(data)


def test_batches_are_decoded_as_the_bytes_arrive():
    history = [Message("user", f"question {i} <b>", run_id="r") for i in range(2000)]
    data = dump_history(history)
    sizes = []
    real = codec._decode

    def spy(batch, *, empty):
        sizes.append(len(batch))
        return real(batch, empty=empty)

    with mock.patch.object(codec, "_decode", spy):
        assert read_in_pieces(data, 4096, list(range(0, len(data), 1000))) == (history, True)
    assert len(sizes) > len(data) // 5000 and max(sizes) < 6000  # never the whole


def test_cuts_inside_arguments_are_not_taken_and_cost_a_few_decodings():
    """A call whose raw arguments are 20,000 objects starting with "role": every piece ends
    near a false cut. Each fails to decode; the retry waits for twice the bytes, so the
    decodings stay few, and the history is read exactly."""
    args = json.dumps([{"role": "user", "content": f"m{i}"} for i in range(20_000)], separators=(",", ":"))
    history = [
        Message("user", "go"),
        Message("assistant", tool_calls=[ToolCall("c", "f", args)]),
        Message("tool", "ok", tool_call_id="c"),
    ]
    data = dump_history(history)
    calls = []
    real = codec._decode

    def spy(batch, *, empty):
        calls.append(len(batch))
        return real(batch, empty=empty)

    with mock.patch.object(codec, "_decode", spy):
        assert read_in_pieces(data, 4096, list(range(0, len(data), 4096))) == (history, True)
    assert len(calls) <= 2 * (len(data) // 4096).bit_length() + 2
    assert sum(calls) < 4 * len(data)


def test_an_empty_first_batch_is_not_an_array():
    """'[,{...}]' is not JSON: the cut after '[' leaves an empty batch, which is refused."""
    data = b'[,{"role":"user","content":"' + b"x" * 100 + b'"}]'
    assert read_in_pieces(data, 1, [1, 2, 5]) is None
    assert expected(data) is None


def test_names_a_run_repeats_are_held_once():
    history = [Message("user", f"q{i}", run_id="run-" + "7" * 30, conversation_id="conv-" + "1" * 30) for i in range(3)]
    loaded, _ = codec.read_history(dump_history(history))
    assert loaded == history
    assert loaded[0].run_id is loaded[2].run_id and loaded[0].conversation_id is loaded[2].conversation_id
    assert loaded[0].role is loaded[1].role


@given(st.one_of(mutated(), foreign_json(), TRICKY_HISTORIES.map(dump_history)), st.integers(1, 64))
def test_read_history_of_a_long_input_reads_it_in_batches_with_the_same_outcome(data, piece):
    """``read_history`` decodes an input over two pieces a batch at a time (the store's load
    keeps the bytes: then at least the decoded copies of every message never coexist)."""

    def outcome() -> tuple[list[Message], bool] | str:
        try:
            return codec.read_history(data)
        except HistoryFormatError as e:
            return str(e)

    whole = outcome()
    with mock.patch.object(codec, "PIECE", piece):
        assert outcome() == whole


def test_read_history_of_a_long_input_decodes_batches():
    history = [Message("user", f"question {i}") for i in range(3000)]
    data = dump_history(history)
    sizes = []
    real = codec._decode

    def spy(batch, *, empty):
        sizes.append(len(batch))
        return real(batch, empty=empty)

    with mock.patch.object(codec, "PIECE", 4096), mock.patch.object(codec, "_decode", spy):
        assert codec.read_history(data) == (history, True)
    assert len(sizes) > 10 and max(sizes) < 3 * 4096
