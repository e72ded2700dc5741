"""load_history on mutated files (issue 8): whatever the bytes, a history or one
HistoryFormatError line, never another exception and never a hang.

Mutations are what hostile or damaged files hold: huge numbers (int() refuses over 4,300
digits), deep nesting (Go allows 10,000 levels), spans cut, repeated or moved, invalid UTF-8
and lone surrogate escapes, odd values under known and unknown keys. Each example runs under an
alarm far above its normal cost (a hang guard, not a speed check).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

import pytest
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.errors import HistoryFormatError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES

HANG_SECONDS = 20

SNIPPETS = st.sampled_from([
    b"1" * 5000, b"-0.5e-99999", b"1E400", b"[" * 6000, b"]" * 3, b"{" * 3000, b'"\\ud800"', b'"\\u00"',
    b"\xff\xfe", b"\xed\xa0\x80", b"\x00", b"null", b"true", b'{"role":1}', b'"toolCalls":{}', b'"args":',
    b'"parts":[{"data":"@@"}]', b",", b":", b'"', b"\\", b'"unknownKey":' + b"9" * 4500, b" " * 1000,
])  # fmt: skip


@st.composite
def mutated(draw):
    data = bytearray(dump_history(draw(HISTORIES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "cut", "repeat", "truncate"]))
        if kind == "insert":
            data[at:at] = draw(SNIPPETS)
        elif kind == "cut":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 200))] * draw(st.integers(1, 50))
        else:
            del data[at:]
    return bytes(data)


@contextmanager
def hang_guard():
    def fire(signum, frame):
        raise TimeoutError(f"load_history ran over {HANG_SECONDS} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM")
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_mutated_files_give_a_history_or_one_error_line(data):
    with hang_guard():
        try:
            loaded = load_history(data)
        except HistoryFormatError as e:
            assert "\n" not in str(e)
            return
        assert dump_history(load_history(dump_history(loaded))) == dump_history(loaded)


def test_a_number_python_cannot_convert_loads_like_go():
    data = b'[{"role":"user","content":"x","unknownKey":' + b"7" * 5000 + b"}]"
    assert [m.content for m in load_history(data)] == ["x"]
    with pytest.raises(HistoryFormatError, match="must be a string, found number"):
        load_history(b'[{"role":' + b"7" * 5000 + b"}]")


def test_nesting_up_to_go_limit_loads_and_beyond_is_refused():
    deep = b'[{"role":"user","unknownKey":' + b"[" * 9998 + b"]" * 9998 + b"}]"  # 10,000 levels
    assert [m.role for m in load_history(deep)] == ["user"]
    with pytest.raises(HistoryFormatError, match="exceeded max depth"):
        load_history(deep.replace(b"[[", b"[[[", 1).replace(b"]]", b"]]]", 1))
