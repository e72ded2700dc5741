"""What golem adds to one tool round trip: the model's call decoded, approved, run, recorded
(saved to the conversation file) and its result sent back with the next request.

    python benchmarks/tool_roundtrip.py [--rounds 200] [--history 40]

A scripted in-process model answers every request with one tool call until ``--rounds``
calls were made, so the clock measures golem only (no network, no provider). Four ways, run
alternately so machine noise hits all alike, each the median time per round trip:

- yardstick: the bare core loop with a no-op tool (no approval hook, nothing saved);
- golem, no-op: the same no-op tool through the chat session: the tool registry, the
  approval hook, and a save of the conversation before and after each tool round;
- golem, read_file: the built-in read_file on a small file, through the session;
- golem, run_command: ``true`` in its own process group, through the session (approved by
  --yes), for scale: most of it is the fork and exec of /bin/sh.

Golem's overhead is "golem, no-op" minus the yardstick; the issue's target is under 5 ms.
Also printed: ``orjson.dumps`` of the same conversation, the cost of serializing it once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golem_cli.core.agent import Agent
from golem_cli.core.messages import Message, ToolCall
from golem_cli.core.model import ModelRequest
from golem_cli.core.tools import Tool
from golem_cli.session import ChatSession
from golem_cli.store import Store
from golem_cli.tools.registry import BUILTIN, Registry, ToolEntry
from golem_cli.tools.toolbox import Toolbox, toolbox
from tests.scripted import ScriptedModel, Step


def history(turns: int) -> list[Message]:
    out = []
    for i in range(turns):
        out.append(Message(role="user", content=f"Question {i}: what is {i} squared? Explain briefly."))
        out.append(Message(role="assistant", content=f"{i} squared is {i * i}, because {i} times {i} is {i * i}."))
    return out


def model(name: str, args: dict[str, object], rounds: int) -> ScriptedModel:
    def step(request: ModelRequest) -> Step:
        done = sum(1 for m in request.messages if m.role == "tool" and m.tool_call_id.startswith("bench"))
        if done >= rounds:
            return Step(text="done")
        return Step(tool_calls=[ToolCall(id=f"bench{done}", name=name, args=json.dumps(args))])

    return ScriptedModel([step] * (rounds + 1))


def noop() -> str:
    """Does nothing."""
    return ""


async def bare(rounds: int, past: list[Message]) -> float:
    agent = Agent(model("noop", {}, rounds), tools=[Tool(noop)], max_turns=rounds + 2)
    start = time.perf_counter()
    await agent.run_stream_with_history(past, "go")
    return (time.perf_counter() - start) / rounds


async def through_session(store: Store, box: Toolbox, name: str, args: dict[str, object], rounds: int,
                          past: list[Message]) -> float:  # fmt: skip
    session = ChatSession.start(store, model(name, args, rounds), max_messages=10_000, tools=box)
    session.history = session.history + past
    original = session.agent

    def agent() -> Agent:
        from dataclasses import replace

        return Agent.from_config(replace(original().config, max_turns=rounds + 2))

    session.agent = agent  # type: ignore[method-assign]
    start = time.perf_counter()
    outcome = await session.turn("go")
    elapsed = (time.perf_counter() - start) / rounds
    assert outcome.error is None and outcome.reply == "done", outcome
    session.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--history", type=int, default=40, help="earlier turns in the conversation")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    past = history(args.history)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        (root / "small.txt").write_text("a small file\n" * 20)
        store = Store(Path(tmp) / "data")
        box = toolbox(enabled=["all"], yes=True, root=root)
        noop_registry = Registry([_NoopSource()])
        noop_box = Toolbox(noop_registry, ["noop"])
        ways = {
            "yardstick: core loop, no-op tool": lambda: bare(args.rounds, past),
            "golem, no-op tool": lambda: through_session(store, noop_box, "noop", {}, args.rounds, past),
            "golem, read_file": lambda: through_session(store, box, "read_file", {"path": "small.txt"}, args.rounds, past),
            "golem, run_command true": lambda: through_session(store, box, "run_command", {"command": "true"}, max(20, args.rounds // 10), past),
        }  # fmt: skip
        times: dict[str, list[float]] = {k: [] for k in ways}
        for _ in range(args.repeats):
            for name, way in ways.items():
                times[name].append(asyncio.run(way()))
    print(f"per tool round trip, median of {args.repeats} runs of {args.rounds} rounds, history {args.history} turns")
    medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
    for name, ms in medians.items():
        print(f"  {name:<34} {ms:8.3f} ms")
    overhead = medians["golem, no-op tool"] - medians["yardstick: core loop, no-op tool"]
    print(f"  golem's overhead per round trip     {overhead:8.3f} ms   (target < 5 ms)")
    try:
        import orjson

        data = [{"role": m.role, "content": m.content} for m in past]
        start = time.perf_counter()
        for _ in range(1000):
            orjson.dumps(data)
        print(f"  yardstick: orjson.dumps of the history  {(time.perf_counter() - start):8.3f} ms (per call)")
    except ImportError:
        print("  (pip install orjson for the serialization yardstick)")


class _NoopSource:
    name = BUILTIN

    def entries(self) -> list[ToolEntry]:
        return [ToolEntry(tool=Tool(noop), source=BUILTIN, group="bench", needs_approval=True)]

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


if __name__ == "__main__":
    main()
