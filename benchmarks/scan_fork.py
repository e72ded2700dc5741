"""Whether ``golem search`` without an index should fork a second scanner, and what tells it.

The scan of every messages file (store/textscan.py) can read half the files in a forked child.
That pays when a CPU is idle and costs CPU (copying the process) when none is. This script
measures the scan of a store's files both ways, single and forked, interleaved, in fresh
child processes, under machine states made on purpose:

- ``idle``: nothing added (the machine's own load is printed beside it);
- ``1 busy``: one busy loop (``while True: pass``) pinned to CPU 1 with ``taskset``;
- ``2 busy``: two busy loops, one per CPU;
- ``1 free``, ``2 free``: one or two busy loops the scheduler may move (not pinned);
- ``pinned``: the scanner itself pinned to one CPU (``taskset -c 0``), nothing added;
- ``idle after``: nothing added, right after the busy states (the 1-minute load average
  still says busy).

For every run it records what each signal said just before, from inside the scanning process
(as search does): the 1-minute load average (``os.getloadavg``, what the scan used) and the
runnable count (``/proc/loadavg``'s fourth field), so their decisions can be set against the
mode that was faster. Wall and CPU (user+sys of the scanner and its forked child) per mode.

    python -m compileall -q golem_cli && python benchmarks/scan_fork.py STORE_HOME [--reps 7] [--query zebraquantum]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

CHILD = r"""
import os, resource, sys, time
from golem_cli.store import textscan
from golem_cli.store.search import _prefilter, parse_query
directory, mode, query = sys.argv[1:4]
names, _ = textscan.message_files(directory)
prefilter = _prefilter(parse_query(query))
with open("/proc/loadavg") as f:
    runnable = f.read().split()[3].split("/")[0]
load1 = os.getloadavg()[0]
decided = textscan._second_scanner_pays()
r0, c0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
scan = textscan._scan_forked if mode == "fork" else textscan._scan_part
found = scan(directory, names, prefilter, 1 << 30)
wall = time.perf_counter() - start
r1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = sum(b - a for a, b in ((r0.ru_utime, r1.ru_utime), (r0.ru_stime, r1.ru_stime), (c0.ru_utime, c1.ru_utime), (c0.ru_stime, c1.ru_stime)))
print(wall, cpu, load1, runnable, int(decided), len(found.candidates))
"""

BUSY = [sys.executable, "-c", "while True: pass"]


def one(directory: str, mode: str, query: str, prefix: list[str]) -> tuple[float, float, float, int, int, int]:
    out = subprocess.run([*prefix, sys.executable, "-c", CHILD, directory, mode, query],
                         capture_output=True, text=True, check=True)  # fmt: skip
    wall, cpu, load1, runnable, decided, found = out.stdout.split()
    return float(wall), float(cpu), float(load1), int(runnable), int(decided), int(found)


Run = tuple[float, float, float, int, int, int]  # wall s, CPU s, load1, runnable, forks?, files found
PAIRS: list[tuple[Run, Run]] = []  # (single, forked) run one after the other


def state(name: str, directory: str, query: str, reps: int, busy: int, free: bool, pinned: bool) -> None:
    pin = [] if free else ["taskset", "-c"]
    loops = [subprocess.Popen([*pin, *([str(1 - i % 2)] if pin else []), *BUSY]) for i in range(busy)]
    prefix = ["taskset", "-c", "0"] if pinned else []
    try:
        time.sleep(0.5 if busy else 0)
        runs: dict[str, list[Run]] = {"single": [], "fork": []}
        for _ in range(reps):
            for mode in runs:
                runs[mode].append(one(directory, mode, query, prefix))
            if not pinned:  # pinned: the scanner has one CPU whatever the machine's count says
                PAIRS.append((runs["single"][-1], runs["fork"][-1]))
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    wall = {m: statistics.median(r[0] for r in v) * 1000 for m, v in runs.items()}
    cpu = {m: statistics.median(r[1] for r in v) * 1000 for m, v in runs.items()}
    every = runs["single"] + runs["fork"]
    load1 = statistics.median(r[2] for r in every)
    runnable = statistics.median(r[3] for r in every)
    said = sum(r[4] for r in every) / len(every)
    assert len({r[5] for r in every}) == 1, "single and forked scans found different files"
    print(f"  {name:<11}{wall['single']:9.1f}{cpu['single']:8.1f}{wall['fork']:9.1f}{cpu['fork']:8.1f}"
          f"{wall['fork'] / wall['single']:8.2f}x{load1:8.2f}{runnable:7.1f}{said:9.0%}", flush=True)  # fmt: skip


def by_signal(cpus: int) -> None:
    """Every pair of runs, grouped by the runnable count the single run saw; then what each
    decision would have cost over all pairs: the wall of the mode it picks, run by run."""
    print("\nall pairs by the runnable count (this scanner included) seen before the single run:")
    print("  runnable  pairs  fork/single (median)  fork faster")
    groups: dict[int, list[tuple[Run, Run]]] = {}
    for single, fork in PAIRS:
        groups.setdefault(min(single[3], cpus + 2), []).append((single, fork))
    for n, pairs in sorted(groups.items()):
        ratio = statistics.median(f[0] / s[0] for s, f in pairs)
        faster = sum(f[0] < s[0] for s, f in pairs) / len(pairs)
        print(f"  {n:>5}{'+' if n == cpus + 2 else ' '}  {len(pairs):>6}  {ratio:>12.2f}x  {faster:>14.0%}")
    rules = {
        "never fork": lambda s, f: False,
        "always fork": lambda s, f: True,
        "load average < CPUs - 1 (before)": lambda s, f: s[2] < cpus - 1,
        "runnable < CPUs (a CPU idle now)": lambda s, f: s[3] - 1 < cpus - 1,
        "runnable != CPUs (idle or saturated: now)": lambda s, f: s[3] != cpus,
        "the faster of the two (oracle)": lambda s, f: f[0] < s[0],
    }
    print("\nthe scan's total wall over all pairs, had each rule chosen (sum of the chosen runs):")
    for label, rule in rules.items():
        walls = [(f if rule(s, f) else s) for s, f in PAIRS]
        print(
            f"  {label:<46}{sum(r[0] for r in walls) * 1000:9.0f} ms wall{sum(r[1] for r in walls) * 1000:9.0f} ms CPU"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--query", default="zebraquantum")
    parser.add_argument("--states", default="idle,1 busy,1 free,2 busy,2 free,pinned,idle after")
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        raise SystemExit("taskset (util-linux) is needed")
    directory = os.path.join(args.home, "conversations")
    names = [n for n in os.listdir(directory) if n.endswith(".json") and not n.endswith(".meta.json")]
    print(f"{len(names)} conversations, query {args.query!r}, {os.cpu_count()} CPUs, medians of {args.reps}")
    print("  state        single ms   CPU   forked ms   CPU  fork/single  load1  runnable  scan forks")
    for name in args.states.split(","):
        busy = int(name[0]) if name[0].isdigit() else 0
        state(name, directory, args.query, args.reps, busy, free=name.endswith("free"), pinned=name == "pinned")
    by_signal(os.cpu_count() or 1)
    print("  (load1: 1-minute load average; runnable: /proc/loadavg's 4th field, this scanner included; "
          "'scan forks': how often textscan._second_scanner_pays() said fork)")  # fmt: skip


if __name__ == "__main__":
    main()
