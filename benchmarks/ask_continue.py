"""What one more ``golem ask -c`` costs on a long conversation, against the same on a short one.

Two stores: one holding a conversation of ``--messages`` (150,000 by default, golem's own
spelling, with its metadata sidecar), one holding 20 messages. ``golem ask -c -m offline:echo``
(no network) is run ``--runs`` times on each, alternating, through the real console script of
the tree under test (``--golem``: ``/work/wt/before/.venv/bin/golem`` for the tree before);
wall and CPU (children's user+sys) medians. The yardstick is the same command on the short
conversation, in the same run: ADR 0025's goal is within 2x of it.

    python -m compileall -q golem_cli && python benchmarks/ask_continue.py [--messages 150000] [--runs 5] [--golem PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golem_cli.store import Store
from history_roundtrip import generate


def store_with(root: Path, n: int) -> None:
    store = Store(root)
    store.create(generate(n), model="offline:echo")


def ask_c(golem: str, home: Path, i: int) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")} | {"GOLEM_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([golem, "ask", "-c", "-m", "offline:echo", f"one more {i}"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--golem", default=shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        long_home, short_home = Path(tmp) / "long", Path(tmp) / "short"
        store_with(long_home, args.messages)
        store_with(short_home, 20)
        size = max(p.stat().st_size for p in (long_home / "conversations").glob("*.json"))
        times: dict[str, list[tuple[float, float]]] = {"long": [], "short": []}
        ask_c(args.golem, long_home, -1)  # the first run builds the index: not timed
        ask_c(args.golem, short_home, -1)
        for i in range(args.runs):
            times["long"].append(ask_c(args.golem, long_home, i))
            times["short"].append(ask_c(args.golem, short_home, i))
    wall = {k: statistics.median(t[0] for t in v) * 1000 for k, v in times.items()}
    cpu = {k: statistics.median(t[1] for t in v) * 1000 for k, v in times.items()}
    print(f"{args.golem}: ask -c, medians of {args.runs}, ms:            wall      CPU")
    print(f"  on {args.messages:,} messages ({size / 1e6:.1f} MB){'':<17}{wall['long']:8.0f} {cpu['long']:8.0f}")
    print(f"  yardstick: on 20 messages{'':<27}{wall['short']:8.0f} {cpu['short']:8.0f}")
    print(f"  long over short, wall: {wall['long'] / wall['short']:.2f}x, CPU: {cpu['long'] / cpu['short']:.2f}x")


if __name__ == "__main__":
    main()
