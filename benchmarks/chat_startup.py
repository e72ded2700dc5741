"""How soon golem answers a person at a terminal: ``--version``, ``golem chat`` until a key typed
at its prompt is echoed, the first reply, and ``golem resume`` of a long conversation.

Every figure is a whole process measured by ``_measure.py``: wall time from its fork to what the
harness saw on the pseudo-terminal (or to its end), and the CPU time the command had used by
then (steadier than wall time on a loaded machine), beside its yardstick in the same run, as
medians of interleaved repetitions (noise on the machine hits every row alike):

- ``golem --version`` against ``python -c pass`` (issue 20: within 1.2x);
- ``golem chat`` (empty store, offline echo model) until ``q``, typed the moment ``you>`` shows,
  is echoed, against a bare script that shows ``PromptSession().prompt()`` measured the same
  way (issue 20: within 1.3x); also until ``you>`` alone; and the stack without golem (a typer
  command reading config.toml with msgspec, then the same prompt) against the same bare script;
- the first reply: ``hi`` and Enter typed at the prompt, until the footer under the reply is shown (what the
  first turn loads: the run loop, the markdown renderer, the session); with ``--provider``, also
  through an OpenAI-compatible server on 127.0.0.1 (``tests.providerserver``: the HTTP stack),
  and ``golem ask`` through it, whole;
- with ``--mcp``, ``golem chat -T demo`` (one stdio tool server, the SDK's ``MCPServer`` in
  tests/mcpservers/demo.py) until ``you>`` and until the line saying the server is ready,
  against a fresh interpreter that imports the SDK, starts the same server and lists its tools;
- with ``--messages N`` (e.g. 150000), ``golem resume ID`` of an N-message conversation: until
  ``you>``, until a key typed then is echoed, until ``/ids`` is answered (the history is
  loaded and repaired), and a first turn then, against loading and normalizing the same
  history in a fresh interpreter.

Trees: ``NAME=DIR`` (a directory holding ``golem_cli/``, e.g. ``git archive main golem_cli | tar
-x -C /tmp/before``), every one run through the same launcher (the console script's lines, the
tree first on ``sys.path``, the editable install's finder set aside); by default this checkout.

    python -m compileall -q golem_cli
    python benchmarks/chat_startup.py [before=/tmp/before after=.] [--runs 10] [--provider] [--mcp] [--messages 150000]
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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.mcpservers, tests.providerserver
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _measure

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
LAUNCHER = """\
import sys
tree = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path.insert(0, tree)
from golem_cli.__main__ import main
sys.exit(main())
"""
BARE_PROMPT = """
from prompt_toolkit import PromptSession
try:
    PromptSession().prompt("you> ")
except EOFError:
    pass
"""
#: The stack golem's chat is built on, without golem: a typer command that reads a config.toml
#: as a msgspec struct (ADR 0019) and shows the same prompt (the floor of issue 20's 1.3x).
STACK_PROMPT = """
import os, tomllib
import msgspec, typer
from prompt_toolkit import PromptSession
class Config(msgspec.Struct, kw_only=True, frozen=True):
    model: str = ""
app = typer.Typer()
@app.command()
def chat(model: str = typer.Option("", "--model", "-m")) -> None:
    with open(os.path.join(os.environ["GOLEM_HOME"], "config.toml"), "rb") as f:
        msgspec.convert(tomllib.load(f), Config)
    try:
        PromptSession().prompt("you> ")
    except EOFError:
        pass
@app.command()
def other() -> None:
    pass
app()
"""
SDK_CLIENT = """
import asyncio, sys
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
async def main():
    with open("/dev/null", "w") as quiet:
        params = StdioServerParameters(command=sys.executable, args=[sys.argv[1]])
        async with Client(stdio_client(params, errlog=quiet)) as c:
            await c.list_tools()
