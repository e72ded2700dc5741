"""One run of a command, measured as every benchmark here measures it: wall time, CPU time (user
+ system, steadier than wall on a loaded machine) and peak memory of the command's own process.

Why a launcher: Linux counts in a child's maximum resident set (``ru_maxrss`` from ``wait4``)
the high-water mark of the address space it replaced at exec, and ``subprocess`` starts
children with vfork, so that address space is the parent's: a child started from a benchmark
that loaded golem or generated a 150,000-message history in-process reported the benchmark's
own peak (every row of scale.py 20 MiB or more; the round trip's peaks, less a floor measured
the same way, came out 0). Here a small launcher (``python -S -I``, which never grows) forks,
execs the command and reads the command's own usage from ``wait4``. What it still counts of
the launcher is the launcher's private memory copied at fork, about 6 MiB (``floor_mib()``):
a command smaller than that (``true``, grep on a small store) shows the floor; every Python
process is larger.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

#: Forks, execs argv[2:], waits for it and writes its usage to the file argv[1]. The clock is
#: CLOCK_MONOTONIC (time.monotonic), the same in every process, so a caller can time the
#: command from its fork to something it saw.
LAUNCHER = """
import os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        os.write(2, f"{argv[0]}: {error}\\n".encode())
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - start
code = os.waitstatus_to_exitcode(status)
with open(report, "w") as f:
    f.write(f"{start!r} {wall!r} {usage.ru_utime + usage.ru_stime!r} {usage.ru_maxrss} {code}")
sys.exit(min(code, 255) if code >= 0 else 128 - code)
"""


@dataclass(frozen=True)
class Run:
    """What one run of a command cost."""

    wall: float  #: seconds, from the command's fork to its end (to the pattern, on a terminal)
    cpu: float  #: seconds of user + system time of the command and the children it waited for
    peak_mib: float  #: the command's own maximum resident set
    code: int  #: its exit code (negative: the signal that ended it)
    stdout: bytes = b""
    stderr: bytes = b""
    #: on a terminal: seconds from the fork to the pattern, then to what each of ``then`` showed
    seen: tuple[float, ...] = ()
    #: on a terminal: seconds from each of ``then`` typed to what it showed
    answers: tuple[float, ...] = ()
    #: on a terminal: the command's CPU seconds (its own threads) when each of ``seen`` was seen
    cpu_seen: tuple[float, ...] = ()
    #: on a terminal: the command's CPU seconds when each of ``then`` was typed
    cpu_typed: tuple[float, ...] = ()


@dataclass(frozen=True)
class Keys:
    """Keys typed on a terminal after ``pause`` seconds (a person reading, typing), and what shows
    once the program has read them."""

    typed: str
    shown: str
    pause: float = 0.0


@dataclass(frozen=True)
class _Report:
    start: float
    wall: float
    cpu: float
    peak_mib: float
    code: int


def _launch(report: str, cmd: list[str]) -> list[str]:
    return [sys.executable, "-S", "-I", "-c", LAUNCHER, report, *cmd]


def _read(report: str, cmd: list[str], err: bytes) -> _Report:
    try:
        with open(report) as f:
            start, wall, cpu, peak_kib, code = f.read().split()
    except (OSError, ValueError):
        raise SystemExit(
            f"{' '.join(cmd)}: the launcher wrote no report: {err.decode(errors='replace')[:500]}"
        ) from None
    return _Report(float(start), float(wall), float(cpu), int(peak_kib) / 1024, int(code))


def _report_path() -> str:
    fd, path = tempfile.mkstemp(prefix="golem-measure-")
    os.close(fd)
    return path


def run(
    cmd: list[str], env: dict[str, str], ok: tuple[int, ...] | None = (0,), cwd: str | None = None, stdout: bool = False
) -> Run:
    """One run of ``cmd`` with its output discarded (``stdout=True`` keeps it), stopping the
    benchmark with the command's error when its exit code is not in ``ok`` (None: any)."""
    report = _report_path()
    try:
        proc = subprocess.run(
            _launch(report, cmd), env=env, cwd=cwd,
            stdout=subprocess.PIPE if stdout else subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        got = _read(report, cmd, proc.stderr)
    finally:
        os.unlink(report)
    if ok is not None and got.code not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed ({got.code}): {proc.stderr.decode(errors='replace')[:500]}")
    return Run(got.wall, got.cpu, got.peak_mib, got.code, proc.stdout or b"", proc.stderr)


def on_terminal(
    cmd: list[str], env: dict[str, str], pattern: object, timeout: float = 60, *, then: Sequence[Keys] = ()
) -> Run:
    """``cmd`` on a pseudo-terminal (40 x 120) until ``pattern`` (a pexpect pattern) is printed;
    then each of ``then`` typed and what it shows awaited; then ended with Ctrl-U and Ctrl-D.
    Wall time is from its fork to the last thing awaited (to its end for ``pexpect.EOF``);
    CPU time and peak memory are the whole run's."""
    import pexpect

    report = _report_path()
    try:
        launch = _launch(report, cmd)
        child = pexpect.spawn(launch[0], launch[1:], env=env, encoding="utf-8", dimensions=(40, 120), timeout=timeout)
        child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
        child.expect(pattern)
        seen, answers, cpu, typed = [time.monotonic()], [], [_cpu_of_child(child.pid)], []
        for keys in then:
            time.sleep(keys.pause)
            typed.append(_cpu_of_child(child.pid))
            sent = time.monotonic()
            child.send(keys.typed)
            child.expect_exact(keys.shown)
            seen.append(time.monotonic())
            cpu.append(_cpu_of_child(child.pid))
            answers.append(seen[-1] - sent)
        if child.isalive():
            child.send("\x15")  # Ctrl-U: a prompt holding text takes Ctrl-D as a deletion
            child.sendeof()
            child.expect(pexpect.EOF)
        child.close()
        got = _read(report, cmd, b"")
    finally:
        os.unlink(report)
    since = (got.wall,) if pattern is pexpect.EOF else tuple(t - got.start for t in seen)
    return Run(since[-1], got.cpu, got.peak_mib, got.code, seen=since, answers=tuple(answers),
               cpu_seen=tuple(cpu), cpu_typed=tuple(typed))  # fmt: skip


def _cpu_of_child(launcher: int) -> float:
    """The CPU seconds (user + system, its own threads) of the command ``launcher`` started, read
    from /proc now: steadier than wall time on a loaded machine. 0 once it has ended."""
    try:
        with open(f"/proc/{launcher}/task/{launcher}/children") as f:
            (pid,) = f.read().split()
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@functools.cache
def floor_mib() -> float:
    """The smallest peak a command can show: what the launcher's fork copies into it."""
    return run(["true"], dict(os.environ)).peak_mib
