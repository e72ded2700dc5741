"""HTML to text (``golem_cli/tools/page_text.py``) on pages of fetch_url's largest size, ordinary
and hostile, against the yardstick of Python's own parser reading the ordinary page with no
handlers (the floor of any converter built on it), in the same run.

CPU time (steadier than wall time on a loaded machine), best of ``--reps``, and the peak of
memory traced while converting (tracemalloc, a separate run: it slows what it traces).

    python benchmarks/page_text.py [--mb 2] [--reps 3]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from html.parser import HTMLParser

from golem_cli.tools.page_text import html_to_text

ARTICLE = (
    "<h2>Section</h2><p>Some <a href='/x'>linked text</a> with <code>code</code> and more words in it.</p>"
    "<ul><li>item one</li><li>item <b>two</b></li></ul><table><tr><th>a</th><th>b</th></tr>"
    "<tr><td>1</td><td>2</td></tr></table><pre>  x = 1\n  y = 2</pre>"
)
HOSTILE = {
    "2 MB of nested <div>": "<div>",
    "2 MB of nested lists": "<ul><li>x",
    "2 MB of nested quotes": "<blockquote>x",
    "2 MB of table cells, no rows": "<td>x",
    "2 MB of '<'": "<",
    "2 MB of links (long base URL)": "<a href=x>y</a>",
    "2 MB of unterminated CDATA": "<![CDATA[ >",
    "2 MB of unterminated tags": "<a",
    "one 2 MB attribute": None,
}


def page(unit: str | None, size: int) -> str:
    if unit is None:
        return '<p title="' + "x" * size + '">text</p>'
    return (unit * (size // len(unit) + 1))[:size]


def cpu(work: Callable[[], object], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def bare_parse(html: str) -> None:
    parser = HTMLParser(convert_charrefs=True)
    parser.feed(html)
    parser.close()


def peak_mib(work: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    size = int(args.mb * 2**20)
    base = "https://example.com/" + "p/" * 1000
    article = page(ARTICLE, size)
    floor = cpu(lambda: bare_parse(article), args.reps)
    print(f"{'page':<34}{'CPU':>9}{'x yardstick':>13}{'peak':>10}{'text':>12}")
    print(f"{'yardstick: html.parser, article':<34}{floor:>8.2f}s{1:>12.2f}x")
    for label, unit in [("article (ordinary page)", ARTICLE), *HOSTILE.items()]:
        html = page(unit, size)
        seconds = cpu(lambda html=html: html_to_text(html, base), args.reps)  # type: ignore[misc]
        peak = peak_mib(lambda html=html: html_to_text(html, base))  # type: ignore[misc]
        chars = len(html_to_text(html, base))
        print(f"{label:<34}{seconds:>8.2f}s{seconds / floor:>12.2f}x{peak:>7.1f} MiB{chars:>12,}")


if __name__ == "__main__":
    main()
