"""Issue 13's two rows that pay for a missing index: ``golem list --limit 20`` right after the
index is deleted (the rebuild) and ``golem search`` with no index (the byte scan), each paired
with ``grep -rlF`` and a Python loop that reads every file of the directory, measured in the
same run. Wall time and CPU time (user + system of the child: steadier than wall on a shared
machine), medians of interleaved repetitions, and peak memory (the child's own, ``_measure.py``).

    python benchmarks/store_cold.py STORE_HOME [STORE_HOME ...] [--reps 5] [--before SRC]

A STORE_HOME holds ``conversations/`` (``benchmarks/scale.py --keep DIR`` makes them); its
index is deleted before every run (the background builder a command starts is waited for).
``--before SRC`` also runs the golem_cli package found in SRC (e.g. a ``git archive`` of an
earlier commit), interleaved with this one, so before and after share the machine's load.
Run ``python -m compileall -q golem_cli`` (and SRC) first: PYTHONDONTWRITEBYTECODE is set.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from scale import COMMON_MISS, HIT, MISS, READ_LOOP, drop_index

PY = sys.executable
GOLEM = str(Path(sys.executable).parent / "golem")
#: Runs golem_cli from another source tree: the editable install's finder is taken out first.
BEFORE = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')];"
    "sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'golem'; from golem_cli.__main__ import main; sys.exit(main())"
)


def measure(home: Path, reps: int, before: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env["GOLEM_HOME"] = str(home)
    conv = str(home / "conversations")
    versions = {"": [GOLEM]} | ({"before ": [PY, "-c", BEFORE, before]} if before else {})
    cmds: dict[str, list[str]] = {"grep -rlF": ["grep", "-rlF", MISS, conv], "read loop": [PY, "-c", READ_LOOP, conv]}
    for tag, golem in versions.items():
        cmds[f"{tag}list --limit 20, no index"] = [*golem, "list", "--limit", "20"]
        for query in (MISS, COMMON_MISS, HIT):
            cmds[f"{tag}search {query!r}, no index"] = [*golem, "search", query]
    samples: dict[str, list[_measure.Run]] = {name: [] for name in cmds}
    for _ in range(reps):
        for name, cmd in cmds.items():
            drop_index(home)
            samples[name].append(_measure.run(cmd, env, ok=(0, 1)))  # a search that finds nothing exits 1
    drop_index(home)
    med = {
        name: (statistics.median(r.wall for r in v) * 1000, statistics.median(r.cpu for r in v) * 1000, max(r.peak_mib for r in v))
        for name, v in samples.items()
    }
    low = {name: min(r.cpu for r in v) * 1000 for name, v in samples.items()}  # the least disturbed run
    count = sum(1 for name in os.listdir(conv) if not name.endswith(".meta.json"))
    load = os.getloadavg()[0]
    print(f"\n{count:,} conversations ({home}); {reps} reps; load average {load:.1f} at the end")
    print(f"  {'':<44}{'wall':>9}{'cpu':>9}{'min cpu':>9}{'peak':>8}   wall (cpu; min cpu) against the yardstick")
    for name, (wall, cpu, mib) in med.items():
        against = ""
        if name not in ("grep -rlF", "read loop"):
            yard = "read loop" if name.endswith("list --limit 20, no index") else "grep -rlF"
            ratios = f"{wall / med[yard][0]:.2f}x ({cpu / med[yard][1]:.2f}x; {low[name] / low[yard]:.2f}x)"
            against = f"{ratios} {yard.split()[0]}"
        print(f"  {name:<44}{wall:>7.0f}ms{cpu:>7.0f}ms{low[name]:>7.0f}ms{mib:>5.0f}MiB   {against}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homes", nargs="+", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--before", help="a source tree holding golem_cli/ to measure beside this one")
    args = parser.parse_args()
    for home in args.homes:
        measure(home, args.reps, args.before)


if __name__ == "__main__":
    main()
