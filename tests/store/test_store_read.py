"""``Store.read``: the messages of a conversation for a command that will not save them
(``show``, ``export``), decoded as the file is read, with ``load``'s results and errors."""

from __future__ import annotations

import os
import tracemalloc
from unittest import mock

import pytest
from golem_cli.core.codec import history as codec
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import ConversationNotFound, CorruptConversation, Store


def _history(n: int) -> list[Message]:
    out = []
    for i in range(n // 3):
        call = ToolCall(f"c{i}", "f", '{"role": "user", "x": [{"role":"a"},{"role":"b"}]}')
        out += [Message("user", f"question {i} 東京 <b>", run_id=f"r{i}"),
                Message("assistant", tool_calls=[call], run_id=f"r{i}"),
                Message("tool", "done ,{\"role\":", tool_call_id=call.id, tool_name="f", run_id=f"r{i}")]  # fmt: skip
    return out


def _damaged(store: Store, cid: str, data: bytes) -> None:
    store.messages_path(cid).write_bytes(data)


@pytest.mark.parametrize("case", ["clean", "foreign", "broken", "empty", "null", "missing", "directory", "symlink"])
def test_read_gives_what_load_gives(tmp_path, case):
    store = Store(tmp_path)
    cid = store.create(_history(300))
    path = store.messages_path(cid)
    data = path.read_bytes()
    if case == "foreign":
        path.write_bytes(data.replace(b'"role":"tool"', b'"Role":"tool"'))
    elif case == "broken":
        path.write_bytes(data[: len(data) * 2 // 3])
    elif case in ("empty", "null"):
        path.write_bytes(b"[]" if case == "empty" else b"null")
    elif case == "missing":
        path.unlink()
    elif case == "directory":
        path.unlink()
        path.mkdir()
    elif case == "symlink":
        os.rename(path, tmp_path / "elsewhere.json")
        path.symlink_to(tmp_path / "elsewhere.json")

    def outcome(method):
        try:
            return method(cid)
        except (ConversationNotFound, CorruptConversation) as e:
            return type(e), str(e)

    with mock.patch.object(codec, "PIECE", 1 << 10):
        read = outcome(Store(tmp_path).read)
    assert read == outcome(Store(tmp_path).load)


def test_read_never_holds_the_file_beside_its_messages(tmp_path):
    store = Store(tmp_path)
    cid = store.create(_history(12_000))
    size = store.messages_path(cid).stat().st_size
    with mock.patch.object(codec, "PIECE", 1 << 16):
        tracemalloc.start()
        try:
            messages = Store(tmp_path).read(cid)
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert dump_history(messages) == store.messages_path(cid).read_bytes()
    assert peak - current < size / 4, (size, peak - current)
