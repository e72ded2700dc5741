"""Issue 8.6: ``-a FILE`` and ``/attach FILE`` read only regular files, and at most the 20 MB
limit whatever ``stat`` said. Real files: a symlink to /dev/zero, a FIFO, /proc/self/environ
(where the API keys are), a sparse file over the limit, a directory, a socket. Each is one line
and exit 2 at once, nothing is sent and nothing is stored."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from golem_cli.cli.attach import MAX_BYTES, part_from
from golem_cli.core.errors import InputError
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error

TIMEOUT = 30  # a FIFO or /dev/zero read would never end: the test fails instead of hanging


def hostile(tmp_path: Path, kind: str) -> tuple[str, str]:
    """A path of ``kind`` to attach, and words its error must hold."""
    path = tmp_path / "cat.png"
    if kind == "zero-link":
        path.symlink_to("/dev/zero")
        return str(path), "cat.png is a device, not a file golem attaches (a link to /dev/zero)"
    if kind == "fifo":
        os.mkfifo(path)
        return str(path), "cat.png is a FIFO (named pipe), not a file golem attaches"
    if kind == "environ":
        return (
            "/proc/self/environ",
            "/proc/self/environ is a file the system makes up (/proc, /sys)",
        )
    if kind == "environ-link":
        (tmp_path / "notes.txt").symlink_to("/proc/self/environ")
        return str(tmp_path / "notes.txt"), "a file the system makes up (/proc, /sys), not a file golem attaches"
    if kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(MAX_BYTES + 1)
        return str(path), "cat.png: 20.0 MB is too large to attach (at most 20 MB)"
    if kind == "directory":
        return str(tmp_path), "is a directory, not a file golem attaches"
    assert kind == "socket"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    return str(path), "cat.png is a socket, not a file golem attaches"


KINDS = [
    "zero-link",
    "fifo",
    "environ",
    "environ-link",
    "sparse",
    "directory",
    "socket",
]


@pytest.mark.parametrize("kind", KINDS)
def test_ask_refuses_it_in_one_line(home, golem, tmp_path, kind):
    source, words = hostile(tmp_path, kind)
    done = golem("ask", "-m", "offline:echo", "-a", source, "what is it?", timeout=TIMEOUT)
    assert done.code == 2
    assert_one_line_error(done)
    assert words in done.err
    assert Store(home).list() == []


@pytest.mark.parametrize("kind", KINDS)
def test_part_from_refuses_it(tmp_path, kind):
    source, words = hostile(tmp_path, kind)
    with pytest.raises(InputError) as caught:
        part_from(source)
    assert words in str(caught.value)


def test_the_read_stops_at_the_limit_whatever_stat_said(tmp_path, monkeypatch):
    """A file that grows after it was measured, or a file system that reports less than it
    holds: the read stops one byte past the limit instead of taking what comes."""
    big = tmp_path / "big.png"
    with open(big, "wb") as f:
        f.truncate(MAX_BYTES + (1 << 20))
    real_stat, real_fstat, real_read = os.stat, os.fstat, os.read

    def small(st: os.stat_result) -> os.stat_result:
        fields = list(st)
        fields[stat.ST_SIZE] = 10  # what a lying stat says
        return os.stat_result(fields)

    reads: list[int] = []
    with monkeypatch.context() as m:
        m.setattr(os, "stat", lambda *a, **k: small(real_stat(*a, **k)))
        m.setattr(os, "fstat", lambda fd: small(real_fstat(fd)))
        m.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
        with pytest.raises(InputError) as caught:
            part_from(str(big))
    assert f"big.png: more than {MAX_BYTES >> 20} MB is too large to attach" in str(caught.value)
    assert sum(reads) <= MAX_BYTES + 1


def test_regular_files_and_links_to_them_still_attach(tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "notes.txt")
    (tmp_path / "empty.txt").write_text("")
    assert part_from(str(tmp_path / "link.txt")).text == "buy milk\n"  # type: ignore[union-attr]
    assert part_from(str(tmp_path / "empty.txt")).text == ""  # type: ignore[union-attr]