asyncio.run(main())
"""
LOAD = (
    "import sys; from golem_cli.core import load_history, normalize_history; "
    "normalize_history(load_history(open(sys.argv[1], 'rb').read()))"
)
TYPED = [_measure.Keys("q", "q")]  # "q" is in none of prompt_toolkit's escape sequences
#: The first prompt, sent after a pause as a person's (what loads meanwhile is not waited for).
FIRST_TURN = [*TYPED, _measure.Keys("\x15hi\r", " sent", pause=2.0)]  # Ctrl-U clears the q; " sent": the footer


@dataclass(frozen=True)
class Sample:
    wall: float  #: seconds
    cpu: float  #: the command's CPU seconds over the same span
    peak_mib: float


def whole(run: _measure.Run) -> Sample:
    """A run from its fork to its end (or to what it last showed), CPU of the whole run."""
    return Sample(run.wall, run.cpu, run.peak_mib)


def until(run: _measure.Run, i: int) -> Sample:
    """From the fork to what was seen ``i``-th (0: the pattern), CPU until then."""
    return Sample(run.seen[i], run.cpu_seen[i], run.peak_mib)


def answer(run: _measure.Run, i: int) -> Sample:
    """From the ``i``-th keys typed (0: the first of ``then``) to what they showed."""
    return Sample(run.answers[i], run.cpu_seen[i + 1] - run.cpu_typed[i], run.peak_mib)


class Rows:
    """Samples by row name, in the order rows first appear, each row with its yardstick's name."""

    def __init__(self) -> None:
        self.samples: dict[str, list[Sample]] = {}
        self.yardsticks: dict[str, str] = {}

    def add(self, name: str, sample: Sample, against: str | None = None) -> None:
        self.samples.setdefault(name, []).append(sample)
        if against is not None:
            self.yardsticks[name] = against

    def median(self, name: str, what: str) -> float:
        return statistics.median(getattr(r, what) for r in self.samples[name])

    def print(self, title: str) -> None:
        print(f"\n{title}")
        print(f"  {'':<62}{'wall':>7}{'min':>6}{'CPU':>7}{'peak':>8}   against")
        for name, runs in self.samples.items():
            least = min(r.wall for r in runs) * 1000
            wall, cpu = self.median(name, "wall") * 1000, self.median(name, "cpu") * 1000
            peak = max(r.peak_mib for r in runs)
            yard = self.yardsticks.get(name)
            ratio = ""
            if yard:
                walls, cpus = wall / self.median(yard, "wall") / 1000, cpu / self.median(yard, "cpu") / 1000
                ratio = f"   {walls:.2f}x wall, {cpus:.2f}x CPU of {yard}"
            print(f"  {name:<62}{wall:5.0f}ms{least:6.0f}{cpu:5.0f}ms{peak:5.0f}MiB{ratio}")


