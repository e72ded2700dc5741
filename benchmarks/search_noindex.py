"""``golem search`` without an index, this tree against another one (``--before``, e.g. a
``git worktree`` of main), beside ``grep -rlF``, interleaved and with the index dropped before
every run (as scale.py's "no index" rows). Wall and CPU (user+sys of the command and its
children, ``_measure.py``) medians: on a loaded machine CPU is the steadier figure.

    python -m compileall -q golem_cli && python benchmarks/search_noindex.py STORE_HOME \\
        --before /work/main [--reps 9] [--queries zebraquantum,notthereatall,'the of and']

STORE_HOME is a store of your own (its index is deleted): copy one, never point this at shared data.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from scale import drop_index

HERE = Path(__file__).resolve().parent.parent


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    done = _measure.run(cmd, env, ok=(0, 1), cwd="/")  # not this tree (`python -m` looks there first)
    return done.wall, done.cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home", type=Path)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--queries", default="zebraquantum,notthereatall,the of and")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env["GOLEM_HOME"] = str(args.home)
    conv = str(args.home / "conversations")
    trees = {"before": args.before, "after": HERE}
    for query in args.queries.split(","):
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in ("grep", *trees)}
        loads: list[float] = []
        for _ in range(args.reps):
            loads.append(os.getloadavg()[0])
            samples["grep"].append(run(["grep", "-rlF", query, conv], env))
            for name, tree in trees.items():
                drop_index(args.home)
                cmd = [sys.executable, "-m", "golem_cli", "search", query]
                samples[name].append(run(cmd, env | {"PYTHONPATH": str(tree)}))
        drop_index(args.home)
        wall = {k: statistics.median(s[0] for s in v) * 1000 for k, v in samples.items()}
        cpu = {k: statistics.median(s[1] for s in v) * 1000 for k, v in samples.items()}
        print(
            f"golem search {query!r}, no index: medians of {args.reps}, load average {min(loads):.1f}-{max(loads):.1f}"
        )
        for name in samples:
            ratio = (
                ""
                if name == "grep"
                else f"  {wall[name] / wall['grep']:.2f}x grep wall, {cpu[name] / cpu['grep']:.2f}x CPU"
            )
            print(f"  {name:<8}{wall[name]:9.1f} ms wall{cpu[name]:9.1f} ms CPU{ratio}", flush=True)


if __name__ == "__main__":
    main()
