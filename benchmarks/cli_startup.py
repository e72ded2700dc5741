"""What a command costs before it does its work: issue 20's two start-up figures, each beside its
yardstick in the same run, for one or more source trees.

- ``golem --version`` against ``python -c pass``                           target: within 1.2x
- ``golem list --limit 20`` at 10,000 conversations (warm index) against
  ``python -c "import typer, rich.console"``, the floor of the stack golem is built on:
                                                                            target: within 1.5x

    python benchmarks/cli_startup.py [NAME=DIR ...] [--conversations 10000] [--reps 15]

Without trees, the installed ``golem`` console script is measured; with ``NAME=DIR`` (DIR holds
``golem_cli/``, e.g. ``git archive REV golem_cli | tar -x -C /tmp/before``), each tree runs
through startup_trees.py's launcher (the console script's lines with the tree first on
``sys.path``), so a change is measured before and after in one run. Medians of interleaved
repetitions, wall and CPU time (user + system, steadier than wall on a loaded machine),
measured as every benchmark here measures (``_measure.py``). ``python -m compileall -q`` every
tree first.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from cli_speed import write_store
from golem_cli.store import Store
from startup_trees import LAUNCHER

PY = sys.executable
#: The smallest typer program that parses an option: typer 0.29 checks every value with pydantic,
#: which ``import typer`` does not load. What golem's commands cost beyond typer's own.
TYPER_APP = "import typer\ndef main(limit: int = 20) -> None:\n    pass\ntyper.run(main)"
YARDSTICKS = {
    "python -c pass": [PY, "-c", "pass"],
    "import typer, rich.console": [PY, "-c", "import typer, rich.console"],
    "a one-option typer app": [PY, "-c", TYPER_APP, "--limit", "20"],
}
TARGETS = {"--version": ["python -c pass"], "list --limit 20": ["import typer, rich.console", "a one-option typer app"]}
TARGET = {"python -c pass": "1.2x", "import typer, rich.console": "1.5x", "a one-option typer app": ""}


def medians(cmds: dict[str, list[str]], envs: dict[str, dict[str, str]], reps: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU milliseconds of each command (in its environment), repetitions interleaved."""
    samples: dict[str, list[_measure.Run]] = {name: [] for name in cmds}
    for _ in range(reps):
        for name, cmd in cmds.items():
            samples[name].append(_measure.run(cmd, envs[name]))
    return {
        name: (statistics.median(r.wall for r in runs) * 1000, statistics.median(r.cpu for r in runs) * 1000)
        for name, runs in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="NAME=DIR, DIR holding golem_cli/ (default: the installed golem)")
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="golem-startup-"))
    try:
        launcher = root / "golem.py"
        launcher.write_text(LAUNCHER)
        golems = {
            name: [PY, str(launcher), str(Path(tree).resolve())] for name, tree in (t.split("=", 1) for t in args.trees)
        }
        golems = golems or {"golem": [str(Path(PY).parent / "golem")]}
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
        env = {k: v for k, v in env.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
        cmds = dict(YARDSTICKS)
        envs = {name: env for name in YARDSTICKS}
        for name, golem in golems.items():
            # A store of its own per tree: trees with different index schemas would rebuild each
            # other's index on every run.
            home = root / name
            write_store(Store(home), args.conversations, random.Random(7))
            tree_env = env | {"GOLEM_HOME": str(home)}
            _measure.run([*golem, "list", "--limit", "20"], tree_env)  # builds the index: the figure is the warm one
            for words in TARGETS:
                cmds[f"{name} {words}"] = [*golem, *words.split()]
                envs[f"{name} {words}"] = tree_env
        got = medians(cmds, envs, args.reps)
        print(f"{args.conversations} conversations, {args.reps} interleaved runs, medians")
        print(f"{'command':<34}{'wall ms':>9}{'cpu ms':>8}  {'against':<28}{'wall x':>7}{'cpu x':>7}  target")
        for name in YARDSTICKS:
            print(f"{name:<34}{got[name][0]:>9.1f}{got[name][1]:>8.1f}")
        for name in golems:
            for words, yards in TARGETS.items():
                (wall, cpu) = got[f"{name} {words}"]
                for yard in yards:
                    ywall, ycpu = got[yard]
                    print(f"{name + ' ' + words:<34}{wall:>9.1f}{cpu:>8.1f}  {yard:<28}"
                          f"{wall / ywall:>7.2f}{cpu / ycpu:>7.2f}  {TARGET[yard]}")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
