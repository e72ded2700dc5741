"""Time from `golem chat` to a ready prompt, on a pseudo-terminal (target: under 300 ms).

Spawns the real console script with pexpect in a fresh GOLEM_HOME (offline echo model) and
waits for the prompt, several times; `python -c pass` on the same terminal is the floor.

    python benchmarks/chat_startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import pexpect

GOLEM = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"


def time_to(command: list[str], pattern: str | type, env: dict[str, str]) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8", dimensions=(40, 120), timeout=30)
    child.expect(pattern)
    elapsed = time.perf_counter() - start
    if child.isalive():
        child.sendeof()
        child.expect(pexpect.EOF)
    child.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="golem-bench-")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(GOLEM_HOME=home, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
    floor = [time_to([sys.executable, "-c", "pass"], pexpect.EOF, env) for _ in range(args.runs)]
    ready = [time_to([GOLEM, "chat"], "you>", env) for _ in range(args.runs)]
    shutil.rmtree(home, ignore_errors=True)
    print(f"python -c pass      median {statistics.median(floor) * 1000:6.0f} ms")
    print(f"golem chat -> you>  median {statistics.median(ready) * 1000:6.0f} ms  "
          f"(min {min(ready) * 1000:.0f}, max {max(ready) * 1000:.0f}; target < 300 ms)")  # fmt: skip


if __name__ == "__main__":
    main()
