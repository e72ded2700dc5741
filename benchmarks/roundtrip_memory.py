"""Peak memory and CPU of `golem normalize FILE -o OUT` against an orjson round trip of FILE.

Issue 13's row "load + normalize + dump: peak <= 3x the file" counts everything: the peak is
the child's whole maximum resident set (``_measure.py``), interpreter and imports included, as a
multiple of the file's size. Repetitions are interleaved (orjson, golem, and ``--before`` trees
timed through ``PYTHONPATH``); wall and CPU (user + sys of the child) are medians, the peak
the largest seen.

    python -m compileall -q golem_cli
    python benchmarks/roundtrip_memory.py FILE [--reps 5] [--before DIR ...]

FILE is a history golem wrote (``benchmarks/scale.py --keep DIR`` makes an 81 MB one); each
golem run must write it back byte for byte.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from scale import ORJSON_ROUNDTRIP


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + sys) and maximum RSS (bytes) of one run of ``cmd``."""
    done = _measure.run(cmd, env, cwd=tempfile.gettempdir())  # `python -m` looks in the working directory first
    return done.wall, done.cpu, done.peak_mib * 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--before", type=Path, action="append", default=[], help="a tree holding golem_cli")
    args = parser.parse_args()
    src = args.file.resolve()
    size = src.stat().st_size
    out = Path(tempfile.mkdtemp(prefix="roundtrip-memory-")) / "out.json"
    env = dict(os.environ)
    here = Path(__file__).resolve().parent.parent
    commands = {
        "orjson read, loads, dumps, write OUT": ([sys.executable, "-c", ORJSON_ROUNDTRIP, str(src), str(out)], env)
    }
    for tree in [*args.before, here]:
        name = "golem normalize FILE -o OUT" + ("" if tree == here else f" ({tree})")
        cmd = [sys.executable, "-m", "golem_cli", "normalize", str(src), "-o", str(out)]
        commands[name] = (cmd, env | {"PYTHONPATH": str(tree)})
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(args.reps):
        for name, (cmd, cmd_env) in commands.items():
            samples[name].append(measure(cmd, cmd_env))
            if name.startswith("golem") and out.read_bytes() != src.read_bytes():
                raise SystemExit(f"{name}: OUT differs from FILE (a clean golem file round-trips byte for byte)")
    out.unlink()
    out.parent.rmdir()
    print(
        f"{src}: {size / 1e6:.1f} MB ({size / 2**20:.1f} MiB); {args.reps} interleaved runs; load {os.getloadavg()[0]:.1f}"
    )
    yardstick = next(iter(commands))
    base_wall = statistics.median(s[0] for s in samples[yardstick])
    base_cpu = statistics.median(s[1] for s in samples[yardstick])
    for name, runs in samples.items():
        wall = statistics.median(s[0] for s in runs)
        cpu = statistics.median(s[1] for s in runs)
        peak = max(s[2] for s in runs)
        line = f"  {name:<58} wall {wall * 1000:6.0f} ms  CPU {cpu * 1000:5.0f} ms  peak {peak / 2**20:4.0f} MiB = {peak / size:.2f}x the file"
        if name != yardstick:
            line += f"; {wall / base_wall:.2f}x orjson wall, {cpu / base_cpu:.2f}x CPU"
        print(line)


if __name__ == "__main__":
    main()
