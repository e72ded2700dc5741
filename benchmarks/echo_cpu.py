"""The CPU a chat has spent when its prompt is drawn and when a key typed there is echoed,
read inside the process, against a bare prompt_toolkit ``PromptSession().prompt()`` read the
same way: issue 20's "golem chat until a typed key is echoed, within 1.3x".

    python -m compileall -q golem_cli /tmp/before/golem_cli
    python benchmarks/echo_cpu.py [NAME=DIR ...] [--runs 12]

``chat_startup.py`` reads a process's CPU from /proc when the harness sees the echo, which on a
loaded machine also counts whatever ran between the echo and the read. Here a wrapper around
prompt_toolkit's ``Renderer.render`` (the same for every row) writes, after the render that
drew the prompt and after the one that shows the typed ``q``, ``time.process_time()`` (the
whole process, every thread) and ``time.thread_time()`` (the main thread, which draws and
echoes). Every row runs on a pseudo-terminal with an empty store and the offline echo model
(the chat's session opener, ADR 0015, runs on another thread meanwhile); medians of
interleaved runs. A third row is the floor of the stack golem is built on
(``chat_startup.STACK_PROMPT``: typer, a msgspec-checked config file, the same prompt).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import pexpect
from chat_startup import STACK_PROMPT

PY = sys.executable
#: The floor of the stack golem is built on: typer parsing a command with one option, msgspec
#: checking a one-key config.toml, then the same prompt.
STACK = "typer + msgspec config + the prompt"
#: argv: report file, then the tree (or "" for the bare prompt), then golem's arguments.
WRAPPER = """
import sys, time
report, tree = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
from prompt_toolkit.application.current import get_app
from prompt_toolkit.renderer import Renderer
drawn = []
original = Renderer.render
def render(self, *args, **kwargs):
    original(self, *args, **kwargs)
    text = get_app().current_buffer.text
    if not drawn or (len(drawn) == 1 and text == "q"):
        drawn.append(f"{time.process_time()} {time.thread_time()}")
        if len(drawn) == 2:
            with open(report, "w") as f:
                f.write(" ".join(drawn))
Renderer.render = render
if not tree:
    from prompt_toolkit import PromptSession
    try:
        PromptSession().prompt("you> ")
    except EOFError:
        pass
elif tree == "stack":
    exec(STACK_PROMPT)
else:
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
    sys.path.insert(0, tree)
    from golem_cli.__main__ import main
    sys.exit(main())
"""


def once(wrapper: Path, tree: str, home: Path, report: Path) -> tuple[float, float, float, float]:
    """(process CPU at the prompt, at the echo, main thread at the prompt, at the echo), ms."""
    report.unlink(missing_ok=True)
    for old in home.iterdir():  # an empty store every run, the config kept
        if old.name != "config.toml":
            if old.is_dir():
                import shutil

                shutil.rmtree(old)
            else:
                old.unlink()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    env |= {"GOLEM_HOME": str(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm", "PYTHONDONTWRITEBYTECODE": "1"}
    args = [str(wrapper), str(report), tree] + (["chat"] if tree else [])
    child = pexpect.spawn(PY, args, env=env, encoding="utf-8", dimensions=(40, 120), timeout=60)
    child.delaybeforesend = None
    child.expect("you>")
    child.send("q")
    child.expect_exact("q")
    child.send("\x15")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    p0, t0, p1, t1 = (float(x) * 1000 for x in report.read_text().split())
    return p0, p1, t0, t1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="NAME=DIR, DIR holding golem_cli/")
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="golem-echo-"))
    wrapper = work / "wrapper.py"
    wrapper.write_text(WRAPPER.replace("exec(STACK_PROMPT)", f"exec({STACK_PROMPT!r})"))
    home = work / "home"
    home.mkdir()
    (home / "config.toml").write_text('model = "offline:echo"\n')
    rows = {"bare PromptSession().prompt()": "", STACK: "stack"} | {
        f"{name}: golem chat": str(Path(tree).resolve()) for name, tree in (t.split("=", 1) for t in args.trees)
    }
    samples: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in rows}
    print(f"load average at the start: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for _ in range(args.runs):
        for name, tree in rows.items():
            samples[name].append(once(wrapper, tree, home, work / "report"))
    bare = [statistics.median(s[i] for s in samples["bare PromptSession().prompt()"]) for i in range(4)]
    print(f"{'CPU ms, medians of ' + str(args.runs):<36}{'at prompt':>10}{'at echo':>9}{'main thr':>9}"
          f"{'x bare (echo)':>15}{'main thr x':>12}")  # fmt: skip
    for name, runs in samples.items():
        m = [statistics.median(s[i] for s in runs) for i in range(4)]
        print(f"  {name:<34}{m[0]:10.1f}{m[1]:9.1f}{m[3]:9.1f}{m[1] / bare[1]:14.2f}x{m[3] / bare[3]:11.2f}x")
    print(f"load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
