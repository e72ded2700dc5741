"""Time to a ready prompt (issue 13): `golem chat` in an empty store, and `golem resume ID` of a
long conversation, as a person at a terminal sees them.

Each program runs on its own pseudo-terminal. Measured, as medians of interleaved repetitions:

- wall time from the spawn to the prompt (``you>``), and the CPU time the child had used when
  its first prompt was drawn (all its threads; steadier than wall time on a loaded machine;
  written by a hook on prompt_toolkit's redraw that every timed program gets);
- for resume, also how long a key typed the moment the prompt shows takes to be echoed (how
  long the prompt keeps a person waiting while the history loads behind it), and the time to a
  line answered (``/ids``: the history is loaded and repaired, so a first turn would go now).

Yardsticks in the same run: ``python -c pass``; a bare script that shows a prompt_toolkit
``PromptSession`` prompt (the floor of any prompt_toolkit program); for resume, loading and
normalizing the history in a fresh interpreter, and in process. ``--compare DIR`` also times the
``golem_cli`` package found in DIR (e.g. ``git archive main golem_cli | tar -x -C DIR``),
interleaved with this one, for before/after figures from one run.

    python -m compileall -q golem_cli
    python benchmarks/prompt_ready.py [--runs 10] [--messages 150000] [--compare DIR] [--skip chat,resume]
"""

from __future__ import annotations

import argparse
import os
import pty
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[1]

PY = sys.executable
BARE = """
import asyncio
from prompt_toolkit import PromptSession
try:
    asyncio.run(PromptSession().prompt_async("you> "))
except EOFError:
    pass
"""
#: Writes the process's CPU time (all threads) when the first prompt has been drawn: what the
#: prompt cost, without what runs after it (a chat's opening) or the harness's reaction time.
DRAWN = """
import os, time
import prompt_toolkit.application.application as _app
_redraw = _app.Application._redraw
def _timed(self, render_as_done=False):
    _redraw(self, render_as_done)
    if not getattr(_app, "_drawn", False) and self.render_counter:
        _app._drawn = True
        os.write(2, b"CPU=%.4f;" % time.process_time())
_app.Application._redraw = _timed
"""
#: golem from a given directory (the editable install's finder set aside), as the console script runs it
LAUNCH = DRAWN + (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in type(f).__module__]; "
    "sys.path.insert(0, {root!r}); from golem_cli.__main__ import main; sys.exit(main())"
)
BARE_PROMPT = DRAWN + BARE
LOAD = (
    "import sys, time; from golem_cli.core.codec.history import load_history; "
    "from golem_cli.core.history.repair import normalize_history; "
    "d = open(sys.argv[1], 'rb').read(); t = time.perf_counter(); normalize_history(load_history(d)); "
    "print(time.perf_counter() - t)"
)


