"""What a chat turn's save costs on a long conversation, against a plain write of the same bytes.

A 150,000-message conversation is loaded, then turn after turn one user message and one reply
are saved as a chat session saves them. The save is timed as the tree under test makes it
(``Store.append`` where the store has it: the bytes on disk copied from the held descriptor, only
the turn encoded, ADR 0025; else ``Store.save``), beside the yardstick, writing the same bytes
with a plain open/write+fsync, interleaved. Run it with each tree's interpreter (``/work/wt/before``
for the tree before) to compare them, each with its yardstick in its own run. Wall and CPU (this
process's user+sys: the fsync's wait is not in it) medians of ``--runs``. ``--indexed``: the
conversation's text is in the index first, so each save also brings the index's text along.
Also: the peak memory of loading it (what ``resume`` holds) over the file's size.

    python -m compileall -q golem_cli && python benchmarks/save_turn.py [--messages 150000] [--runs 7] [--indexed]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golem_cli.core.messages import Message
from golem_cli.store import Store
from history_roundtrip import generate


def timed(fn: Callable[..., object], *args: object) -> tuple[float, float]:
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - start, time.process_time() - cpu


def plain_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


LOAD = """
import sys
from golem_cli.store import Store
import golem_cli.store.store
def peak():  # this process's high-water mark (VmHWM: ru_maxrss keeps the parent's across exec)
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024
empty = peak()
messages = Store(sys.argv[1]).load(sys.argv[2])
print(len(messages), peak(), empty)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--indexed", action="store_true",
                        help="index the conversation's text first, as a search does after its first save")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "home")
        made = generate(args.messages)
        cid = store.create(made)
        del made
        if args.indexed:  # then every save keeps the index's text (an append is indexed in the save)
            started = time.perf_counter()
            store.index.catch_up()
            print(f"text indexed in {time.perf_counter() - started:.1f} s")
        size = store.messages_path(cid).stat().st_size
        loading = subprocess.run([sys.executable, "-c", LOAD, str(Path(tmp) / "home"), cid], capture_output=True,
                                 text=True, check=True).stdout.split()  # fmt: skip
        print(f"conversation: {loading[0]} messages, {size / 1e6:.1f} MB; a process loading it (resume) peaks at "
              f"{float(loading[1]):.0f} MiB, {float(loading[1]) * 2**20 / size:.2f}x the file "
              f"(an empty process: {float(loading[2]):.0f} MiB)")  # fmt: skip
        store = Store(Path(tmp) / "home")  # as `golem resume` does: this process knows only what it loads
        history = store.load(cid)
        save = getattr(store, "append", store.save)  # the tree before this save path has only save
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in ("turn", "plain")}
        yardstick = Path(tmp) / "plain.json"
        for i in range(args.runs):
            history = [*history, Message("user", f"question {i}"), Message("assistant", f"answer {i} " * 40)]
            times["turn"].append(timed(save, cid, history))
            data = store.messages_path(cid).read_bytes()
            times["plain"].append(timed(plain_write, yardstick, data))
            del data
    wall = {k: statistics.median(t[0] for t in v) * 1000 for k, v in times.items()}
    cpu = {k: statistics.median(t[1] for t in v) * 1000 for k, v in times.items()}
    print(f"medians of {args.runs}, ms:                                 wall      CPU")
    for key, label in (
        ("turn", f"save of one turn ({save.__name__})"),
        ("plain", "yardstick: open/write+fsync of the same bytes"),
    ):
        print(f"  {label:<52}{wall[key]:8.1f} {cpu[key]:8.1f}")
    print(f"  save over the yardstick, wall: {wall['turn'] / wall['plain']:.2f}x")


if __name__ == "__main__":
    main()
