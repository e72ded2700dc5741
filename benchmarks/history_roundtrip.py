"""Load + normalize + dump of a large history, against a plain json round trip of the same file.

Each timing runs in a fresh interpreter (the file is read before the clock starts), the two
variants interleaved, so neither inherits the other's heap; the file itself is generated in a
child too, so the parent holds no large heap while the timed children run. Prints the median wall time of
each, their ratio (target: golem at most 1.0x the plain round trip), and the peak memory each
allocates (tracemalloc, in separate untimed runs).

    python benchmarks/history_roundtrip.py [--messages 150000] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.history.repair import normalize_history
from golem_cli.core.ids import new_id
from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall

WORDS = (
    "the of and to in is you that it for was on are as with his they at be this from have or "
    "by one had not but what all were when we there can an your which their said if do will "
    "each about how up out them then she many some so these would other into has more her two "
    "like him see time could no make than first been its who now people my made over did down "
    "only way find use may water long little very after words called just where most know "
    "def return import class self None True <div> </div> && x<y café 東京"
).split()


def generate(n: int, seed: int = 7) -> list[Message]:
    rnd = random.Random(seed)
    conv = new_id()
    out: list[Message] = []
    turn = 0
    while len(out) < n:
        run = new_id()
        text = lambda k: " ".join(rnd.choices(WORDS, k=k))  # noqa: E731
        parts = [Part("image", data=rnd.randbytes(48), media_type="image/png")] if rnd.random() < 0.03 else []
        out.append(Message("user", text(rnd.randint(5, 60)), parts=parts, run_id=run, conversation_id=conv))
        if rnd.random() < 0.3:
            calls = [
                ToolCall(f"call_{turn}_{i}", "search", json.dumps({"query": text(6), "limit": rnd.randint(1, 9)}))
                for i in range(rnd.randint(1, 3))
            ]
            thinking = [ThinkingBlock(text(30), signature="EqQBCkgIARAB" * 4)] if rnd.random() < 0.5 else []
            out.append(Message("assistant", tool_calls=calls, thinking=thinking, run_id=run, conversation_id=conv))
            for c in calls:
                out.append(Message("tool", text(rnd.randint(20, 120)), tool_call_id=c.id, tool_name=c.name,
                                   run_id=run, conversation_id=conv))  # fmt: skip
        out.append(Message("assistant", text(rnd.randint(30, 250)), run_id=run, conversation_id=conv))
        turn += 1
    return out[:n]


def plain(data: bytes) -> bytes:
    return json.dumps(json.loads(data)).encode()


def golem(data: bytes) -> bytes:
    history, _ = normalize_history(load_history(data))
    return dump_history(history)


def timed(fn, data: bytes) -> tuple[float, float]:
    """Wall and CPU seconds of one call (CPU time is steadier on a shared machine)."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn(data)
    return time.perf_counter() - start, time.process_time() - cpu


def peak_mib(fn, data: bytes) -> float:
    gc.collect()
    tracemalloc.start()
    fn(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def child(kind: str, path: str) -> None:
    """Time one variant once on the file at ``path`` and print the seconds."""
    with open(path, "rb") as f:
        data = f.read()
    if kind.endswith("-memory"):
        print(peak_mib(VARIANTS[kind.removesuffix("-memory")], data))
    else:
        print(*timed(VARIANTS[kind], data))


VARIANTS = {"plain": plain, "golem": golem}


def in_child(kind: str, path: str) -> list[float]:
    out = subprocess.run([sys.executable, __file__, "--child", kind, path], capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--generate", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    if args.generate:
        data = dump_history(generate(args.messages))
        assert golem(data) == data, "a clean golem file must round-trip byte for byte"
        with open(args.generate, "wb") as f:
            f.write(data)
        return None
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        pass
    subprocess.run([sys.executable, __file__, "--generate", f.name, "--messages", str(args.messages)], check=True)
    size = os.path.getsize(f.name)
    print(f"history: {args.messages} messages, {size / 1e6:.1f} MB")
    times: dict[str, list[list[float]]] = {"plain": [], "golem": []}
    try:
        for _ in range(args.runs):
            times["plain"].append(in_child("plain", f.name))
            times["golem"].append(in_child("golem", f.name))
        memory = {kind: in_child(f"{kind}-memory", f.name)[0] for kind in VARIANTS}
    finally:
        os.unlink(f.name)
    for label, index in (("wall", 0), ("CPU", 1)):
        p = statistics.median(t[index] for t in times["plain"])
        g = statistics.median(t[index] for t in times["golem"])
        print(f"{label:>4}: plain json.loads + json.dumps {p * 1000:7.1f} ms, golem load + normalize + dump "
              f"{g * 1000:7.1f} ms (medians of {args.runs}); ratio {g / p:.2f}x (target <= 1.00x)")  # fmt: skip
    print(
        f"peak memory: plain {memory['plain']:.0f} MiB, golem {memory['golem']:.0f} MiB (file {size / 2**20:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
