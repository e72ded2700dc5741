"""Time from `golem chat` to a ready prompt, on a pseudo-terminal (target: under 300 ms).

Spawns the real console script with pexpect in a fresh GOLEM_HOME (offline echo model) and
waits for the prompt, several times; `python -c pass` on the same terminal is the floor.

With ``--mcp``, also `golem chat -T demo` with one stdio tool server configured (the SDK's
``MCPServer`` in tests/mcpservers/demo.py) to a ready prompt, its tools listed, against two
yardsticks in the same run: `golem chat` with that server configured but not enabled, and a
fresh interpreter that imports the SDK, starts the same server, lists its tools and exits
(what any MCP client in Python pays).

    python benchmarks/chat_startup.py [--runs 10] [--mcp]
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


def time_to(command: list[str], pattern: str | type, env: dict[str, str]) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8", dimensions=(40, 120), timeout=60)
    child.expect(pattern)
    elapsed = time.perf_counter() - start
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
    parser.add_argument("--mcp", action="store_true", help="also time a chat with one stdio tool server")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="golem-bench-")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(GOLEM_HOME=home, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
    if args.mcp:
        from tests.mcpservers import DEMO, demo_toml

        Path(home, "config.toml").write_text('model = "offline:echo"\n' + demo_toml("demo"))
    floor, ready, mcp, sdk = [], [], [], []
    for _ in range(args.runs):  # interleaved: noise hits every row alike
        floor.append(time_to([sys.executable, "-c", "pass"], pexpect.EOF, env))
        ready.append(time_to([GOLEM, "chat"], "you>", env))
        if args.mcp:
            mcp.append(time_to([GOLEM, "chat", "-T", "demo"], "you>", env))
            sdk.append(time_to([sys.executable, "-c", SDK_CLIENT, str(DEMO)], pexpect.EOF, env))
    shutil.rmtree(home, ignore_errors=True)
    print(f"python -c pass                            {ms(floor)}")
    print(f"golem chat -> you>                        {ms(ready)}  (target < 300 ms)")
    if args.mcp:
        print(f"golem chat -T demo -> you> (1 server)     {ms(mcp)}")
        print(f"SDK alone: import, start demo, list tools {ms(sdk)}")


if __name__ == "__main__":
    main()
