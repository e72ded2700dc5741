"""What one golem process costs in CPU for the commands the test suite starts most, each beside
its yardstick in the same run, for one or more source trees.

    python -m compileall -q golem_cli /tmp/before/golem_cli
    python benchmarks/command_cpu.py [NAME=DIR ...] [--reps 9]

The commands: ``ask`` against the loopback OpenAI-compatible and Anthropic servers
(``tests.providerserver``), ``ask -c`` (a second turn), ``list``, ``show ID``, and ``chat`` on a
pseudo-terminal until its prompt and through one turn (``hi``, Enter, the footer). Yardsticks:
``python -c pass`` and ``python -c "import typer, rich.console"`` (the floor of the stack golem
is built on); the chat rows beside a bare ``PromptSession().prompt()`` script. CPU is user +
system time of the command's process (steadier than wall on a loaded machine), read by
``_measure.py``; medians of interleaved repetitions. Without trees, the installed ``golem``
console script (with its editable-install finder) is measured, as the tests run it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure
from startup_trees import LAUNCHER

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
BARE_PROMPT = "from prompt_toolkit import PromptSession\ntry:\n    PromptSession().prompt('you> ')\nexcept EOFError:\n    pass\n"
YARDSTICKS = {
    "python -c pass": [PY, "-c", "pass"],
    "import typer, rich.console": [PY, "-c", "import typer, rich.console"],
}
TURN = [_measure.Keys("hi\r", " sent")]  # " sent": the footer under the reply


def provider_server() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen([PY, "-m", "tests.providerserver"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().split(" on ")[-1].strip()
    return server, url


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    env = {k: v for k, v in env.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    return env | {"GOLEM_HOME": str(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm", "PYTHONDONTWRITEBYTECODE": "1"}


def home_for(work: Path, name: str, url: str) -> Path:
    home = work / name
    home.mkdir()
    (home / "config.toml").write_text(
        'model = "offline:echo"\n'
        f'[providers.local]\nbase_url = "{url}/v1"\napi_key = "sk-test"\n'
        f'[providers.localclaude]\ntype = "anthropic"\nbase_url = "{url}"\napi_key = "anything"\n'
    )
    return home


def commands(golem: list[str]) -> dict[str, list[str]]:
    return {
        "ask -m local:echo hi (OpenAI loopback)": [*golem, "ask", "-m", "local:echo", "hi"],
        "ask -m localclaude:echo hi (Anthropic loopback)": [*golem, "ask", "-m", "localclaude:echo", "hi"],
        "ask -c again (continues the last: Anthropic loopback)": [*golem, "ask", "-c", "again"],
        "ask -m offline:echo hi": [*golem, "ask", "-m", "offline:echo", "hi"],
        "list": [*golem, "list"],
        "show ID": [*golem, "show", "ID"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="NAME=DIR, DIR holding golem_cli/ (default: the installed golem)")
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="golem-cmdcpu-"))
    server, url = provider_server()
    try:
        launcher = work / "golem.py"
        launcher.write_text(LAUNCHER)
        trees = {n: [PY, str(launcher), str(Path(t).resolve())] for n, t in (t.split("=", 1) for t in args.trees)}
        trees = trees or {"golem": [str(Path(PY).parent / "golem")]}
        homes = {name: home_for(work, f"home-{i}", url) for i, name in enumerate(trees)}
        for name, golem in trees.items():  # one conversation to continue and show; the index warm
            env = environment(homes[name])
            _measure.run([*golem, "ask", "-m", "offline:echo", "first"], env)
            listed = json.loads(_measure.run([*golem, "list", "--json"], env, stdout=True).stdout)
            (homes[name] / "id").write_text(listed[0]["id"])
        samples: dict[str, list[float]] = {}
        against: dict[str, str] = {}
        loadavg = open("/proc/loadavg").read().split()[:3]
        print(f"load average at the start: {' '.join(loadavg)}")
        for _ in range(args.reps):
            for yard, cmd in YARDSTICKS.items():
                samples.setdefault(yard, []).append(_measure.run(cmd, environment(work)).cpu)
            bare = _measure.on_terminal([PY, "-c", BARE_PROMPT], environment(work), "you>")
            samples.setdefault("bare PromptSession().prompt() -> you>", []).append(bare.cpu)
            for name, golem in trees.items():
                home = homes[name]
                env = environment(home)
                cid = (home / "id").read_text()
                for row, cmd in commands(golem).items():
                    cmd = [cid if a == "ID" else a for a in cmd]
                    key = f"{name}: golem {row}"
                    samples.setdefault(key, []).append(_measure.run(cmd, env).cpu)
                    against[key] = "import typer, rich.console"
                chat = _measure.on_terminal([*golem, "chat"], env, "you>")
                key = f"{name}: golem chat -> you>, Ctrl-D"
                samples.setdefault(key, []).append(chat.cpu)
                against[key] = "bare PromptSession().prompt() -> you>"
                turn = _measure.on_terminal([*golem, "chat"], env, "you>", then=TURN)
                key = f"{name}: golem chat, one turn (hi, Enter, footer), Ctrl-D"
                samples.setdefault(key, []).append(turn.cpu)
                against[key] = "bare PromptSession().prompt() -> you>"
        print(f"{'command (CPU, median of ' + str(args.reps) + ')':<72}{'CPU ms':>8}  against")
        for key, runs in samples.items():
            cpu = statistics.median(runs) * 1000
            ratio = ""
            if key in against:
                ratio = f"{cpu / statistics.median(samples[against[key]]) / 1000:.2f}x {against[key]}"
            print(f"  {key:<70}{cpu:6.0f}  {ratio}")
        print(f"load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    finally:
        server.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
