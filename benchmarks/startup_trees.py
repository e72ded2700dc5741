"""Start-up of golem from two (or more) source trees side by side: did a change make the
cheap commands slower?

    git archive REV golem_cli | tar -x -C /tmp/before
    python -m compileall -q golem_cli /tmp/before/golem_cli
    python benchmarks/startup_trees.py before=/tmp/before after=. [--runs 15] [--conversations 300]

For each tree (a directory holding ``golem_cli/``): ``golem --version``, ``golem list`` (a store
of ``--conversations`` small conversations, index warm) and ``golem chat`` to its prompt on a
pseudo-terminal (empty store, offline model). Every tree runs through the same launcher (the
console script's own lines, with the tree first on ``sys.path`` and the editable install's
finder set aside), interleaved with the yardsticks ``python -c pass`` and
``python -c 'import prompt_toolkit'`` so that machine noise hits every row alike. Medians.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_speed import conversation, uuid7_at, write_conversation

LAUNCHER = """\
import sys
tree = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path.insert(0, tree)
from golem_cli.__main__ import main
sys.exit(main())
"""


def store_with(home: Path, count: int) -> None:
    from golem_cli.store import Store

    rng = random.Random(7)
    store = Store(home)
    store.conversations_dir.mkdir(parents=True, mode=0o700)
    now = time.time()
    for _ in range(count):
        updated = now - rng.uniform(60, 365 * 86400)
        cid = uuid7_at(updated - 600, rng)
        write_conversation(store, cid, conversation(rng, rng.randint(1, 4), cid), updated, "openai:gpt-4o-mini")


def run(cmd: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def to_prompt(cmd: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    child = pexpect.spawn(cmd[0], cmd[1:], env=env, encoding="utf-8", dimensions=(40, 120), timeout=60)
    child.expect("you>")
    elapsed = time.perf_counter() - began
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


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
    envs: dict[str, tuple[dict[str, str], dict[str, str]]] = {}  # name: (list's env, chat's env)
    for name, tree in trees.items():
        listing, chat = root / name / "store", root / name / "empty"
        store_with(listing, args.conversations)
        chat.mkdir(parents=True)
        (chat / "config.toml").write_text('model = "offline:echo"\n')
        envs[name] = (base | {"GOLEM_HOME": str(listing)}, base | {"GOLEM_HOME": str(chat)})
        run([sys.executable, str(launcher), str(Path(tree).resolve()), "list"], envs[name][0])  # builds the index
    rows: dict[str, list[float]] = {"python -c pass": [], "python -c 'import prompt_toolkit'": []}
    try:
        for _ in range(args.runs):
            rows["python -c pass"].append(run([sys.executable, "-c", "pass"], base))
            rows["python -c 'import prompt_toolkit'"].append(run([sys.executable, "-c", "import prompt_toolkit"], base))
            for name, tree in trees.items():
                golem = [sys.executable, str(launcher), str(Path(tree).resolve())]
                listing, chat = envs[name]
                rows.setdefault(f"{name}: golem --version", []).append(run([*golem, "--version"], listing))
                rows.setdefault(f"{name}: golem list", []).append(run([*golem, "list"], listing))
                rows.setdefault(f"{name}: golem chat -> you>", []).append(to_prompt([*golem, "chat"], chat))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    floor = statistics.median(rows["python -c pass"])
    print(f"{'':<40}{'median ms':>10}{'min':>7}{'max':>7}{'x pass':>8}   ({args.runs} runs, interleaved)")
    for name, values in rows.items():
        m = statistics.median(values)
        print(f"{name:<40}{m * 1000:>10.0f}{min(values) * 1000:>7.0f}{max(values) * 1000:>7.0f}{m / floor:>8.2f}")


if __name__ == "__main__":
    main()