class Run:
    """One program on a pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.start = time.perf_counter()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child
            os.execvpe(argv[0], argv, env)
        self.out = b""

    def until(self, pattern: bytes, timeout: float = 120) -> float:
        """Seconds from the spawn to ``pattern`` in the output (read from where it last stopped)."""
        seen = len(self.out)
        while pattern not in self.out[max(seen - len(pattern), 0) :]:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise SystemExit(f"timed out waiting for {pattern!r}: {self.out[-400:]!r}")
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise SystemExit(f"ended before {pattern!r}: {self.out[-400:]!r}")
            self.out += chunk
        return time.perf_counter() - self.start

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def drawn_cpu(self) -> float:
        """The CPU seconds the child had used when its first prompt was drawn (``DRAWN``)."""
        while (found := re.search(rb"CPU=([0-9.]+);", self.out)) is None:
            self.until(b";")
        return float(found.group(1))

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)

    def leave(self) -> None:
        """Ctrl-D, and wait for the end."""
        self.send(b"\x04")
        try:
            while os.read(self.fd, 65536):
                pass
        except OSError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.0f} ms (min {min(values) * 1000:.0f})"


def report(title: str, rows: dict[str, list[float]], notes: dict[str, str]) -> None:
    print(f"\n{title}")
    for name, values in rows.items():
        print(f"  {name:<58}{ms(values)}  {notes.get(name, '')}")


def golems(compare: str | None) -> dict[str, list[str]]:
    found = {"golem": [PY, "-c", LAUNCH.format(root=str(ROOT))]}
    if compare:
        found["golem from " + compare] = [PY, "-c", LAUNCH.format(root=str(Path(compare).resolve()))]
    return found


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    env.update(GOLEM_HOME=str(home), PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm", COLUMNS="120", LINES="40")
    return env


def fresh(template: Path, home: Path) -> None:
    """``home`` as ``template`` (a run killed at its prompt leaves a conversation or a lock)."""
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(template, home, symlinks=True)


def chat_rows(work: Path, runs: int, compare: str | None) -> None:
    template, home = work / "chat-template", work / "chat-home"
    template.mkdir()
    (template / "config.toml").write_text('model = "offline:echo"\n')
    env = environment(home)
    fresh(template, home)
    first = Run([*golems(None)["golem"], "chat"], env)  # the index and the config stamp, as after a first chat
    first.until(b"you>")
    first.leave()
    shutil.rmtree(template)
    shutil.copytree(home, template, symlinks=True)
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for _ in range(runs):  # interleaved: noise hits every row alike
        t = time.perf_counter()
        subprocess.run([PY, "-c", "pass"], env=env, check=True)
        add("python -c pass", time.perf_counter() - t)
        bare = Run([PY, "-c", BARE_PROMPT], env)
        add("bare PromptSession -> you>", bare.until(b"you>"))
        add("bare PromptSession, CPU when drawn", bare.drawn_cpu())
        bare.kill()
        for name, argv in golems(compare).items():
            fresh(template, home)
            run = Run([*argv, "chat"], env)
            add(f"{name} chat -> you>", run.until(b"you>"))
            add(f"{name} chat, CPU when drawn", run.drawn_cpu())
            run.kill()
    notes = {name: "(target <= 200 ms)" for name in rows if name.endswith("chat -> you>")}
    report("golem chat, empty store (offline model configured)", rows, notes)


def resume_rows(work: Path, runs: int, messages: int, compare: str | None) -> None:
    from cli_speed import uuid7_at, write_conversation
    from golem_cli.store import Store
    from history_roundtrip import generate

    home = work / "resume-home"
    store = Store(home)
    store.conversations_dir.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text('model = "offline:echo"\n')
    cid = uuid7_at(time.time() - 60, random.Random(messages))
    write_conversation(store, cid, generate(messages), time.time() - 60, "offline:echo")
    path = store.messages_path(cid)
    env = environment(home)
    warm = Run([*golems(None)["golem"], "resume", cid], env)  # the index and the config stamp
    warm.until(b"you>")
    warm.leave()
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([PY, "-c", "pass"], env=env, check=True)
        add("python -c pass", time.perf_counter() - t)
        t = time.perf_counter()
        inside = subprocess.run([PY, "-c", LOAD, str(path)], env=env, check=True, capture_output=True, text=True)
        add("python: load_history + normalize_history (whole process)", time.perf_counter() - t)
        add("load_history + normalize_history (in process)", float(inside.stdout))
        bare = Run([PY, "-c", BARE_PROMPT], env)
        add("bare PromptSession -> you>", bare.until(b"you>"))
        add("bare PromptSession, CPU when drawn", bare.drawn_cpu())
        bare.kill()
        for name, argv in golems(compare).items():
            shutil.rmtree(home / "locks", ignore_errors=True)
            run = Run([*argv, "resume", cid], env)
            add(f"{name} resume -> you>", run.until(b"you>"))
            add(f"{name} resume, CPU when drawn", run.drawn_cpu())
            run.kill()
            shutil.rmtree(home / "locks", ignore_errors=True)
            run = Run([*argv, "resume", cid], env)
            shown = run.until(b"you>")
            run.send(b"x")
            add(f"{name} resume: a key typed as the prompt shows, echoed after", run.until(b"x") - shown)
            run.send(b"\x15/ids\r")  # Ctrl-U clears the x
            add(f"{name} resume -> /ids answered (history loaded)", run.until(b"last run"))
            run.leave()
    size = path.stat().st_size / 1e6
    notes = {name: "(target <= 800 ms)" for name in rows if name.endswith("resume -> you>")}
    report(f"golem resume ID, {messages:,} messages ({size:.0f} MB), nothing to repair", rows, notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--messages", type=int, default=150_000)
    parser.add_argument("--compare", help="a directory holding another golem_cli package to time alongside")
    parser.add_argument("--skip", default="", help="comma-separated: chat,resume")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    with open("/proc/loadavg") as f:
        print(f"load average at the start: {' '.join(f.read().split()[:3])}")
    work = Path(tempfile.mkdtemp(prefix="golem-ready-"))
    try:
        if "chat" not in skip:
            chat_rows(work, args.runs, args.compare)
        if "resume" not in skip:
            resume_rows(work, args.runs, args.messages, args.compare)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open("/proc/loadavg") as f:
        print(f"\nload average at the end: {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
