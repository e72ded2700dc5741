"""How long ``terminal_text.visible`` takes over 10 MB of text, against one plain
``str.replace`` pass over the same text (the yardstick: the least any sanitizer can cost) in the
same run. It runs on every streamed chunk and on every transcript shown on a terminal.

Texts: ASCII prose (the common case: one ``str.translate`` on its ASCII fast path), prose with
non-ASCII letters and punctuation (one regex search), emoji with joiners (astral characters:
a second search; each joiner is judged in context), and prose with an escape sequence or a
bidi override every ~200 characters (hostile: every one is replaced), also streamed through
``VisibleStream`` in 64-character chunks, as a reply arrives.
Medians of ``--reps`` runs.

    python benchmarks/terminal_text.py [--mb 10] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from golem_cli.cli.render.terminal_text import VisibleStream, visible

ASCII = "The quick brown fox jumps over the lazy dog; then it sat down and wrote some code.\n"
PROSE = "The quick brown fox — naïve café, 日本語のテキスト — jumps over the lazy dog’s “bed”.\n"
EMOJI = "Done 👩\u200d💻 🎉 — the tests pass ✅ and the build is green 🟢.\n"
HOSTILE = "\x1b]52;c;aGk=\x07 then \x1b[2J and \u202eRLO\u202c with \x9b31m C1 "


def text_of(mb: int, unit: str) -> str:
    text = unit * (mb * 2**20 // len(unit.encode()) + 1)
    return text[: len(text) * mb * 2**20 // len(text.encode())]


def timed(fn: Callable[[], object], reps: int) -> float:
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def streamed(text: str, size: int = 64) -> str:
    stream = VisibleStream()
    out = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
    out.append(stream.flush())
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    texts = {
        "ASCII prose": ASCII,
        "non-ASCII prose": PROSE,
        "emoji (astral characters, joiners)": EMOJI,
        "hostile prose": PROSE * 2 + HOSTILE,
    }
    for label, unit in texts.items():
        text = text_of(args.mb, unit)
        mb = len(text.encode()) / 2**20
        replace = timed(lambda text=text: text.replace("\x1b", "^["), args.reps)
        print(f"\n{label}: {mb:.1f} MB, {len(text):,} characters")
        print(f"  {'str.replace (yardstick)':<36}{replace:>9.1f} ms")
        whole = timed(lambda text=text: visible(text), args.reps)
        print(f"  {'visible(text)':<36}{whole:>9.1f} ms  {whole / replace:.1f}x the yardstick")
        if label.startswith("hostile"):
            assert streamed(text) == visible(text)
            chunks = timed(lambda text=text: streamed(text), args.reps)
            print(
                f"  {'VisibleStream, 64-character chunks':<36}{chunks:>9.1f} ms  {chunks / replace:.1f}x the yardstick"
            )


if __name__ == "__main__":
    main()
