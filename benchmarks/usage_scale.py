"""``golem usage`` at scale, against ``golem list`` on the same store in the same run (issue 22
item 3: "answered from the index, fast at 100,000 conversations").

The store: ``--size`` generated conversations (benchmarks/cli_speed.py's), each with a ``runs``
ledger of one record pair per turn (the models and prices of a real mix), and one conversation
in a hundred a fork that repeats its parent's runs (so the count-each-run-once rule is at work).
Each row is the median of ``--reps`` interleaved runs, wall and CPU (user + system) time and peak
memory (``_measure.py``):

- ``list`` and ``usage`` (by model, by day, by conversation as JSON) with both indexes current;
- the same after one new turn (``golem ask -c`` on the offline model, untimed, before each
  repetition): the conversations directory changed, so both indexes look again;
- ``usage`` with no usage index (the first query builds it from the logs), against ``list``
  with no index (its rebuild).

    python benchmarks/usage_scale.py [--size 100000] [--reps 5] [--keep DIR]

Run ``python -m compileall -q golem_cli`` first (PYTHONDONTWRITEBYTECODE is set).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from cli_speed import uuid7_at, write_store
from golem_cli.core.usage import Usage
from golem_cli.store import Store
from golem_cli.store.sidecars.ledger import Ledger

GOLEM = str(Path(sys.executable).parent / "golem")
MODELS = [("anthropic:claude-sonnet-4-5", 3.0, 15.0), ("openai:gpt-4o-mini", 0.15, 0.6), ("local:qwen3", None, None)]


def write_ledgers(store: Store, rng: random.Random) -> int:
    """A ledger beside every conversation, and one fork in a hundred repeating its parent's runs."""
    names = sorted(p.name[: -len(".json")] for p in store.conversations_dir.glob("*.json") if ".meta." not in p.name)
    runs = 0
    for n, cid in enumerate(names):
        path = store.conversations_dir / f"{cid}.runs.jsonl"
        if n % 100 == 99:
            shutil.copyfile(store.conversations_dir / f"{names[n - 1]}.runs.jsonl", path)
            continue
        ledger = Ledger(path)
        for _ in range(rng.randint(1, 6)):
            model, pin, pout = rng.choice(MODELS)
            rid = uuid7_at(time.time() - rng.uniform(0, 365 * 86400), rng)
            usage = Usage(input_tokens=rng.randint(100, 20000), output_tokens=rng.randint(10, 2000),
                          cache_read_tokens=rng.randint(0, 5000))  # fmt: skip
            cost = None if pin is None else (usage.input_tokens * pin + usage.output_tokens * pout) / 1e6
            ledger.started(rid, kind="turn", model=model)
            ledger.ended(rid, usage=usage, requests=1, finish_reason="stop", failed=False, stopped=False, cost=cost)
            runs += 1
        os.chmod(path, 0o600)
    return runs


def medians(cmds: dict[str, list[str]], env: dict[str, str], reps: int, before=None) -> dict[str, tuple[float, float, float]]:
    samples: dict[str, list[_measure.Run]] = {name: [] for name in cmds}
    for _ in range(reps):
        for name, cmd in cmds.items():
            if before is not None:
                before(name)
            samples[name].append(_measure.run(cmd, env))
    return {n: (statistics.median(r.wall for r in v) * 1000, statistics.median(r.cpu for r in v) * 1000,
                max(r.peak_mib for r in v)) for n, v in samples.items()}  # fmt: skip


def show(title: str, figures: dict[str, tuple[float, float, float]], yardstick: str) -> None:
    print(f"\n{title}; load average {os.getloadavg()[0]:.1f}")
    base = figures[yardstick][0]
    for name, (wall, cpu, mib) in figures.items():
        against = "" if name == yardstick else f"{wall / base:.2f}x {yardstick}"
        print(f"  {name:<44}{wall:>9.0f} ms wall{cpu:>9.0f} ms cpu{mib:>6.0f} MiB  {against}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="golem-usage-"))
    home = root / f"usage-{args.size}"
    if not home.exists():
        t0 = time.perf_counter()
        store = Store(home)
        write_store(store, args.size, random.Random(7))
        runs = write_ledgers(store, random.Random(8))
        print(f"generated {args.size:,} conversations, {runs:,} runs, in {time.perf_counter() - t0:.0f} s", flush=True)
    env = os.environ | {"GOLEM_HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}
    for name in [n for n in env if n.endswith("_API_KEY") or n == "GOLEM_MODEL"]:
        env.pop(name)
    cmds = {
        "golem list": [GOLEM, "list"],
        "golem usage": [GOLEM, "usage"],
        "golem usage --by day": [GOLEM, "usage", "--by", "day"],
        "golem usage --by conversation --json": [GOLEM, "usage", "--by", "conversation", "--json"],
    }
    _measure.run([GOLEM, "list"], env)  # both indexes built, the page cache warm
    _measure.run([GOLEM, "usage"], env)
    last = _measure.run([GOLEM, "list", "-n", "1", "--json"], env, stdout=True).stdout.decode()
    cid = last.split('"id": "', 1)[1].split('"', 1)[0]
    show(f"{args.size:,} conversations, both indexes current", medians(cmds, env, args.reps), "golem list")

    def new_turn(name: str) -> None:
        _measure.run([GOLEM, "ask", "--cid", cid, "-m", "offline:echo", "one more"], env)

    show(f"{args.size:,} conversations, after one new turn before each run",
         medians({k: cmds[k] for k in ("golem list", "golem usage")}, env, args.reps, new_turn), "golem list")

    def no_index(name: str) -> None:
        target = home / ("usage.sqlite" if "usage" in name else "index.sqlite")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)

    show(f"{args.size:,} conversations, no index (the first query builds it)",
         medians({"golem list": cmds["golem list"], "golem usage": cmds["golem usage"]}, env, max(1, args.reps // 2),
                 no_index), "golem list")  # fmt: skip
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