def environment(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("GOLEM_") and k != "NO_COLOR"
    }
    return env | {
        "GOLEM_HOME": str(home),
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "TERM": "xterm",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def fresh(template: Path, home: Path) -> Path:
    """``home`` as ``template`` (a chat leaves a conversation and the index behind)."""
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(template, home, symlinks=True)
    return home


def start_rows(work: Path, trees: dict[str, list[str]], runs: int, provider: str | None) -> None:
    template = work / "template"
    template.mkdir()
    config = 'model = "offline:echo"\n'
    if provider:
        config += f'[providers.local]\nbase_url = "{provider}/v1"\napi_key = "sk-test"\n'
    (template / "config.toml").write_text(config)
    home = work / "home"
    env = environment(home)
    for golem in trees.values():  # the index and what a first chat leaves, as after any first chat
        _measure.on_terminal([*golem, "chat"], environment(fresh(template, home)), "you>")
    shutil.rmtree(template)
    shutil.copytree(home, template, symlinks=True)
    rows = Rows()
    floor, bare_drawn, bare_echoed = (
        "python -c pass",
        "bare PromptSession().prompt() -> you>",
        "bare PromptSession().prompt() -> q echoed",
    )
    for _ in range(runs):
        rows.add(floor, whole(_measure.run([PY, "-c", "pass"], env)))
        bare = _measure.on_terminal([PY, "-c", BARE_PROMPT], env, "you>", then=TYPED)
        rows.add(bare_drawn, until(bare, 0))
        rows.add(bare_echoed, until(bare, 1))
        stack = _measure.on_terminal([PY, "-c", STACK_PROMPT, "chat"], env, "you>", then=TYPED)
        rows.add("typer + msgspec config + the prompt -> q echoed", until(stack, 1), against=bare_echoed)
        for name, golem in trees.items():
            rows.add(f"{name}: golem --version", whole(_measure.run([*golem, "--version"], env)), against=floor)
            chat = _measure.on_terminal([*golem, "chat"], environment(fresh(template, home)), "you>", then=TYPED)
            rows.add(f"{name}: golem chat -> you>", until(chat, 0), against=bare_drawn)
            rows.add(f"{name}: golem chat -> q echoed", until(chat, 1), against=bare_echoed)
            turn = _measure.on_terminal([*golem, "chat"], environment(fresh(template, home)), "you>", then=FIRST_TURN)
            rows.add(f"{name}: golem chat, first reply: Enter (2 s after the prompt) -> footer", answer(turn, 1))
            if provider:
                local = [*golem, "chat", "-m", "local:echo"]
                turn = _measure.on_terminal(local, environment(fresh(template, home)), "you>", then=FIRST_TURN)
                rows.add(f"{name}: golem chat -m local:echo, first reply: Enter -> footer", answer(turn, 1))
                ask = _measure.run([*golem, "ask", "-m", "local:echo", "hi"], environment(fresh(template, home)))
                rows.add(f"{name}: golem ask -m local:echo hi", whole(ask), against=floor)
    rows.print("start-up (empty store, offline echo model)")


def mcp_rows(work: Path, trees: dict[str, list[str]], runs: int) -> None:
    from tests.mcpservers import DEMO, demo_toml

    home = work / "mcp"
    home.mkdir()
    (home / "config.toml").write_text('model = "offline:echo"\n' + demo_toml("demo"))
    env = environment(home)
    rows = Rows()
    sdk = "SDK alone: import, start demo, list tools"
    for _ in range(runs):
        rows.add(sdk, whole(_measure.run([PY, "-c", SDK_CLIENT, str(DEMO)], env)))
        for name, golem in trees.items():
            run = _measure.on_terminal(
                [*golem, "chat", "-T", "demo"], env, "you>", then=[_measure.Keys("", "Tool server ready")]
            )
            rows.add(f"{name}: golem chat -T demo -> you>", until(run, 0))
            rows.add(f"{name}: golem chat -T demo -> server ready", until(run, 1), against=sdk)
    rows.print("golem chat with one stdio tool server")


def resume_rows(work: Path, trees: dict[str, list[str]], runs: int, messages: int) -> None:
    from cli_speed import uuid7_at, write_conversation
    from golem_cli.store import Store
    from history_roundtrip import generate

    home = work / "resume"
    store = Store(home)
    store.conversations_dir.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text('model = "offline:echo"\n')
    cid = uuid7_at(time.time() - 60, random.Random(messages))
    write_conversation(store, cid, generate(messages), time.time() - 60, "offline:echo")
    path = store.messages_path(cid)
    env = environment(home)
    for golem in trees.values():
        _measure.on_terminal([*golem, "resume", cid], env, "you>")  # the index
    rows = Rows()
    load = "python: load_history + normalize_history"
    steps = [*TYPED, _measure.Keys("\x15/ids\r", "last run"), _measure.Keys("hi\r", " sent")]  # Ctrl-U clears the q
    for _ in range(runs):
        rows.add("python -c pass", whole(_measure.run([PY, "-c", "pass"], env)))
        rows.add(load, whole(_measure.run([PY, "-c", LOAD, str(path)], env)))
        for name, golem in trees.items():
            run = _measure.on_terminal([*golem, "resume", cid], env, "you>", then=steps)
            rows.add(f"{name}: golem resume -> you>", until(run, 0), against=load)
            rows.add(f"{name}: golem resume, q typed at you> -> echoed after", answer(run, 0))
            rows.add(f"{name}: golem resume -> /ids answered", until(run, 2), against=load)
            rows.add(f"{name}: golem resume, then a first turn: Enter -> footer", answer(run, 2))
    rows.print(f"golem resume ID, {messages:,} messages ({path.stat().st_size / 1e6:.0f} MB)")


def provider_server() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen([PY, "-m", "tests.providerserver"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().split(" on ")[-1].strip()
    return server, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="NAME=DIR, DIR holding golem_cli/ (default: this checkout)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--provider", action="store_true", help="also the first reply through a loopback HTTP server")
    parser.add_argument("--mcp", action="store_true", help="also a chat with one stdio tool server")
    parser.add_argument("--messages", type=int, default=0, help="also resume a conversation of this many messages")
    parser.add_argument("--skip-start", action="store_true", help="only the resume rows")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="golem-start-"))
    launcher = work / "golem.py"
    launcher.write_text(LAUNCHER)
    named = dict(t.split("=", 1) for t in args.trees) or {"golem": str(ROOT)}
    trees = {name: [PY, str(launcher), str(Path(tree).resolve())] for name, tree in named.items()}
    server, url = provider_server() if args.provider else (None, None)
    with open("/proc/loadavg") as f:
        print(f"load average at the start: {' '.join(f.read().split()[:3])}")
    try:
        if not args.skip_start:
            start_rows(work, trees, args.runs, url)
        if args.mcp:
            mcp_rows(work, trees, args.runs)
        if args.messages:
            resume_rows(work, trees, args.runs, args.messages)
    finally:
        if server is not None:
            server.terminate()
        shutil.rmtree(work, ignore_errors=True)
    with open("/proc/loadavg") as f:
        print(f"\nload average at the end: {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
