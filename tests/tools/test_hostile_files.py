"""The file tools against trees a person did not arrange for them: named pipes, devices and
sockets, names the OS refuses, files that are not UTF-8 or use CRLF, enormous lines, huge
files, and regular expressions that backtrack for ever. Real files and processes."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from golem_cli.core.tools import ToolFailed
from golem_cli.tools.builtin import BuiltinSource, ToolSettings
from golem_cli.tools.registry import Registry

from tests.tools.conftest import CTX, call


def unblock_later(fifo: Path, seconds: float = 5) -> None:
    """Open the FIFO for writing after a while, so a reader stuck on it (the bug) comes back
    and the test fails instead of hanging."""

    def opener() -> None:
        time.sleep(seconds)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"late\n")
            os.close(fd)
        except OSError:
            pass

    threading.Thread(target=opener, daemon=True).start()


def timed(registry, name: str, **args) -> tuple[str | Exception, float]:
    started = time.monotonic()
    try:
        result: str | Exception = call(registry, name, **args)
    except Exception as e:
        result = e
    return result, time.monotonic() - started


def test_a_named_pipe_is_refused_by_read_and_skipped_by_search(registry, root: Path):
    fifo = root / "pipe"
    os.mkfifo(fifo)
    unblock_later(fifo)
    result, took = timed(registry, "read_file", path="pipe")
    assert isinstance(result, ToolFailed) and took < 3
    assert result.reason == "'pipe' is a named pipe (FIFO), not a regular file; read_file reads regular files only"
    found, took = timed(registry, "search_files", pattern="hello")
    assert found == "hello.txt:1: hello" and took < 3
    assert "pipe  [a named pipe (FIFO)]" in call(registry, "list_files").splitlines()
    for name, args in (("write_file", {"content": "x"}), ("edit_file", {"old_text": "a", "new_text": "b"})):
        refused, took = timed(registry, name, path="pipe", **args)
        assert isinstance(refused, ToolFailed) and "is a named pipe (FIFO)" in refused.reason and took < 3
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # never replaced


def test_sockets_and_devices_are_refused(registry, root: Path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    try:
        with pytest.raises(ToolFailed, match="'sock' is a socket, not a regular file"):
            call(registry, "read_file", path="sock")
    finally:
        server.close()
    try:
        os.mknod(root / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here")
    result, took = timed(registry, "read_file", path="zero")
    assert isinstance(result, ToolFailed) and "a character device" in result.reason and took < 3
    assert call(registry, "search_files", pattern="zzz").startswith("no matches")


def test_os_errors_are_failed_results_with_the_os_reason(registry, root: Path):
    long_name = "é" * 200 + ".txt"  # 401 bytes: more than a name may be
    for name, args in (
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_text": "a", "new_text": "b"}),
        ("list_files", {}),
        ("search_files", {"pattern": "x"}),
    ):
        with pytest.raises(ToolFailed, match="File name too long") as info:
            call(registry, name, path=long_name, **args)
        assert len(info.value.reason) < 300, name
    deep = "/".join(["b"] * 2500) + "/c.txt"
    with pytest.raises(ToolFailed, match="too long"):
        call(registry, "write_file", path=deep, content="x")
    with pytest.raises(ToolFailed, match="the path is empty"):
        call(registry, "write_file", path="", content="x")


def test_edit_keeps_every_byte_outside_the_edit_in_a_file_that_is_not_utf8(registry, root: Path):
    latin = root / "latin.txt"
    latin.write_bytes(b"caf\xe9 au lait\nhello world\n")
    preview = registry.entry("edit_file").preview({"path": "latin.txt", "old_text": "hello", "new_text": "HELLO"})
    assert " caf\\xe9 au lait" in preview and "+HELLO world" in preview  # the byte shown as it stays
    assert call(registry, "edit_file", path="latin.txt", old_text="hello", new_text="HELLO").endswith("1 replacement")
    assert latin.read_bytes() == b"caf\xe9 au lait\nHELLO world\n"
    written = call(registry, "write_file", path="latin.txt", content="all new\n")
    assert written == "replaced latin.txt (8 bytes)" and latin.read_bytes() == b"all new\n"


def test_edit_matches_unix_line_ends_in_a_crlf_file(registry, root: Path):
    crlf = root / "crlf.txt"
    crlf.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call(registry, "edit_file", path="crlf.txt", old_text="one\ntwo\n", new_text="1\n2\n")
    assert crlf.read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_new_files_follow_the_umask_and_existing_ones_keep_their_mode(registry, root: Path):
    before = os.umask(0o022)
    try:
        call(registry, "write_file", path="site/index.html", content="<p>hi</p>\n")
        assert stat.S_IMODE((root / "site/index.html").stat().st_mode) == 0o644
        os.umask(0o077)
        call(registry, "write_file", path="private.txt", content="x")
        assert stat.S_IMODE((root / "private.txt").stat().st_mode) == 0o600
        (root / "hello.txt").chmod(0o755)
        call(registry, "edit_file", path="hello.txt", old_text="hello", new_text="hi")
        assert stat.S_IMODE((root / "hello.txt").stat().st_mode) == 0o755
    finally:
        os.umask(before)


def test_reading_an_enormous_line_stays_small_in_memory(root: Path, tmp_path: Path):
    huge = root / "oneline.txt"
    with open(huge, "wb") as f:
        f.write(b"a" * 8192)
        f.truncate(200 * 1024 * 1024)  # 200 MB without a newline (sparse: NULs after the start)
    # The peak of this process's own memory (VmHWM: ru_maxrss would count the parent's
    # pages too, since it survives the exec, and pytest grows large in a full run).
    script = (
        "import re, sys\n"
        "from golem_cli.tools.confine import Root\n"
        "from golem_cli.tools.files import FileTools\n"
        "text = FileTools(Root(sys.argv[1])).read_file('oneline.txt')\n"
        "peak = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "print(len(text), peak // 1024)\n"
        "print(text[-250:])\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, last = done.stdout.split("\n", 1)
    size, peak_mb = map(int, first.split())
    assert size <= 30_000 and peak_mb < 120, (size, peak_mb)
    assert "line 1 is longer than the output limit" in last
    assert last.rstrip().endswith("[golem: showing line 1 (the output limit is reached); read on with start_line=2]")


def test_search_names_the_files_it_skips_for_size(registry, root: Path):
    big = root / "big.log"
    with open(big, "wb") as f:
        f.write(b"needle\n")
        f.truncate(9 * 1024 * 1024)
    found = call(registry, "search_files", pattern="needle")
    assert (
        found == "no matches for 'needle' in 1 files under .\n[golem: 1 file(s) over 8 MB were not searched: big.log]"
    )


def test_a_backtracking_pattern_is_stopped_at_the_deadline(root: Path):
    (root / "r.txt").write_text("a" * 40 + "!\n")
    (root / "s.txt").write_text("aaa\n")
    registry = Registry([BuiltinSource(ToolSettings(root=root, search_timeout=1.5))])
    result, took = timed(registry, "search_files", pattern="(a+)+$")
    assert took < 6, took
    assert isinstance(result, str) and "the search was stopped after 1.5s" in result
    assert workers() == []


def test_cancelling_a_search_kills_its_process_at_once(root: Path):
    (root / "r.txt").write_text("a" * 40 + "!\n")
    registry = Registry([BuiltinSource(ToolSettings(root=root))])
    tool = registry.entry("search_files").tool

    async def scenario() -> float:
        task = asyncio.create_task(tool.call(tool.decode_args('{"pattern": "(a+)+$"}'), CTX))
        deadline = time.monotonic() + 10
        while not workers() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert workers(), "the search never started a worker"
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 1
    assert workers() == []


def workers() -> list[int]:
    """Live search workers started by this process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and b"worker_main" in command:
            found.append(int(entry))
    return found
