"""What golem adds to a call of a tool server's tool, against calling the same server with the
MCP SDK directly.

    python benchmarks/mcp_overhead.py [--calls 300] [--rounds 5]

One stdio server (tests/mcpservers/demo.py, the SDK's ``MCPServer``) is started three times
over, and its ``echo`` tool called ``--calls`` times in each way, in alternating rounds so
machine noise hits all alike; printed is the median time per call:

- yardstick: the SDK's ``Client`` over the SDK's stdio transport, ``call_tool`` in a loop;
- golem, tool: the tool as a chat's run calls it: golem's ``McpSource`` entry
  (``SchemaTool.call``: golem's connection and stdio transport, the result converted);
- golem, run: a whole tool round of golem's run loop (a scripted in-process model asks for
  the call, the approval hook waves it through (``--yes``), the result is recorded and sent
  back), minus nothing: for scale against ``benchmarks/tool_roundtrip.py``'s no-op tool.

golem's per-call overhead is "golem, tool" minus the yardstick. Also printed: the time to
start the server and list its tools, the SDK's way and golem's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.mcpservers import DEMO, demo_table, server_tables

ARGS = {"text": "hello"}


async def sdk_way(calls: int) -> tuple[float, float]:
    """(seconds to connect and list, seconds per call) with the SDK alone."""
    from mcp import Client, StdioServerParameters

    began = time.perf_counter()
    with open("/dev/null", "w") as quiet:
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=sys.executable, args=[str(DEMO)])
        async with Client(stdio_client(params, errlog=quiet)) as client:
            await client.list_tools()
            started = time.perf_counter() - began
            await client.call_tool("echo", ARGS)  # warm
            began = time.perf_counter()
            for _ in range(calls):
                await client.call_tool("echo", ARGS)
            return started, (time.perf_counter() - began) / calls


async def golem_tool_way(calls: int) -> tuple[float, float]:
    from golem_cli.core.tools import ToolContext
    from golem_cli.tools.toolbox import toolbox

    began = time.perf_counter()
    box = toolbox(enabled=["demo"], servers=server_tables({"demo": demo_table()}))
    await box.start()
    started = time.perf_counter() - began
    try:
        entry = box.registry.entry("demo__echo")
        assert entry is not None
        context = ToolContext(call_id="c", tool_name="demo__echo", args=json.dumps(ARGS))
        await entry.tool.call(dict(ARGS), context)
        began = time.perf_counter()
        for _ in range(calls):
            await entry.tool.call(dict(ARGS), context)
        return started, (time.perf_counter() - began) / calls
    finally:
        await box.close()


async def golem_run_way(calls: int) -> float:
    from golem_cli.core.agent import Agent
    from golem_cli.core.messages import ToolCall
    from golem_cli.core.model import ModelRequest
    from golem_cli.core.runconfig import RunHooks
    from golem_cli.tools.toolbox import toolbox
    from tests.scripted import ScriptedModel, Step

    box = toolbox(enabled=["demo"], servers=server_tables({"demo": demo_table()}), yes=True)
    await box.start()

    def step(request: ModelRequest) -> Step:
        done = sum(1 for m in request.messages if m.role == "tool")
        if done >= calls:
            return Step(text="done")
        return Step(tool_calls=[ToolCall(id=f"c{done}", name="demo__echo", args=json.dumps(ARGS))])

    try:
        agent = Agent(ScriptedModel([step] * (calls + 1)), tools=box.tools(), max_turns=calls + 5)
        began = time.perf_counter()
        await agent.run_with_history([], "go", hooks=RunHooks(approve=box.approvals))
        return (time.perf_counter() - began) / calls
    finally:
        await box.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sdk, tool, run, sdk_start, golem_start = [], [], [], [], []
    for _ in range(args.rounds):
        started, per_call = asyncio.run(sdk_way(args.calls))
        sdk.append(per_call)
        sdk_start.append(started)
        started, per_call = asyncio.run(golem_tool_way(args.calls))
        tool.append(per_call)
        golem_start.append(started)
        run.append(asyncio.run(golem_run_way(args.calls)))
    ms = lambda values: statistics.median(values) * 1000  # noqa: E731
    print(f"{args.calls} calls of demo's echo over stdio, {args.rounds} rounds, median per call:")
    print(f"  yardstick: SDK Client.call_tool        {ms(sdk):7.3f} ms")
    print(f"  golem, tool (SchemaTool.call)          {ms(tool):7.3f} ms   overhead {ms(tool) - ms(sdk):+.3f} ms")
    print(f"  golem, run (a whole tool round)        {ms(run):7.3f} ms")
    print("start and list the tools (in a warm process, SDK imported), median:")
    print(f"  yardstick: SDK                         {ms(sdk_start):7.0f} ms")
    print(f"  golem                                  {ms(golem_start):7.0f} ms")


if __name__ == "__main__":
    main()
