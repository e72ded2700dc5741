"""What a chat turn's save costs on a long conversation, and how much of it is the load-back check.

A 150,000-message conversation (about 54 MB) is loaded, then turn after turn one user message
and one reply are appended and the whole is saved, as a chat session does. Each save is timed
three ways, interleaved: with the check as it runs in a session (only the appended turn is
decoded), with the check decoding the whole file (as every save did before; a fresh
``LoadBackCheck`` knows no bytes), and the yardstick: writing the same bytes with a plain
open/write+fsync. The check is also timed alone, both ways, against ``dump_history`` of the
same messages. Medians of ``--runs``.

    python -m compileall -q golem_cli && python benchmarks/save_turn.py [--messages 150000] [--runs 7]
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

from golem_cli.core.codec import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store
from golem_cli.store.loadback import LoadBackCheck
from history_roundtrip import generate


def timed(fn: Callable[..., object], *args: object) -> float:
    gc.collect()
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def plain_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "home")
        cid = store.create(generate(args.messages))
        history = store.load(cid)  # as `golem resume` does: the store now knows these bytes load
        print(f"conversation: {len(history)} messages, {store.messages_path(cid).stat().st_size / 1e6:.1f} MB")
        times: dict[str, list[float]] = {k: [] for k in ("turn", "whole", "plain", "check-turn", "check-whole", "dump")}
        yardstick = Path(tmp) / "plain.json"
        for i in range(args.runs):
            history = [*history, Message("user", f"question {i}"), Message("assistant", f"answer {i} " * 40)]
            times["turn"].append(timed(store.save, cid, history))
            data = store.messages_path(cid).read_bytes()
            times["plain"].append(timed(plain_write, yardstick, data))
            history = [*history, Message("user", f"again {i}"), Message("assistant", f"reply {i} " * 40)]
            store._loads_back = LoadBackCheck()  # knows nothing: decodes the whole file, as before
            times["whole"].append(timed(store.save, cid, history))
            data = dump_history(history)
            times["dump"].append(timed(dump_history, history))
            fresh = LoadBackCheck()
            times["check-whole"].append(timed(fresh.check, data))
            warm = LoadBackCheck()
            warm.remember(dump_history(history[:-2]))
            times["check-turn"].append(timed(warm.check, data))
    ms = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"medians of {args.runs}, wall ms:")
    print(f"  save of one turn, check decodes the turn   {ms['turn']:8.1f}")
    print(f"  save of one turn, check decodes the whole  {ms['whole']:8.1f}")
    print(f"  yardstick: open/write+fsync of the bytes   {ms['plain']:8.1f}")
    print(f"  check alone: the turn {ms['check-turn']:.1f} ms, the whole {ms['check-whole']:.1f} ms; "
          f"dump_history of the same messages {ms['dump']:.1f} ms")  # fmt: skip
    print(f"  save over the yardstick: {ms['turn'] / ms['plain']:.2f}x now, {ms['whole'] / ms['plain']:.2f}x before")


if __name__ == "__main__":
    main()
