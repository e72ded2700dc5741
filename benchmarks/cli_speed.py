"""How fast the history commands answer, against a store of 10,000 generated conversations.

Measures, with ``python -c pass`` in the same run as the floor (interleaved repetitions,
median printed):

- ``golem --version``                 target: within 4x the bare interpreter
- ``golem list --limit 20``           target: under 150 ms (warm index); also the first run
                                      (index built from scratch) and a run right after a save
- ``golem show`` of a 2,000-message conversation (piped, and rendered as for a terminal)
- ``golem normalize`` of a 50 MB history file (report only, and with ``-o``)

    python benchmarks/cli_speed.py [--conversations 10000] [--reps 15] [--keep DIR]

The store is generated directly in golem's format (messages file written with dump_history,
sidecar metadata) under a temporary GOLEM_HOME; generating through ``Store.create`` would fsync
20,000 times and measure the disk, not golem.
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

import _measure
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import INTERRUPTED, Message, ToolCall, mark_interrupted
from golem_cli.store import Store
from golem_cli.store.meta import ConversationMeta, encode_meta, summarize

GOLEM = [str(Path(sys.executable).parent / "golem")]
WORDS = (
    "the of and to in is you that it for was on are with they be this from have or by one had not but what all".split()
)


def uuid7_at(seconds: float, rng: random.Random) -> str:
    millis = int(seconds * 1000)
    rand = bytearray(rng.randbytes(10))
    rand[0] = (rand[0] & 0x0F) | 0x70
    rand[2] = (rand[2] & 0x3F) | 0x80
    h = (millis.to_bytes(6, "big") + rand).hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def conversation(rng: random.Random, turns: int, cid: str) -> list[Message]:
    out = []
    for t in range(turns):
        run = uuid7_at(time.time(), rng)
        out.append(Message("user", sentence(rng, 12).capitalize() + "?", run_id=run, conversation_id=cid))
        if t % 4 == 1:
            call = f"call_{t}"
            out.append(
                Message(
                    "assistant",
                    tool_calls=[ToolCall(call, "search", f'{{"q": "{sentence(rng, 3)}"}}')],
                    run_id=run,
                    conversation_id=cid,
                )
            )
            out.append(
                Message(
                    "tool", sentence(rng, 40), tool_call_id=call, tool_name="search", run_id=run, conversation_id=cid
                )
            )
        reply = "## Answer\n\n" + sentence(rng, 60) + "\n\n- " + sentence(rng, 8) + "\n- `code`\n"
        if t % 9 == 5:
            reply = mark_interrupted(reply)
        out.append(Message("assistant", reply, run_id=run, conversation_id=cid))
    return out


def write_conversation(store: Store, cid: str, messages: list[Message], updated: float, model: str) -> None:
    data = dump_history(messages)
    path = store.messages_path(cid)
    path.write_bytes(data)
    os.chmod(path, 0o600)
    meta = ConversationMeta(
        id=cid,
        model=model,
        created=updated - 600,
        updated=updated,
        messages=len(messages),
        size=len(data),
        summary=summarize(messages),
    )
    store.meta_path(cid).write_bytes(encode_meta(meta))
    os.chmod(store.meta_path(cid), 0o600)
    os.utime(path, (updated, updated))


def write_store(store: Store, count: int, rng: random.Random, longest: int = 6) -> None:
    """``count`` conversations of 1 to ``longest`` turns, updated over the past year."""
    store.conversations_dir.mkdir(parents=True, mode=0o700)
    now = time.time()
    for _ in range(count):
        updated = now - rng.uniform(60, 365 * 86400)
        cid = uuid7_at(updated - 600, rng)
        write_conversation(store, cid, conversation(rng, rng.randint(1, longest), cid), updated, "openai:gpt-4o-mini")


def generate(home: Path, count: int, rng: random.Random) -> tuple[str, Path]:
    store = Store(home)
    write_store(store, count - 1, rng)
    now = time.time()
    big_id = uuid7_at(now - 3600, rng)
    big = conversation(rng, 1000, big_id)[:2000]
    assert len(big) == 2000
    write_conversation(store, big_id, big, now - 30, "anthropic:claude-sonnet")
    # a 50 MB history for normalize: long turns, some dangling calls and orphan results
    history: list[Message] = []
    t = 0
    while sum(len(m.content) for m in history) < 50_000_000:
        history.append(Message("user", sentence(rng, 30)))
        history.append(Message("assistant", tool_calls=[ToolCall(f"c{t}", "read", '{"path": "/tmp/x"}')]))
        if t % 50:
            history.append(Message("tool", sentence(rng, 1500), tool_call_id=f"c{t}", tool_name="read"))
        elif t % 100 == 0:
            history.append(Message("tool", INTERRUPTED, tool_call_id=f"ghost{t}", tool_name="read"))
        history.append(Message("assistant", sentence(rng, 200)))
        t += 1
    big_file = home.parent / "history-50mb.json"
    big_file.write_bytes(dump_history(history))
    return big_id, big_file


def timed(cmd: list[str], env: dict[str, str]) -> float:
    return _measure.run(cmd, env, ok=(0, 1)).wall  # 1: normalize reports what it found


def median_ms(cmds: dict[str, list[str]], env: dict[str, str], reps: int) -> dict[str, float]:
    """Interleaved repetitions so that load on the machine hits every command alike."""
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(reps):
        for name, cmd in cmds.items():
            samples[name].append(timed(cmd, env))
    return {name: statistics.median(v) * 1000 for name, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="generate into DIR and keep it")
    args = parser.parse_args()
    rng = random.Random(7)
    root = args.keep or Path(tempfile.mkdtemp(prefix="golem-bench-"))
    home = root / "home"
    try:
        t0 = time.perf_counter()
        big_id, big_file = generate(home, args.conversations, rng)
        print(f"generated {args.conversations} conversations and a {big_file.stat().st_size / 1e6:.0f} MB history "
              f"in {time.perf_counter() - t0:.0f} s under {root}")  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
        env["GOLEM_HOME"] = str(home)
        floor = [sys.executable, "-c", "pass"]
        list_cmd = [*GOLEM, "list", "--limit", "20"]

        cold = timed(list_cmd, env) * 1000  # builds the index from the 20,000 files
        fast = median_ms(
            {"python -c pass": floor, "golem --version": [*GOLEM, "--version"], "golem list --limit 20": list_cmd,
             "golem --help (piped)": [*GOLEM, "--help"]},
            env, args.reps,
        )  # fmt: skip
        after_save = []
        store = Store(home)
        for _ in range(5):
            store.save(big_id, store.load(big_id))  # a turn was saved: the index must refresh
            after_save.append(timed(list_cmd, env) * 1000)
        show = median_ms(
            {"golem show (2,000 messages, piped)": [*GOLEM, "show", big_id]},
            env, max(3, args.reps // 3),
        )  # fmt: skip
        show |= median_ms(
            {"golem show (2,000 messages, rendered)": [*GOLEM, "show", big_id]},
            env | {"GOLEM_FORCE_TERMINAL": "1", "COLUMNS": "100"}, 3,
        )  # fmt: skip
        out_file = root / "normalized.json"
        norm = median_ms(
            {
                "golem normalize 50 MB (report)": [*GOLEM, "normalize", str(big_file), "--json"],
                "golem normalize 50 MB (-o OUT)": [*GOLEM, "normalize", str(big_file), "-o", str(out_file)],
            },
            env, 3,
        )  # fmt: skip

        base = fast["python -c pass"]
        print(f"\n{'command':<42}{'median ms':>10}{'x floor':>9}")
        rows = {**fast, "golem list --limit 20 (first run, no index)": cold,
                "golem list --limit 20 (right after a save)": statistics.median(after_save), **show, **norm}  # fmt: skip
        for name, ms in rows.items():
            print(f"{name:<42}{ms:>10.1f}{ms / base:>9.1f}")
        version_ok = fast["golem --version"] <= 4 * base
        list_ok = fast["golem list --limit 20"] < 150
        print(f"\n--version within 4x the interpreter: {'yes' if version_ok else 'NO'}"
              f" ({fast['golem --version'] / base:.2f}x)")  # fmt: skip
        print(
            f"list --limit 20 under 150 ms:       {'yes' if list_ok else 'NO'} ({fast['golem list --limit 20']:.0f} ms)"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
