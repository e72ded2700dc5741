"""Slow paths input can trigger (issue 8, item 8), each against a plain JSON round trip of the
same file in the same run (target: within 2x).

- ``golem normalize --sanitize --json`` of a history whose one image part has a 50 MB URL;
- ``golem normalize --json`` of 1,000,000-message histories: a healthy one, and one where every
  call lost its result and every result lost its call (a million findings to report).

Each command runs as users run it (the console script, in a subprocess); the yardstick is
``python -c 'json.loads + json.dumps'`` of the same file, also a subprocess. Medians of
``--reps`` interleaved runs, with peak memory (the child's own maximum resident set, ``_measure.py``).

    python benchmarks/hostile_input.py [--messages 1000000] [--url-mb 50] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message, Part, ToolCall

GOLEM = str(Path(sys.executable).parent / "golem")
ROUND_TRIP = "import json,sys; json.dumps(json.loads(open(sys.argv[1],'rb').read()))"


def compare(label: str, path: Path, golem: list[str], env: dict[str, str], reps: int) -> None:
    samples: dict[str, list[_measure.Run]] = {"json": [], "golem": []}
    for _ in range(reps):
        samples["json"].append(_measure.run([sys.executable, "-c", ROUND_TRIP, str(path)], env))
        samples["golem"].append(_measure.run(golem, env, ok=(0, 1)))  # 1: findings reported
    m = {k: (statistics.median(r.wall for r in v) * 1000, max(r.peak_mib for r in v)) for k, v in samples.items()}
    size = path.stat().st_size / 1e6
    print(f"\n{label} ({size:.0f} MB)")
    print(f"  {'python json.loads + json.dumps':<44}{m['json'][0]:>10.0f} ms{m['json'][1]:>8.0f} MiB")
    print(f"  {'golem ' + golem[1] + ' FILE ' + ' '.join(golem[3:]):<44}{m['golem'][0]:>10.0f} ms{m['golem'][1]:>8.0f} MiB"
          f"  {m['golem'][0] / m['json'][0]:.2f}x the round trip (target <= 2x)")  # fmt: skip


def healthy(n: int) -> list[Message]:
    out: list[Message] = []
    i = 0
    while len(out) < n:
        out.append(Message("user", f"question {i}"))
        out.append(Message("assistant", tool_calls=[ToolCall(f"c{i}", "read", '{"path":"/tmp/x"}')]))
        out.append(Message("tool", f"result {i}", tool_call_id=f"c{i}", tool_name="read"))
        out.append(Message("assistant", f"answer {i}"))
        i += 1
    return out[:n]


def broken(n: int) -> list[Message]:
    """Calls without results and results without calls, alternating: every message is a finding."""
    out: list[Message] = []
    i = 0
    while len(out) < n:
        out.append(Message("assistant", tool_calls=[ToolCall(f"c{i}", "read", '{"path":"/tmp/x"}')]))
        out.append(Message("tool", f"late {i}", tool_call_id=f"ghost{i}", tool_name="read"))
        i += 1
    return out[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--url-mb", type=float, default=50)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="golem-hostile-"))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env |= {"GOLEM_HOME": str(root / "home"), "GOLEM_MAX_HISTORY_BYTES": str(4 << 30)}
    try:
        url = root / "url.json"
        part = Part("image", url="https://example.com/" + "a%41/" * int(args.url_mb * 1e6 / 5))
        url.write_bytes(dump_history([Message("user", "look", parts=[part]), Message("assistant", "ok")]))
        compare("one image part with a 50 MB URL", url, [GOLEM, "normalize", str(url), "--sanitize", "--json"],
                env, args.reps)  # fmt: skip
        for name, make in (("healthy", healthy), ("every message a finding", broken)):
            path = root / f"{name}.json"
            path.write_bytes(dump_history(make(args.messages)))
            compare(f"{args.messages:,} messages, {name}", path, [GOLEM, "normalize", str(path), "--json"], env,
                    args.reps)  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
