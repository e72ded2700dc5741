"""The one save path (ADR 0025): an append copies the bytes on disk from the descriptor the store
holds and encodes only the new messages; a rewrite encodes everything a batch at a time; before
either, the file must still be the one this process knows, else their messages are merged or
this save goes to a fork; a window of the file's end reads as the whole does."""

from __future__ import annotations

import json
import os

import msgspec
import pytest
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store, saving
from golem_cli.store import store as store_module
from golem_cli.store.errors import StoreError
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.strategies import histories

TURN = [Message("user", "next question"), Message("assistant", "next answer")]


def other_program_writes(path, data: bytes) -> None:
    """A sync tool, Go golem or an editor: a new file renamed over the old one (no lock)."""
    tmp = path.with_name(path.name + ".sync")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def conversation(store: Store, n: int = 6) -> tuple[str, list[Message]]:
    history = [Message("user" if i % 2 == 0 else "assistant", f"message {i}", run_id="") for i in range(n)]
    cid = store.create(history)
    return cid, store.load(cid)


def test_an_append_writes_what_dump_history_writes_and_encodes_only_the_new_messages(store, monkeypatch):
    cid, history = conversation(store)
    encoded: list[int] = []
    real = saving.encode_new
    monkeypatch.setattr(saving, "encode_new", lambda new: encoded.append(len(new)) or real(new))
    store.append(cid, [*history, *TURN])
    assert encoded == [2]
    assert store.messages_path(cid).read_bytes() == dump_history([*history, *TURN])
    assert store.meta(cid).messages == len(history) + 2


def test_an_append_copies_bytes_in_another_spelling_as_they_are(store):
    cid, history = conversation(store, 2)
    indented = json.dumps(json.loads(dump_history(history)), indent=2).encode() + b"\n\n"
    store.messages_path(cid).write_bytes(indented)
    loaded = store.load(cid)
    assert loaded == history
    store.append(cid, [*loaded, *TURN])
    data = store.messages_path(cid).read_bytes()
    assert data.startswith(indented.rstrip()[:-1])  # their bytes up to the closing bracket, unchanged
    assert load_history(data) == [*history, *TURN] and json.loads(data)  # and a JSON array Go loads


def test_an_append_to_an_empty_conversation(store):
    cid = store.create([])
    assert store.load(cid) == []
    store.append(cid, TURN)
    assert store.messages_path(cid).read_bytes() == dump_history(TURN)


def test_a_bad_message_appended_is_refused_with_its_position_in_the_file(store):
    cid, history = conversation(store)
    bad = Message("assistant", tool_calls=[ToolCall(id=7, name="f", args="{}")])  # type: ignore[arg-type]
    before = store.messages_path(cid).read_bytes()
    with pytest.raises(StoreError, match=f"would not load back.*message {len(history) + 1}"):
        store.append(cid, [*history, TURN[0], bad])
    assert store.messages_path(cid).read_bytes() == before
    store.append(cid, [*history, *TURN])  # the store still knows the file: the next save appends
    assert store.load(cid) == [*history, *TURN]


def test_an_append_over_the_size_limit_is_refused(tmp_path):
    store = Store(tmp_path, max_history_bytes=400)
    cid, history = conversation(store)
    with pytest.raises(StoreError, match="limit on history files"):
        store.append(cid, [*history, Message("user", "x" * 400)])
    assert store.load(cid) == history


def test_no_bytes_of_the_file_are_kept(store):
    cid, _ = conversation(store)
    known = store._files[cid]
    assert not any(isinstance(v, bytes | bytearray | memoryview) for v in msgspec.structs.asdict(known).values())
    store.release(cid)  # not held: nothing kept either


@settings(max_examples=60)
@given(first=histories(), turns=st.lists(histories(), min_size=1, max_size=4))
def test_append_then_load_equals_the_list(tmp_path_factory, first, turns):
    store = Store(tmp_path_factory.mktemp("s"))
    cid = store.create(first)
    history = store.load(cid)
    for turn in turns:
        history = [*history, *turn]
        store.append(cid, history)
        assert load_history(store.messages_path(cid).read_bytes()) == load_history(dump_history(history))
    assert store.load(cid) == load_history(dump_history(history))


# --- another program changed the file --------------------------------------------------------------


def test_their_messages_then_ours_when_their_file_extends_ours(store):
    cid, history = conversation(store)
    theirs = [*history, Message("user", "from the other machine"), Message("assistant", "its answer")]
    other_program_writes(store.messages_path(cid), dump_history(theirs))
    saved = store.append(cid, [*history, *TURN])
    assert store.load(cid) == [*theirs, *TURN]
    assert saved.merged == theirs[len(history) :] and saved.at == len(history) and not saved.fork
    assert (
        saved.notice
        == f"conversation {cid} changed on disk meanwhile (2 messages from elsewhere); your turn follows them"
    )
    assert store.meta(cid).messages == len(theirs) + 2


def test_their_messages_in_another_spelling_are_merged_by_comparing_messages(store):
    cid, history = conversation(store)
    theirs = [*history, Message("user", "from an editor")]
    other_program_writes(store.messages_path(cid), json.dumps(json.loads(dump_history(theirs)), indent=1).encode())
    saved = store.append(cid, [*history, *TURN[1:]])
    assert saved.merged == [Message("user", "from an editor")]
    assert store.load(cid) == [*theirs, *TURN[1:]]


