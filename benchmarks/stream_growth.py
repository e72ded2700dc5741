"""How the CPU of streaming one reply grows with its length, through the real ``golem chat``.

A reply of N lines of one kind (a code block, a table, a list, paragraphs) is streamed by the
loopback provider server (tests/providerserver) into ``golem chat`` on a pseudo-terminal, as a
person would see it (markdown on). Two figures, each less the same figure for a one-line reply
(the yardstick), run in turn with each size, rep after rep, so the machine's load falls on both
alike:

- turn: the chat's CPU (user + system, from /proc) from the prompt typed to the next prompt
  shown: the turn alone, without start-up and exit, whose CPU (about as much as a 500-line
  reply) varied more with the load than the reply did;
- whole: the chat's CPU for the whole run (from its own ``wait4``).

Linear streaming means 4× the lines costs about 4× that extra CPU; the issue's goal is at most
4.5×.

    python benchmarks/stream_growth.py [--lines 500,2000] [--reps 3] [--golem PATH]

``--golem`` runs another build (a worktree's ``.venv/bin/golem``) against the same server, so
a before and an after are measured in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _measure
from tests.providerserver import ProviderServer, Reply, Scenario

END = "END-OF-REPLY"


def reply(kind: str, lines: int) -> str:
    """``lines`` lines of one markdown construct, then the end marker as its own paragraph.
    Numbers are zero-padded, so every line is as long whatever its number: 4x the lines is 4x
    the bytes (unpadded, a table of 2,000 rows is 4.4x the bytes of one of 500)."""
    if kind == "code":
        body = "```python\n" + "".join(f"value_{i:05} = compute({i:5}, 'x')  # step {i:05}\n" for i in range(lines))
        body += "```"
    elif kind == "table":
        body = "| n | square | note |\n|---|---|---|\n" + "".join(
            f"| {i:05} | {i * i:010} | row {i:05} |\n" for i in range(lines)
        )
    elif kind == "list":
        body = "".join(f"- item {i:05}: the model lists things one per line\n" for i in range(lines))
    else:  # one paragraph of many lines, no blank line inside
        body = "".join(f"sentence {i:05} of a long paragraph that keeps going without a break\n" for i in range(lines))
    return f"{body.rstrip()}\n\n{END}\n"


def chat_cpu(golem: str, env: dict[str, str], server: ProviderServer, text: str) -> tuple[float, float]:
    """CPU seconds of one ``golem chat`` that asks once and gets ``text`` back: of its turn
    (prompt typed to the next prompt) and of the whole run."""
    import pexpect

    server.enqueue(Scenario(reply=Reply(text=text)))
    report = _measure._report_path()
    try:
        launch = _measure._launch(report, [golem, "chat", "-m", "local:bench"])
        child = pexpect.spawn(
            launch[0],
            launch[1:],
            env=env,
            encoding="utf-8",
            dimensions=(40, 120),
            timeout=300,
            maxread=65536,
            searchwindowsize=8192,
        )
        child.expect("you>")
        before = _measure._cpu_of_child(child.pid)
        child.send("go\r")
        child.expect(END)
        child.expect("you>")
        turn = _measure._cpu_of_child(child.pid) - before
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
        return turn, _measure._read(report, [golem], b"").cpu
    finally:
        os.unlink(report)


def growth(samples: dict[int, list[float]], sizes: list[int]) -> tuple[float, dict[int, float], float]:
    """The yardstick's median, each size's median less it, and the last size's over the first's."""
    base = statistics.median(samples[0])
    extra = {n: max(statistics.median(samples[n]) - base, 1e-6) for n in sizes}
    return base, extra, extra[sizes[-1]] / extra[sizes[0]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", default="500,2000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--kinds", default="code,table,list,paragraph")
    parser.add_argument("--golem", default=str(Path(sys.executable).parent / "golem"))
    args = parser.parse_args()
    sizes = [int(n) for n in args.lines.split(",")]
    server = ProviderServer(api_key=None).start_in_thread()
    home = tempfile.mkdtemp(prefix="golem-stream-growth-")
    Path(home, "config.toml").write_text(f'[providers.local]\nbase_url = "{server.openai_base_url}"\napi_key = "x"\n')
    env = {**os.environ, "GOLEM_HOME": home, "TERM": "xterm-256color", "PYTHONDONTWRITEBYTECODE": "1"}
    print(f"golem: {args.golem}; load average {os.getloadavg()[0]:.1f}")
    print("extra CPU: a chat's CPU less that of the same chat with a one-line reply, run in turn with it")
    for kind in args.kinds.split(","):
        # The one-line chat (the yardstick) and each size in turn, rep after rep: the machine's
        # load falls on all of them alike.
        turns: dict[int, list[float]] = {0: [], **{n: [] for n in sizes}}
        wholes: dict[int, list[float]] = {0: [], **{n: [] for n in sizes}}
        for _ in range(args.reps):
            for n in [0, *sizes]:
                turn, whole = chat_cpu(args.golem, env, server, reply(kind, n) if n else f"ok\n\n{END}\n")
                turns[n].append(turn)
                wholes[n].append(whole)
        for name, samples in (("turn", turns), ("whole", wholes)):
            base, extra, ratio = growth(samples, sizes)
            row = "  ".join(f"{n:>5} lines {extra[n] * 1000:>7.0f} ms" for n in sizes)
            print(f"{kind:<10}{name:<6} one line {base * 1000:>5.0f} ms  {row}   {sizes[-1] / sizes[0]:.0f}x the lines: "
                  f"{ratio:.2f}x the CPU (load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    server.stop()


if __name__ == "__main__":
    main()
