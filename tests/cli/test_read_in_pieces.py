"""`golem normalize FILE` (and `import`) read a long history a batch of messages at a time:
its bytes are never all held beside its messages, and the messages are freed as the output is
written (issue 13: peak <= 3x the file). Errors stay those of reading the file whole."""

from __future__ import annotations

import hashlib
import random
import tracemalloc
from pathlib import Path
from unittest import mock

import pytest
from golem_cli.cli import common
from golem_cli.core.codec import history as codec
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.errors import HistoryFormatError
from golem_cli.core.messages import Message, ToolCall

WORDS = ["the", "of", "and", "東京", "café", "<div>", "x<y", "return", "import", "def"]


def long_history(n: int, seed: int = 3) -> list[Message]:
    """Turns of a user question, now and then a tool call and its result, and an answer."""
    rnd = random.Random(seed)
    out: list[Message] = []

    def say(role: str, run: str, **fields: object) -> None:
        text = " ".join(rnd.choices(WORDS, k=rnd.randint(5, 120)))
        out.append(Message(role, text, run_id=run, conversation_id="conv-1", **fields))  # type: ignore[arg-type]

    while len(out) < n:
        run = f"run-{len(out):030d}"
        say("user", run)
        if rnd.random() < 0.2:
            call = ToolCall(f"c{len(out)}", "search", '{"q": "x", "n": [1, 2]}')
            say("assistant", run, tool_calls=[call])
            say("tool", run, tool_call_id=call.id, tool_name=call.name)
        say("assistant", run)
    del out[n:]
    while out[-1].tool_calls:  # never a call cut from its result
        out.pop()
    return out


@pytest.fixture(scope="module")
def history_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pieces") / "long.json"
    path.write_bytes(dump_history(long_history(10_000)))
    return path


@pytest.fixture(scope="module")
def damageable_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pieces") / "shorter.json"
    path.write_bytes(dump_history(long_history(1500)))
    return path


def _source(path: Path) -> common.Source:
    return common.Source(str(path), path)


def test_a_long_history_is_never_held_as_bytes_beside_its_messages(history_file):
    """The peak of the reading, less the messages it returns, stays a small part of the file
    (read whole, the peak held every byte of it beside every message)."""
    size = history_file.stat().st_size
    with mock.patch.object(codec, "PIECE", 1 << 18):
        tracemalloc.start()
        try:
            messages = common.read_messages(_source(history_file))
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert messages == load_history(history_file.read_bytes())
    assert peak - current < size / 4, (size, peak - current)


def test_the_messages_are_freed_as_they_are_written(history_file):
    """Encoding gives every non-ASCII string a UTF-8 copy of itself: with the messages alive
    to the end, a dump grew by about the text's size."""
    data = history_file.read_bytes()  # a clean golem file: its messages dump to these bytes
    messages = load_history(data)
    digest = hashlib.sha256()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for chunk in codec.drain_chunks(messages):
            digest.update(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest.digest() == hashlib.sha256(data).digest() and messages == []
    assert peak - start < len(data) / 8, (len(data), peak - start)


def test_drained_chunks_are_the_dump():
    history = long_history(1000)
    expected = dump_history(history)
    assert b"".join(codec.drain_chunks(list(history))) == expected
    assert b"".join(codec.drain_chunks([])) == b"[]"


DEFECTS = [
    (b'"role":"user"', b'"role":7'),  # a wrong type: the Go-semantics reader names it
    (b'"role":"user"', b'"Role":"user"'),  # a foreign spelling: read, by the other reader
    (b'"}', b'"'),  # broken JSON
    (b"]", b",]"),  # a trailing comma
]


@pytest.mark.parametrize(("old", "new"), DEFECTS)
@pytest.mark.parametrize("where", [0.01, 0.5, 0.99])
def test_a_damaged_long_file_reads_as_it_does_whole(damageable_file, tmp_path, old, new, where):
    data = damageable_file.read_bytes()
    at = data.find(old, int(len(data) * where)) if old != b"]" else len(data) - 1
    damaged = tmp_path / "damaged.json"
    damaged.write_bytes(data[:at] + new + data[at + len(old) :])
    source = _source(damaged)
    try:
        whole: list[Message] | str = common.parse_history(damaged.read_bytes(), source.label)
    except HistoryFormatError as e:
        whole = str(e)
    with mock.patch.object(codec, "PIECE", 1 << 14):
        try:
            pieces: list[Message] | str = common.read_messages(source)
        except HistoryFormatError as e:
            pieces = str(e)
    assert pieces == whole


def test_normalize_writes_a_long_file_back_byte_for_byte(golem_main, history_file, tmp_path):
    out = tmp_path / "out.json"
    result = golem_main("normalize", str(history_file), "-o", str(out), "--json")
    assert result.code == 0, result.err
    assert out.read_bytes() == history_file.read_bytes()
    count = len(load_history(history_file.read_bytes()))
    assert f'"messagesIn": {count}' in result.out and f'"messagesOut": {count}' in result.out


def test_a_long_file_with_an_error_is_refused_with_its_position(golem_main, damageable_file, tmp_path):
    data = damageable_file.read_bytes()
    at = data.rfind(b'"role":"user"')
    damaged = tmp_path / "damaged.json"
    damaged.write_bytes(data[:at] + b'"role":true' + data[at + 13 :])
    result = golem_main("normalize", str(damaged))
    assert result.code == 2
    with pytest.raises(HistoryFormatError) as e:
        common.parse_history(damaged.read_bytes(), str(damaged))
    assert f"{e.value}; `golem normalize --salvage {damaged}` recovers its complete messages" in result.err


def test_a_backup_is_copied_a_piece_at_a_time(history_file, tmp_path):
    """`normalize --in-place FILE` backs the file up while its messages are in memory."""
    path = tmp_path / "h.json"
    data = history_file.read_bytes()
    path.write_bytes(data)
    path.chmod(0o640)
    tracemalloc.start()
    try:
        backup = common.backup_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert backup == tmp_path / "h.json.bak" and backup.read_bytes() == data
    assert backup.stat().st_mode & 0o777 == 0o640
    assert peak < len(data) / 4, (len(data), peak)
