"""What golem pays when its index is missing or behind (issue 21 items 3 and 4), over both kinds
of store: one golem wrote (every conversation has its ``.meta.json`` sidecar) and one synced in
from elsewhere (messages files only).

Each figure is paired with its yardsticks measured in the same run, interleaved: ``grep -rlF``
and a Python loop that reads every file of the conversations directory. Wall and CPU time (user
+ system of the command and its children: steadier than wall on a shared machine) are medians
of the repetitions; peak memory is the command's own (``_measure.py``). The load average is
printed with each store.

Rows, for each store kind:

- ``list, no index (first time)``: the rebuild; a store without sidecars has any deleted before
  each run, so every run is the first one (a golem before ADR 0034 wrote them then);
- ``list, no index (again)``: the rebuild after a first one (the same work since ADR 0034: a
  rebuild writes no sidecar);
- ``search, no index``: the index built, rows and text, before the search answers;
- ``search, rows but no text``: the text indexed (after a ``golem list`` rebuilt the rows);
- ``search ..., current``: a miss, a word of letters every file has, a phrase in 1.4% of the
  conversations, and a word in every message, with the index current.

    python benchmarks/store_cold.py [--sizes 1000,10000,100000] [--reps 3] [--keep DIR] [--before SRC] [--this SRC]
                                    [--serial SRC]

``--keep DIR`` generates the stores there (and reuses them); ``--before SRC`` also runs the
golem_cli package found in SRC (e.g. ``git archive`` of an earlier commit), interleaved with this
one, so before and after share the machine's load (``--this SRC`` measures SRC's golem_cli in place of the installed one: a
snapshot, while the tree changes) (a tree with a background index builder runs
it to its end before the ``current`` rows); ``--serial SRC`` also runs the rebuild rows with SRC's
golem_cli on the same store, tagged ``serial:`` (a snapshot of this tree whose rebuild reads in one
process: ``refresh.PARALLEL_TASKS`` raised, so workers against none share the load too). Run ``python -m compileall -q golem_cli``
(and SRC) first: PYTHONDONTWRITEBYTECODE is set.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from scale import COMMON_MISS, EVERYWHERE, HIT, MISS, READ_LOOP, clone, drop_index, drop_sidecars, store_pair

PY = sys.executable
GOLEM = str(Path(sys.executable).parent / "golem")
#: Runs golem_cli from another source tree: the editable install's finder is taken out first.
BEFORE = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')];"
    "sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'golem'; from golem_cli.__main__ import main; sys.exit(main())"
)
#: An earlier golem's background builder, run to its end (its index then holds every text).
BEFORE_BUILDER = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')];"
    "sys.path.insert(0, sys.argv.pop(1)); from golem_cli.store.builder import main; sys.exit(main(sys.argv[1:]))"
)

Setup = Callable[[], None]


def rows_of(
    home: Path, golem: list[str], tag: str, sidecars: bool, before: str | None
) -> dict[str, tuple[list[str], Setup]]:
    """The commands timed on one store, each with what is done (untimed) before each run."""
    env_home = str(home)

    def no_index() -> None:
        drop_index(home)

    def first_time() -> None:
        drop_index(home)
        if not sidecars:
            drop_sidecars(home)

    def rows_only() -> None:
        drop_index(home)
        _measure.run([*golem, "list", "--limit", "1"], _env(env_home))

    def current() -> None:  # the index as this version builds it, rows and text
        _measure.run([*golem, "search", MISS], _env(env_home), ok=(0, 1))
        if before is not None and (Path(before) / "golem_cli" / "store" / "builder.py").exists():
            _measure.run([PY, "-c", BEFORE_BUILDER, before, env_home], _env(env_home))

    rows: dict[str, tuple[list[str], Setup]] = {
        f"{tag}list --limit 20, no index (first time)": ([*golem, "list", "--limit", "20"], first_time),
        f"{tag}list --limit 20, no index (again)": ([*golem, "list", "--limit", "20"], no_index),
        f"{tag}search {MISS}, no index": ([*golem, "search", MISS], no_index),
        f"{tag}search {MISS}, rows but no text": ([*golem, "search", MISS], rows_only),
    }
    for query in (MISS, COMMON_MISS, HIT, EVERYWHERE):
        rows[f"{tag}search {query!r}, current"] = ([*golem, "search", query], current)
    return rows


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "GOLEM_NO_FASTPATH")}
    return env | {"GOLEM_HOME": home}


def measure(
    home: Path, sidecars: bool, reps: int, before: str | None, this: str | None = None, serial: str | None = None
) -> None:
    """Every row, interleaved. An earlier golem (``before``) works on a copy of the store: the
    two versions' indexes differ, and each would rebuild the other's."""
    conv = str(home / "conversations")
    cmds: dict[str, tuple[list[str], Setup, str]] = {
        "grep -rlF": (["grep", "-rlF", MISS, conv], lambda: None, str(home)),
        "read loop": ([PY, "-c", READ_LOOP, conv], lambda: None, str(home)),
    }
    golem = [GOLEM] if this is None else [PY, "-c", BEFORE, this]
    for name, (cmd, setup) in rows_of(home, golem, "", sidecars, None).items():
        cmds[name] = (cmd, setup, str(home))
    if serial is not None:  # the same index version: the same store, its rebuild rows only
        for name, (cmd, setup) in rows_of(home, [PY, "-c", BEFORE, serial], "serial: ", sidecars, None).items():
            if "current" not in name:
                cmds[name] = (cmd, setup, str(home))
    if before is not None:
        copy = home.with_name(home.name + "-before")
        if not copy.exists():
            clone(home, copy, sidecars=sidecars)
        for name, (cmd, setup) in rows_of(copy, [PY, "-c", BEFORE, before], "before: ", sidecars, before).items():
            cmds[name] = (cmd, setup, str(copy))
    samples: dict[str, list[_measure.Run]] = {name: [] for name in cmds}
    loads = []
    for _ in range(reps):
        loads.append(os.getloadavg()[0])
        for name, (cmd, setup, where) in cmds.items():
            setup()
            samples[name].append(_measure.run(cmd, _env(where), ok=(0, 1)))  # a search that finds nothing exits 1
    report(home, sidecars, reps, samples, loads)
    homes = {"": home} | ({"before: ": home.with_name(home.name + "-before")} if before else {})
    for tag, where in homes.items():
        size = sum(p.stat().st_size for p in where.iterdir() if p.name.startswith("index.sqlite"))
        print(f"  {tag}index size, current: {size / 2**20:.1f} MiB", flush=True)


def report(home: Path, sidecars: bool, reps: int, samples: dict[str, list[_measure.Run]], loads: list[float]) -> None:
    med = {
        name: (statistics.median(r.wall for r in v) * 1000, statistics.median(r.cpu for r in v) * 1000,
               max(r.peak_mib for r in v))
        for name, v in samples.items()
    }  # fmt: skip
    count = sum(1 for name in os.listdir(home / "conversations") if not name.endswith(".meta.json"))
    kind = "with sidecars (golem wrote it)" if sidecars else "without sidecars (synced in)"
    print(f"\n{count:,} conversations {kind}; {reps} reps; load average {min(loads):.1f}-{max(loads):.1f}")
    print(f"  {'':<58}{'wall':>9}{'cpu':>9}{'peak':>8}   wall (cpu) against the yardsticks")
    for name, (wall, cpu, mib) in med.items():
        against = ""
        if name not in ("grep -rlF", "read loop"):
            against = ", ".join(
                f"{wall / med[yard][0]:.2f}x ({cpu / med[yard][1]:.2f}x) {yard.split()[0]}"
                for yard in ("read loop", "grep -rlF")
            )
        print(f"  {name:<58}{wall:>7.0f}ms{cpu:>7.0f}ms{mib:>5.0f}MiB   {against}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate the stores into DIR and keep them (reused when there)")
    parser.add_argument("--before", help="a source tree holding golem_cli/ to measure beside this one")
    parser.add_argument("--this", help="a source tree holding golem_cli/ to measure instead of the installed one")
    parser.add_argument("--serial", help="a source tree whose rebuild reads in one process, run beside this one")
    parser.add_argument("--kinds", default="without,with", help="which stores: without,with (sidecars)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="golem-cold-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        for count in (int(s) for s in args.sizes.split(",") if s):
            with_sidecars, without = store_pair(root, count)
            for kind in args.kinds.split(","):
                home = with_sidecars if kind == "with" else without
                measure(home, kind == "with", args.reps, args.before, args.this, args.serial)
                drop_index(home)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
