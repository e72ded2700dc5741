"""benchmarks/_measure.py reports a command's own peak memory, not the benchmark's: a child
started from a large process must not show that process's memory (Linux counts, in a child's
``ru_maxrss``, the address space it was started from)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pexpect
import pytest
from benchmarks import _measure

MIB = 2**20
ALLOCATE_50 = "b = bytearray(50 * 2**20); b[::4096] = b'x' * (50 * 256)"  # every page touched
PROMPT = "try:\n    input('you> ')\nexcept EOFError:\n    pass\n"  # Ctrl-D ends the prompt


@pytest.fixture
def big_parent() -> Iterator[None]:
    """This process grown to 200 MiB of resident memory, as a benchmark that generated a large
    history in-process is."""
    ballast = bytearray(200 * MIB)
    ballast[::4096] = b"x" * (200 * MIB // 4096)
    yield
    del ballast


def test_a_run_reports_the_commands_own_peak(big_parent: None) -> None:
    env = dict(os.environ)
    idle = _measure.run([sys.executable, "-c", "pass"], env)
    big = _measure.run([sys.executable, "-c", ALLOCATE_50], env)
    assert idle.code == big.code == 0
    assert idle.peak_mib < 40, idle
    assert 45 < big.peak_mib - idle.peak_mib < 60, (idle, big)
    assert big.cpu > 0 and big.wall >= big.cpu / 2


def test_a_run_on_a_terminal_reports_the_whole_runs_peak(big_parent: None) -> None:
    env = dict(os.environ)
    idle = _measure.on_terminal([sys.executable, "-c", PROMPT], env, "you> ")
    big = _measure.on_terminal([sys.executable, "-c", PROMPT + ALLOCATE_50], env, "you> ")
    ended = _measure.on_terminal([sys.executable, "-c", ALLOCATE_50], env, pexpect.EOF)
    assert idle.code == big.code == ended.code == 0
    assert idle.peak_mib < 40, idle
    assert 45 < big.peak_mib - idle.peak_mib < 60, (idle, big)  # allocated after the prompt
    assert 45 < ended.peak_mib - idle.peak_mib < 60, (idle, ended)
