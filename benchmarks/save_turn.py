"""What a chat turn's save costs on a long conversation, against a plain write of the same bytes.

A 150,000-message conversation (about 81 MB) is loaded, then turn after turn one user message
and one reply are appended and the whole is saved, as a chat session does. Each save is timed
two ways, interleaved: as it runs in a session (only the appended turn is encoded and decoded,
store/saving.py), and encoding every message again (a store that knows no
messages, as every save did before saving.py; the load-back check still decodes only the turn).
The yardstick: writing the same bytes with a plain open/write+fsync. Wall and CPU (this
process's user+sys: the fsync's wait is not in it) medians of ``--runs``. ``--indexed``: the
conversation's text is in the index first (as once a search has indexed it after a
long conversation's first save), so each save also brings the index's text and CRC along.

    python -m compileall -q golem_cli && python benchmarks/save_turn.py [--messages 150000] [--runs 7] [--indexed]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store
from golem_cli.store.saving import KnownMessages
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--indexed", action="store_true",
                        help="index the conversation's text first, as a search does after its first save")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "home")
        cid = store.create(generate(args.messages))
        if args.indexed:  # then every save keeps the index's text (an append is indexed in the save)
            started = time.perf_counter()
            store.index.catch_up()
            print(f"text indexed in {time.perf_counter() - started:.1f} s")
        store = Store(Path(tmp) / "home")  # as `golem resume` does: this process knows only what it loads
        history = store.load(cid)
        print(f"conversation: {len(history)} messages, {store.messages_path(cid).stat().st_size / 1e6:.1f} MB")
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in ("turn", "all", "plain", "dump")}
        yardstick = Path(tmp) / "plain.json"
        for i in range(args.runs):
            history = [*history, Message("user", f"question {i}"), Message("assistant", f"answer {i} " * 40)]
            times["turn"].append(timed(store.save, cid, history))
            data = store.messages_path(cid).read_bytes()
            times["plain"].append(timed(plain_write, yardstick, data))
            history = [*history, Message("user", f"again {i}"), Message("assistant", f"reply {i} " * 40)]
            store._known_messages = KnownMessages()  # knows no messages: encodes them all, as before
            times["all"].append(timed(store.save, cid, history))
            times["dump"].append(timed(dump_history, history))
    wall = {k: statistics.median(t[0] for t in v) * 1000 for k, v in times.items()}
    cpu = {k: statistics.median(t[1] for t in v) * 1000 for k, v in times.items()}
    print(f"medians of {args.runs}, ms:                                 wall      CPU")
    for key, label in (
        ("turn", "save of one turn, encoding the turn"),
        ("all", "save of one turn, encoding every message (before)"),
        ("plain", "yardstick: open/write+fsync of the same bytes"),
        ("dump", "dump_history of the same messages"),
    ):
        print(f"  {label:<52}{wall[key]:8.1f} {cpu[key]:8.1f}")
    print(f"  save over the yardstick, wall: {wall['turn'] / wall['plain']:.2f}x now, {wall['all'] / wall['plain']:.2f}x before")


if __name__ == "__main__":
    main()
