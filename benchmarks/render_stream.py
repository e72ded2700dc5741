"""CPU spent rendering a 20,000-token streamed reply, against the time the stream takes.

At 200 tokens/s a 20,000-token reply streams for 100 s; rendering must use a small fraction of
that. The reply (paragraphs, lists, code blocks, one long code block) is fed in ~4-character
deltas to golem's ReplyRenderer on a terminal-sized console writing to /dev/null, with a
simulated clock advancing 5 ms per token so the live region refreshes as it would for real.
For contrast it also times the naive approach (re-render the whole reply per refresh) on the
first 2,000 tokens.

    python benchmarks/render_stream.py [--tokens 20000]
"""

from __future__ import annotations

import argparse
import os
import random
import time

from golem_cli.cli.render.streaming import ReplyRenderer
from rich.console import Console
from rich.markdown import Markdown

WORDS = "the model streams tokens while golem renders finished blocks once and keeps only the open tail live".split()


def reply(tokens: int, seed: int = 3) -> list[str]:
    rnd = random.Random(seed)
    pieces: list[str] = []
    count = 0
    while count < tokens:
        kind = rnd.random()
        if kind < 0.6:
            n = rnd.randint(30, 90)
            pieces.append(" ".join(rnd.choices(WORDS, k=n)) + ".\n\n")
        elif kind < 0.8:
            n = rnd.randint(3, 8)
            pieces.append(
                "".join(f"- item **{i}** " + " ".join(rnd.choices(WORDS, k=8)) + "\n" for i in range(n)) + "\n"
            )
        elif kind < 0.98:
            n = rnd.randint(5, 25)
            pieces.append(
                "```python\n" + "".join(f"value_{i} = compute({i}, 'x')  # step\n" for i in range(n)) + "```\n\n"
            )
        else:
            pieces.append("```\n" + "".join(f"log line {i}: ok\n" for i in range(400)) + "```\n\n")
        count += len(pieces[-1]) // 4
    text = "".join(pieces)
    return [text[i : i + 4] for i in range(0, len(text), 4)]


def console() -> Console:
    return Console(file=open(os.devnull, "w"), force_terminal=True, width=100, height=40, color_system="truecolor")


def golem_render(deltas: list[str]) -> tuple[float, int]:
    clock = [0.0]
    renderer = ReplyRenderer(console(), clock=lambda: clock[0])
    start = time.process_time()
    for d in deltas:
        clock[0] += 0.005
        renderer.feed(d)
    renderer.finish()
    return time.process_time() - start, renderer.renders


def naive_render(deltas: list[str]) -> float:
    c = console()
    text = ""
    last = -1.0
    t = 0.0
    start = time.process_time()
    for d in deltas:
        text += d
        t += 0.005
        if t - last >= 1 / 12:
            last = t
            c.print(Markdown(text))
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=20_000)
    args = parser.parse_args()
    deltas = reply(args.tokens)
    stream_seconds = len(deltas) * 0.005
    cpu, renders = golem_render(deltas)
    print(f"reply: {len(deltas)} deltas (~{len(deltas)} tokens), {sum(map(len, deltas)) / 1000:.0f} KB")
    print(f"stream at 200 tokens/s lasts {stream_seconds:.1f} s")
    print(f"golem ReplyRenderer: {cpu:.2f} s CPU ({cpu / stream_seconds * 100:.1f}% of the stream), {renders} renders, "
          f"{cpu / len(deltas) * 1e6:.0f} us per delta")  # fmt: skip
    short = deltas[:2000]
    naive = naive_render(short)
    golem_short, _ = golem_render(short)
    print(f"first 2,000 tokens: naive whole-reply re-render {naive:.2f} s CPU vs golem {golem_short:.2f} s")


if __name__ == "__main__":
    main()
