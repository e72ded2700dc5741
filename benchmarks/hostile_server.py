"""Peak memory and time of `golem ask` against servers that try to exhaust it (issue 8, item 4).

    python benchmarks/hostile_server.py

Each case runs the real `golem` console script against the loopback test server and reads the
child's own peak resident memory from the kernel (``_measure.py``). Yardsticks measured in the same run:
`python -c pass` and `golem ask` against a normal short reply. The bound is 400 MiB; the
defaults are ``max_reply_bytes`` 16 MB and ``max_idle`` 600 s. Also measured: how soon Ctrl-C
during a flood ends `golem ask` with the partial reply saved (the bound is 2 s), and the SSE
parser on one line of 10, 20 and 40 MB (it used to take 44 s at 40 MB, growing with the square)
against a plain join of the same chunks, and `golem ask` reading such a line whole.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _measure
from golem_cli.providers._sse import sse_events
from golem_cli.store import Store
from tests.providerserver import ProviderServer, Scenario

GOLEM = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"
BOUND_MIB = 400


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """(peak RSS in MiB, seconds, exit code, stderr) of one child process, whatever its exit code."""
    done = _measure.run(args, env, ok=None)
    return done.peak_mib, done.wall, done.code, done.stderr


def home_for(server: ProviderServer, root: Path, local: str = "") -> dict[str, str]:
    """A GOLEM_HOME for the test server; ``local`` adds lines to ``[providers.local]``."""
    home = Path(tempfile.mkdtemp(dir=root))
    (home / "config.toml").write_text(
        f'model = "local:echo"\n[providers.local]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n'
        f'max_retries = 0\n{local}[providers.claude]\ntype = "anthropic"\nbase_url = "{server.url}"\napi_key = "sk-test"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    return env | {"GOLEM_HOME": str(home)}


def interrupt_flood(server: ProviderServer, root: Path) -> tuple[float, str]:
    """Seconds from Ctrl-C to exit during a flood, and what was saved."""
    env = home_for(server, root)
    server.enqueue(Scenario(hostile="flood"))
    proc = subprocess.Popen([GOLEM, "ask", "flood me"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    assert proc.stdout is not None
    os.read(proc.stdout.fileno(), 8)
    drain = threading.Thread(target=lambda: proc.stdout.read() if proc.stdout else None, daemon=True)
    drain.start()  # read what it prints, as a terminal would, so the flood flows
    time.sleep(1.0)
    started = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    elapsed = time.perf_counter() - started
    store = Store(Path(env["GOLEM_HOME"]))
    (row,) = store.list()
    reply = store.load(row.id)[1].content
    return (
        elapsed,
        f"exit {proc.returncode}, {len(reply) / 2**20:.1f} MB saved, ends with [reply interrupted]: {reply.endswith('[reply interrupted]')}",
    )


def interrupt_chat_flood(server: ProviderServer, root: Path) -> float:
    """Seconds from Ctrl-C to the partial reply on disk, in `golem chat` on a terminal
    (markdown) after 3 s of a flood."""
    import pexpect

    env = home_for(server, root) | {"TERM": "xterm"}
    server.enqueue(Scenario(hostile="flood"))
    child = pexpect.spawn(GOLEM, ["chat"], env=env, encoding="utf-8", dimensions=(40, 120), timeout=60)
    child.expect("you>")
    child.sendline("flood me")
    child.expect("All work")
    reading = True

    def drain() -> None:  # a terminal reads everything
        while reading:
            try:
                child.read_nonblocking(65536, timeout=0.1)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return

    threading.Thread(target=drain, daemon=True).start()
    time.sleep(3.0)
    started = time.perf_counter()
    child.kill(signal.SIGINT)
    store = Store(Path(env["GOLEM_HOME"]))
    elapsed = float("inf")
    while time.perf_counter() - started < 60:
        rows = store.list()
        history = store.load(rows[0].meta.id) if rows else []
        if len(history) > 1 and history[1].content.endswith("[reply interrupted]"):
            elapsed = time.perf_counter() - started
            break
        time.sleep(0.02)
    reading = False
    child.terminate(force=True)
    return elapsed


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def _parse(data: bytes) -> int:
    return sum(len(d) for _, d in [e async for e in sse_events(_chunks(data, 65536))])


async def _join(data: bytes) -> int:
    return len(b"".join([c async for c in _chunks(data, 65536)]))


def main() -> None:
    server = ProviderServer(api_key="sk-test").start_in_thread()
    root = Path(tempfile.mkdtemp(prefix="golem-hostile-"))
    try:
        bare = run([sys.executable, "-c", "pass"], dict(os.environ))
        print(f"{'python -c pass':46}  peak {bare[0]:7.1f} MiB  {bare[1]:6.2f} s")
        server.enqueue(Scenario())
        normal = run([GOLEM, "ask", "hello"], home_for(server, root))
        print(
            f"{'golem ask, a normal reply (yardstick)':46}  peak {normal[0]:7.1f} MiB  {normal[1]:6.2f} s  exit {normal[2]}"
        )
        cases = [
            ("endless stream (openai)", Scenario(hostile="flood"), ["ask", "go"]),
            ("endless stream (anthropic)", Scenario(hostile="flood"), ["ask", "-m", "claude:m", "go"]),
            ("gzip bomb, 1 GiB, streamed", Scenario(hostile="bomb", size=2**30), ["ask", "go"]),
            ("gzip bomb, 1 GiB, whole reply", Scenario(hostile="bomb", size=2**30), ["ask", "--no-stream", "go"]),
            ("error body of 1 GiB", Scenario(hostile="error-flood", size=2**30), ["ask", "go"]),
            ("one 40 MB SSE line (default 16 MB bound)", Scenario(hostile="long-line", size=40 * 2**20), ["ask", "go"]),
        ]
        big = "max_reply_bytes = 67108864\n"  # 64 MB: the 40 MB line is read whole
        cases += [(f"one {n} MB SSE line, read whole (64 MB bound)", Scenario(hostile="long-line", size=n * 2**20), ["ask", "go"], big)
                  for n in (10, 20, 40)]  # fmt: skip
        worst = 0.0
        for label, scenario, args, *local in cases:
            server.enqueue(scenario)
            peak, seconds, code, err = run([GOLEM, *args], home_for(server, root, *local))
            worst = max(worst, peak)
            line = err.decode(errors="replace").strip().splitlines()[-1][:90] if err else ""
            print(f"{label:46}  peak {peak:7.1f} MiB  {seconds:6.2f} s  exit {code}  {line}")
        print(f"worst peak {worst:.1f} MiB: {'within' if worst < BOUND_MIB else 'OVER'} the {BOUND_MIB} MiB bound")
        elapsed, saved = interrupt_flood(server, root)
        print(
            f"Ctrl-C during a flood, golem ask: exit {elapsed:.2f} s after the signal ({'within' if elapsed < 2 else 'OVER'} 2 s); {saved}"
        )
        chat = interrupt_chat_flood(server, root)
        print(
            f"Ctrl-C during a flood, golem chat (markdown, after 3 s): saved {chat:.2f} s after the signal ({'within' if chat < 2 else 'OVER'} 2 s)"
        )
        for n in (10, 20, 40):  # linear: twice the line, twice the time (it was quadratic: 44 s at 40 MB)
            line = b"data: " + b"x" * (n * 2**20) + b"\n\n"
            started = time.perf_counter()
            asyncio.run(_parse(line))
            parse = time.perf_counter() - started
            started = time.perf_counter()
            asyncio.run(_join(line))
            join = time.perf_counter() - started
            print(
                f"SSE parser, one {n:2} MB line in 64 KB chunks: {parse:.3f} s, {parse / n * 1000:.1f} ms/MB "
                f"(yardstick: joining the chunks {join:.3f} s)"
            )
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