def test_a_fork_when_they_changed_what_this_process_loaded(store):
    cid, history = conversation(store)
    theirs = dump_history([Message("user", "rewritten elsewhere")])
    other_program_writes(store.messages_path(cid), theirs)
    saved = store.append(cid, [*history, *TURN])
    assert saved.fork and saved.fork != cid
    assert store.messages_path(cid).read_bytes() == theirs  # their file left exactly as it is
    assert store.load(saved.fork) == [*history, *TURN]
    meta = store.meta(saved.fork)
    assert (meta.parent, meta.fork_at) == (cid, len(history))
    assert saved.notice == (
        f"conversation {cid} changed on disk meanwhile; your turn is saved in a fork {saved.fork} "
        f"(golem resume {saved.fork})"
    )
    store.append(saved.fork, [*history, *TURN, Message("user", "and on")])  # the store follows the fork
    assert len(store.load(saved.fork)) == len(history) + 3


def test_a_fork_when_the_merge_would_need_repair(store):
    cid, history = conversation(store)
    call = Message("assistant", tool_calls=[ToolCall("c9", "f", "{}")])  # their turn ends in an unanswered call
    other_program_writes(store.messages_path(cid), dump_history([*history, call]))
    saved = store.append(cid, [*history, *TURN])
    assert saved.fork and store.load(cid) == [*history, call]


def test_a_whole_rewrite_over_their_change_goes_to_a_fork(store):
    cid, history = conversation(store)
    theirs = dump_history([*history, Message("user", "theirs")])
    other_program_writes(store.messages_path(cid), theirs)
    saved = store.save(cid, history[:2])
    assert saved.fork and store.messages_path(cid).read_bytes() == theirs
    assert store.load(saved.fork) == history[:2]


def test_a_file_removed_meanwhile_is_saved_again(store):
    cid, history = conversation(store)
    store.messages_path(cid).unlink()
    saved = store.append(cid, [*history, *TURN])
    assert store.load(cid) == [*history, *TURN]
    assert saved.notice == f"conversation {cid} was removed on disk meanwhile; saved it again"


def test_a_change_between_the_check_and_the_rename_is_seen_too(store, monkeypatch):
    cid, history = conversation(store)
    theirs = [*history, Message("user", "just in time")]
    real = store_module._still

    def writer_slips_in(*args):
        if not done:
            done.append(1)
            other_program_writes(store.messages_path(cid), dump_history(theirs))
        real(*args)

    done: list[int] = []
    monkeypatch.setattr(store_module, "_still", writer_slips_in)
    saved = store.append(cid, [*history, *TURN[1:]])
    assert saved.merged == theirs[-1:] and store.load(cid) == [*theirs, *TURN[1:]]


# --- a window of the file's end ---------------------------------------------------------------------

ARGS = st.sampled_from(['{"a":1}', '{"x":",{\\"role\\":\\"user\\"}"}', ',{"role":"tool"}', "{}"])


@st.composite
def long_histories(draw: st.DrawFn) -> list[Message]:
    """Histories with system messages first, tool rounds whose raw arguments hold what a message
    start looks like, and plain turns."""
    out = [Message("system", "be brief")] if draw(st.booleans()) else []
    for i in range(draw(st.integers(0, 40))):
        if draw(st.booleans()):
            out += [Message("user", f"q{i}"), Message("assistant", f'a{i} ,{{"role":')]
        else:
            args = draw(ARGS)
            out += [
                Message("user", f"use a tool {i}"),
                Message("assistant", tool_calls=[ToolCall(f"c{i}", "f", args)]),
                Message("tool", f"r{i}", tool_call_id=f"c{i}", tool_name="f"),
            ]
    return out


@settings(max_examples=80)
@given(history=long_histories(), want=st.integers(1, 12))
def test_a_window_reads_as_the_end_of_the_whole(tmp_path_factory, history, want):
    from golem_cli.core.messages import SYSTEM, opens_request

    store = Store(tmp_path_factory.mktemp("w"))
    cid = store.create(history)
    whole = store.read(cid)
    window = store.load_tail(cid, want)
    if window is None:
        return  # read whole instead: always allowed
    head = [m for m in whole[: len(window.head)]]
    assert window.head == head and all(m.role == SYSTEM for m in head)
    assert window.messages == whole[len(whole) - len(window.messages) :]
    assert len(window.messages) >= want and opens_request(window.messages[0])
    assert window.skipped == len(whole) - len(window.head) - len(window.messages) > 0
    store.append(cid, [*window.head, *window.messages, *TURN])  # a window's save appends
    assert store.read(cid) == [*whole, *TURN]
    assert store.meta(cid).messages == len(whole) + 2


def test_a_window_repaired_rewrites_only_what_follows_its_head(store):
    history = [Message("system", "s")]
    for i in range(30):
        history += [Message("user", f"q{i}"), Message("assistant", f"a{i}")]
    history += [Message("user", "last"), Message("assistant", tool_calls=[ToolCall("c1", "f", "{}")])]
    cid = store.create(history)
    window = store.load_tail(cid, 5)
    assert window is not None and window.skipped
    from golem_cli.core.history.repair import normalize_history

    repaired, report = normalize_history([*window.head, *window.messages])
    assert report.changed
    store.save(cid, repaired)
    whole, _ = normalize_history(history)
    assert store.read(cid) == whole
