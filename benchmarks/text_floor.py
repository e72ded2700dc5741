"""The least a search index's text can cost, against the rebuild of the rows (issue 21 item 4:
"a search's catch-up costs no more than the rebuild").

Each variant is the bare minimum of one way to index every conversation's text, in a script
of its own: list the conversations directory, read each messages file and decode its texts
with golem's own lean decoder in two worker processes (``multiprocessing``, a chunk of 500
files at a time, as the rebuild's workers take them), and insert them into an FTS5 table in
the parent process, one transaction a chunk. No rows, no signatures, no checks, nothing
else golem does:

- ``golem's design``: the distinct words of each conversation (``search.indexed_words``) in a
  trigram table with its content, what golem's index holds;
- ``cheapest FTS5``: each conversation's whole folded text, tokenized by SQLite's ``ascii``
  tokenizer (words, not trigrams: no substring search without more machinery) into a
  contentless table (which SQLite 3.40 cannot delete a row from): no Python per word at all.

The yardsticks, interleaved with them: the read loop (``scale.READ_LOOP``), and ``golem list``
with no index, the rebuild of the rows. Wall and CPU (with the workers) are medians.

    python benchmarks/text_floor.py [--store DIR] [--reps 3]

``--store`` is a store made by ``scale.store_pair`` (default: one of 100,000 conversations
without sidecars, generated into a temporary directory).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _measure
from golem_cli.store.digest import _decode, _texts
from golem_cli.store.search import SEPARATOR, indexed_words
from scale import READ_LOOP, drop_index, store_pair

PY = sys.executable
GOLEM = str(Path(sys.executable).parent / "golem")
CHUNK = 500
VARIANTS = {
    "golem's design": ("tokenize = 'trigram case_sensitive 1', detail = none", "words"),
    "cheapest FTS5": ("tokenize = \"ascii tokenchars '_'\", detail = none, content = ''", "folded"),
}


def texts(directory: str, names: list[str], kind: str) -> list[str]:
    """A chunk's texts as the variant indexes them (in a worker)."""
    out = []
    for name in names:
        with open(os.path.join(directory, name), "rb") as f:
            pieces = _texts(_decode(f.read()) or [])
        out.append(indexed_words(pieces) if kind == "words" else SEPARATOR.join(pieces).casefold())
    return out


def variant(directory: str, table: str, kind: str) -> tuple[float, float]:
    """Wall and CPU (this process and its workers) of one variant, from the listing to the last commit."""
    import functools
    import multiprocessing

    start, before = time.perf_counter(), os.times()
    names = [n for n in os.listdir(directory) if n.endswith(".json") and not n.endswith(".meta.json")]
    chunks = [names[i : i + CHUNK] for i in range(0, len(names), CHUNK)]
    with tempfile.TemporaryDirectory() as where:
        db = sqlite3.connect(os.path.join(where, "text.sqlite"), isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"CREATE VIRTUAL TABLE texts USING fts5 (body, {table})")
        db.execute("INSERT INTO texts (texts, rank) VALUES ('automerge', 16)")  # as golem's index
        with multiprocessing.get_context("fork").Pool(2) as pool:
            rid = 0
            for docs in pool.imap(functools.partial(texts, directory, kind=kind), chunks):
                db.execute("BEGIN")
                db.executemany("INSERT INTO texts (rowid, body) VALUES (?, ?)", enumerate(docs, rid))
                db.execute("COMMIT")
                rid += len(docs)
        db.close()
    after = os.times()
    cpu = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
    return time.perf_counter() - start, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a store without sidecars (scale.store_pair)")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    home = args.store or store_pair(Path(tempfile.mkdtemp(prefix="golem-floor-")), 100_000)[1]
    directory = str(home / "conversations")
    samples: dict[str, list[tuple[float, float]]] = {"read loop": [], "golem list, no index": []}
    samples |= {name: [] for name in VARIANTS}
    loads = []
    for _ in range(args.reps):
        loads.append(os.getloadavg()[0])
        read = _measure.run([PY, "-c", READ_LOOP, directory], dict(os.environ))
        samples["read loop"].append((read.wall, read.cpu))
        drop_index(home)
        env = dict(os.environ, GOLEM_HOME=str(home))
        rebuild = _measure.run([GOLEM, "list", "--limit", "20"], env)
        samples["golem list, no index"].append((rebuild.wall, rebuild.cpu))
        for name, (table, kind) in VARIANTS.items():
            samples[name].append(variant(directory, table, kind))
    drop_index(home)
    count = sum(1 for n in os.listdir(directory) if n.endswith(".json"))
    print(f"{count:,} conversations, {args.reps} reps, load average {min(loads):.1f}-{max(loads):.1f}")
    med = {
        name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s)) for name, s in samples.items()
    }
    rebuild_wall = med["golem list, no index"][0]
    for name, (wall, cpu) in med.items():
        against = f"{wall / med['read loop'][0]:.2f}x read loop, {wall / rebuild_wall:.2f}x the rebuild"
        print(f"  {name:<24}{wall:7.2f} s wall{cpu:7.2f} s CPU   {against}")


if __name__ == "__main__":
    main()
