"""Time from `golem chat` to a ready prompt, on a pseudo-terminal (target: under 200 ms).

Spawns the real console script with pexpect in a fresh GOLEM_HOME (offline echo model, empty
store) and waits for the prompt, several times. Yardsticks on the same terminal, interleaved:
`python -c pass`, `python -c 'import prompt_toolkit'`, and the floor of any prompt_toolkit
program: a bare script that shows a `PromptSession` prompt (interpreter, asyncio,
prompt_toolkit, one prompt drawn). With ``--provider``, also `golem chat` with an HTTP
provider configured (an OpenAI-compatible server on 127.0.0.1 that is never called).

With ``--mcp``, also `golem chat -T demo` with one stdio tool server configured (the SDK's
``MCPServer`` in tests/mcpservers/demo.py): to its prompt (the server starts in the
background) and on to the line saying the server is ready, its tools listed, against two
yardsticks in the same run: `golem chat` with that server configured but not enabled, and a
fresh interpreter that imports the SDK, starts the same server, lists its tools and exits
(what any MCP client in Python pays).

    python benchmarks/chat_startup.py [--runs 10] [--provider] [--mcp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GOLEM = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"

SDK_CLIENT = """
import asyncio, sys
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
async def main():
    with open("/dev/null", "w") as quiet:
        async with Client(stdio_client(StdioServerParameters(command=sys.executable, args=[sys.argv[1]]), errlog=quiet)) as c:
            await c.list_tools()
asyncio.run(main())
"""


BARE_PROMPT = """
import asyncio
from prompt_toolkit import PromptSession
try:
    asyncio.run(PromptSession().prompt_async("you> "))
except EOFError:
    pass
"""


def time_to(command: list[str], pattern: str | type, env: dict[str, str]) -> float:
    return times_to(command, [pattern], env)[0]


def times_to(command: list[str], patterns: list[str | type], env: dict[str, str]) -> list[float]:
    """Seconds from spawning ``command`` to each pattern in turn."""
    start = time.perf_counter()
    child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8", dimensions=(40, 120), timeout=60)
    elapsed = []
    for pattern in patterns:
        child.expect(pattern)
        elapsed.append(time.perf_counter() - start)
    if child.isalive():
        child.sendeof()
        child.expect(pexpect.EOF)
    child.close()
    return elapsed


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:6.0f} ms  (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--provider", action="store_true", help="also time a chat with an HTTP provider")
    parser.add_argument("--mcp", action="store_true", help="also time a chat with one stdio tool server")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="golem-bench-")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    env.update(GOLEM_HOME=home, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
    config = 'model = "offline:echo"\n'
    if args.provider:
        config += '[providers.local]\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "sk-none"\n'
    if args.mcp:
        from tests.mcpservers import DEMO, demo_toml

        config += demo_toml("demo")
    Path(home, "config.toml").write_text(config)
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for _ in range(args.runs):  # interleaved: noise hits every row alike
        add("python -c pass", time_to([sys.executable, "-c", "pass"], pexpect.EOF, env))
        add(
            "python -c 'import prompt_toolkit'",
            time_to([sys.executable, "-c", "import prompt_toolkit"], pexpect.EOF, env),
        )
        add("bare PromptSession -> you>", time_to([sys.executable, "-c", BARE_PROMPT], "you>", env))
        add("golem chat -> you>  (target < 200 ms)", time_to([GOLEM, "chat"], "you>", env))
        if args.provider:
            add("golem chat -m local:x -> you>", time_to([GOLEM, "chat", "-m", "local:x"], "you>", env))
        if args.mcp:
            prompt, ready = times_to([GOLEM, "chat", "-T", "demo"], ["you>", "Tool server ready"], env)
            add("golem chat -T demo -> you>", prompt)
            add("golem chat -T demo -> server ready", ready)
            add(
                "SDK alone: import, start demo, list tools",
                time_to([sys.executable, "-c", SDK_CLIENT, str(DEMO)], pexpect.EOF, env),
            )
    shutil.rmtree(home, ignore_errors=True)
    for name, values in rows.items():
        print(f"{name:<42}{ms(values)}")


if __name__ == "__main__":
    main()
