"""``files.read_pieces``: ``read_regular`` a piece at a time, with the same refusals."""

from __future__ import annotations

import os

import pytest
from golem_cli.store.files import UnreadableFile, read_pieces, read_regular


def test_pieces_are_the_file_in_order(tmp_path):
    path = tmp_path / "h.json"
    data = os.urandom(100_000)
    path.write_bytes(data)
    pieces = list(read_pieces(path, piece=4096))
    assert b"".join(pieces) == data == read_regular(path)
    assert max(map(len, pieces)) <= 4096 and len(pieces) >= 100_000 // 4096


def _error(call):
    try:
        call()
    except (OSError, UnreadableFile) as e:
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", ["missing", "directory", "fifo", "too large", "symlink", "proc"])
def test_the_refusals_are_those_of_read_regular(tmp_path, case):
    path = tmp_path / "x.json"
    follow, limit = True, 1 << 20
    if case == "directory":
        path.mkdir()
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "too large":
        path.write_bytes(b"[" + b" " * 2000 + b"]")
        limit = 1000
    elif case == "symlink":
        (tmp_path / "real.json").write_bytes(b"[]")
        path.symlink_to(tmp_path / "real.json")
        follow = False
    elif case == "proc":
        path = "/proc/self/status"
        if not os.path.exists(path):
            pytest.skip("no /proc")
    expected = _error(lambda: read_regular(path, limit, follow=follow))
    assert expected is not None
    assert _error(lambda: list(read_pieces(path, limit, follow=follow, piece=64))) == expected


def test_a_file_growing_past_the_limit_as_it_is_read_is_refused(tmp_path):
    path = tmp_path / "h.json"
    path.write_bytes(b"x" * 100)
    pieces = read_pieces(path, 150, piece=64)
    assert next(pieces) == b"x" * 64
    with path.open("ab") as f:
        f.write(b"y" * 100)
    with pytest.raises(UnreadableFile, match="too large"):
        list(pieces)
