"""Start-up of golem from two (or more) source trees side by side: did a change make the
cheap commands slower?

    git archive REV golem_cli | tar -x -C /tmp/before
    python -m compileall -q golem_cli /tmp/before/golem_cli
    python benchmarks/startup_trees.py before=/tmp/before after=. [--runs 15] [--conversations 300]

For each tree (a directory holding ``golem_cli/``): ``golem --version`` and ``golem list`` (a
store of ``--conversations`` small conversations, index warm); the chat's start, from trees
alike, is ``chat_startup.py``'s. Every tree runs through the same launcher (the console script's
own lines, with the tree first on ``sys.path`` and the editable install's finder set aside),
interleaved with the yardstick ``python -c pass`` so that machine noise hits every row alike.
Medians.
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

LAUNCHER = """\
import sys
tree = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path.insert(0, tree)
from golem_cli.__main__ import main
sys.exit(main())
"""


def run(cmd: list[str], env: dict[str, str]) -> float:
    return _measure.run(cmd, env).wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", help="NAME=DIR, DIR holding golem_cli/")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--conversations", type=int, default=300)
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.trees)
    root = Path(tempfile.mkdtemp(prefix="golem-trees-"))
    launcher = root / "golem.py"
    launcher.write_text(LAUNCHER)
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    base |= {"PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    envs: dict[str, dict[str, str]] = {}
    for name, tree in trees.items():
        listing = root / name / "store"
        write_store(Store(listing), args.conversations, random.Random(7), longest=4)
        envs[name] = base | {"GOLEM_HOME": str(listing)}
        run([sys.executable, str(launcher), str(Path(tree).resolve()), "list"], envs[name])  # builds the index
    rows: dict[str, list[float]] = {"python -c pass": []}
    try:
        for _ in range(args.runs):
            rows["python -c pass"].append(run([sys.executable, "-c", "pass"], base))
            for name, tree in trees.items():
                golem = [sys.executable, str(launcher), str(Path(tree).resolve())]
                rows.setdefault(f"{name}: golem --version", []).append(run([*golem, "--version"], envs[name]))
                rows.setdefault(f"{name}: golem list", []).append(run([*golem, "list"], envs[name]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    floor = statistics.median(rows["python -c pass"])
    print(f"{'':<40}{'median ms':>10}{'min':>7}{'max':>7}{'x pass':>8}   ({args.runs} runs, interleaved)")
    for name, values in rows.items():
        m = statistics.median(values)
        print(f"{name:<40}{m * 1000:>10.0f}{min(values) * 1000:>7.0f}{max(values) * 1000:>7.0f}{m / floor:>8.2f}")


if __name__ == "__main__":
    main()
