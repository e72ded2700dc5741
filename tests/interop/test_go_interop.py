"""Files golem writes load in a Go program with golem's message types, and the reverse.

A small Go program (gomessage.go: the contract's types, encoding/json) unmarshals a history
and marshals it back. For every generated history, Go must accept golem's file and write back
the same bytes, and golem must read Go's bytes to the same messages. Skipped where no Go
toolchain is installed (.ci/run installs Debian's). Debian's Go predates 1.22, which began
writing \\b and \\f as short escapes, so generated text leaves those two characters out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.history.repair import normalize_history
from golem_cli.core.messages import Message, ToolCall
from hypothesis import given
from hypothesis import strategies as st

from tests.core import strategies

GO = shutil.which("go")
pytestmark = pytest.mark.skipif(
    GO is None,
    reason="no Go toolchain on PATH: install Go 1.19+ (apt-get install golang-go; .ci/run does) to check Go reads and writes golem files",
)


@pytest.fixture(scope="module")
def go_roundtrip(tmp_path_factory):
    out = tmp_path_factory.mktemp("go") / "gomessage"
    env = os.environ | {"GOCACHE": str(tmp_path_factory.mktemp("gocache")), "GO111MODULE": "off"}
    subprocess.run([GO, "build", "-o", str(out), str(Path(__file__).with_name("gomessage.go"))],
                   check=True, env=env, capture_output=True)  # fmt: skip

    def run(data: bytes) -> bytes:
        done = subprocess.run([str(out)], input=data, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout

    return run


def without_b_and_f(history: list[Message]) -> bool:
    return b"\\b" not in dump_history(history) and b"\\f" not in dump_history(history)


@given(strategies.HISTORIES.filter(without_b_and_f))
def test_go_reads_what_golem_writes_and_writes_the_same_bytes(go_roundtrip, history):
    ours = dump_history(history)
    assert go_roundtrip(ours) == ours
    assert load_history(go_roundtrip(ours)) == load_history(ours)


def test_cut_off_arguments_stay_loadable_by_go(go_roundtrip):
    history = [Message(role="assistant", tool_calls=[ToolCall("c1", "roll", '{"sides":'), ToolCall("c2", "f", "")])]
    ours = dump_history(history)
    back = go_roundtrip(ours)
    assert back == ours
    assert load_history(back)[0].tool_calls[0].args == '{"sides":'
    assert normalize_history(load_history(back))[1].truncated == ["c1", "c2"]


def test_spec_example_and_vectors_agree_with_go(go_roundtrip):
    from tests.core.test_codec import spec_example_bytes
    from tests.vectors import load_vector, messages_from_json, vector_files

    exact = spec_example_bytes()
    assert go_roundtrip(exact) == exact
    for path in vector_files():
        vector = load_vector(path)
        for key in ("input", "output"):
            history = messages_from_json(vector[key])
            if history is None or not without_b_and_f(history):
                continue
            ours = dump_history(history)
            assert go_roundtrip(ours) == ours, path.name


@given(st.sampled_from([b'[{"ROLE":"user","Content":"hi","toolcallid":"x"}]', b'[{"role":"user","parts":null}]',
                        b'[null]', b'null', b'[{"role":"assistant","toolCalls":[{"id":"a","args":  {"x" : [1, 2.0]}}]}]']))  # fmt: skip
def test_golem_reads_foreign_spellings_as_go_does(go_roundtrip, data):
    expected = go_roundtrip(data)
    if data == b"null":
        assert expected == b"null"  # Go writes its nil slice as null; golem writes an empty history as []
        expected = b"[]"
    assert dump_history(load_history(data)) == expected



@pytest.mark.parametrize("extra", [
    "1" * 5000, "-" + "9" * 400 + "." + "1" * 400 + "e99999", "1e400", "123456789012345678901234567890",
    "[" * 9998 + "1" + "]" * 9998,  # 10,000 levels with the history's array and message object
    "[" * 9999 + "1" + "]" * 9999,  # 10,001: over Go's limit
])  # fmt: skip
def test_numbers_and_nesting_load_as_go_loads_them(go_roundtrip, extra):
    """Go never converts a number it does not store, and nests up to 10,000 levels."""
    from golem_cli.core.errors import HistoryFormatError

    data = b'[{"role":"user","content":"hi","unknownKey":' + extra.encode() + b"}]"
    try:
        go_roundtrip(data)
        go_ok = True
    except AssertionError:
        go_ok = False
    try:
        ours = load_history(data)
    except HistoryFormatError:
        ours = None
    assert (ours is not None) == go_ok, (go_ok, extra[:20])
    assert go_ok == (not extra.startswith("[" * 9999))
    if ours is not None:
        assert ours == [Message("user", "hi")]
