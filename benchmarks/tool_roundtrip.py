"""What golem adds to one tool round trip, end to end: the model's call arrives over HTTP from
the loopback provider server (tests/providerserver, OpenAI chat completions, streamed), is
decoded, checked against the rules, approved, run, recorded (the conversation saved before
and after each tool round) and its result sent back with the next request.

    python benchmarks/tool_roundtrip.py [--rounds 30] [--repeats 3]
    GOLEM_TREE=/path/to/other/checkout python benchmarks/tool_roundtrip.py   # "before"

(``GOLEM_TREE`` measures another checkout's golem_cli with this script and the tests' server
from it; a tree without rules runs the ways that need none.)

The yardstick is a bare Python client doing the same HTTP round trips against the same
server in the same run: it posts the very request bodies golem sent (encoding each from its
decoded form, as a client builds its request) and reads each streamed answer to its end,
decoding every event. So "golem minus yardstick" is golem's own work per round trip: the
adapter, the run loop, the rules, the tool, the saves. Each way runs at a short history (20
messages) and at an 8,000-message one (the request carries the chat's window of 20 either way;
the saves and the session hold all of it). Ways, run alternately so machine noise hits all
alike, each the median per round trip:

- yardstick: bare httpx client, the same bodies and answers;
- run_command true, --yes: approved without rules;
- run_command true, by a rule: ``run_command(true)`` among 20 rules (the rules' cost);
- read_file: a small file (no approval; the deny rules are still checked);
- write_file, --yes: a 2 KB file written each round, its previous bytes checkpointed first for
  ``/undo`` (a tree without checkpoints writes it without).

Every call's start and end are also recorded in the conversation's ``runs`` log (a tree without
those records skips them). Also printed: the rules' decision for one call in-process (20 rules),
against a dictionary lookup as its yardstick.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, os.environ.get("GOLEM_TREE") or str(Path(__file__).resolve().parents[1]))

from golem_cli.config.schema import ProviderTable
from golem_cli.core.agent import Agent
from golem_cli.core.messages import Message
from golem_cli.providers.resolve import resolve
from golem_cli.session import ChatSession
from golem_cli.store import Store
from golem_cli.tools.toolbox import Toolbox, toolbox
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec

RULES = [f"run_command(tool{i} *)" for i in range(18)] + ["run_command(true)", "write_file(src/**)"]
DENY = ["run_command(rm *)", "read_file(.env)"]


def history(messages: int) -> list[Message]:
    out = []
    for i in range(messages // 2):
        out.append(Message(role="user", content=f"Question {i}: what is {i} squared? Explain briefly."))
        out.append(Message(role="assistant", content=f"{i} squared is {i * i}, because {i} times {i} is {i * i}."))
    return out


def scenarios(name: str, args: dict[str, object], rounds: int) -> list[Scenario]:
    calls = [
        Scenario(reply=Reply(tool_calls=[ToolCallSpec(f"bench{i}", name, json.dumps(args))])) for i in range(rounds)
    ]
    return [*calls, Scenario(reply=Reply(text="done"))]


async def golem(server: ProviderServer, store: Store, box: Toolbox, call: tuple[str, dict[str, object]], rounds: int,
                past: list[Message]) -> tuple[float, list[bytes]]:  # fmt: skip
    """Seconds per round trip through a chat session, and the bodies it posted."""
    table = ProviderTable(base_url=server.openai_base_url, api_key="sk-test")
    model = resolve("local:bench", providers={"local": table})
    session = ChatSession.start(store, model, max_messages=20, tools=box)
    session.history = session.history + past
    session.save()
    original = session.agent
    session.agent = lambda: Agent.from_config(replace(original().config, max_turns=rounds + 2))  # type: ignore[method-assign]
    server.requests.clear()
    server.enqueue(*scenarios(*call, rounds))
    start = time.perf_counter()
    outcome = await session.turn("go")
    elapsed = time.perf_counter() - start
    assert outcome.error is None and outcome.reply == "done", outcome
    await model.aclose()  # type: ignore[attr-defined]
    session.close()
    return elapsed / rounds, [r.body for r in server.requests]


async def bare(server: ProviderServer, bodies: list[bytes], call: tuple[str, dict[str, object]], rounds: int) -> float:
    """Seconds per round trip of a bare client posting ``bodies`` and reading the answers."""
    import httpx

    decoded = [json.loads(body) for body in bodies]
    server.enqueue(*scenarios(*call, rounds))
    url = server.openai_base_url.rstrip("/") + "/chat/completions"
    async with httpx.AsyncClient(timeout=60) as client:
        start = time.perf_counter()
        for request in decoded:
            content = json.dumps(request).encode()
            headers = {"authorization": "Bearer sk-test", "content-type": "application/json"}
            async with client.stream("POST", url, content=content, headers=headers) as answer:
                async for line in answer.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        json.loads(line[6:])
        return (time.perf_counter() - start) / rounds


def rule_cost(box: Toolbox, root: Path, n: int = 20_000) -> tuple[float, float]:
    """Microseconds of one rule decision (``run_command true`` against the rules) and of a
    dictionary lookup, the yardstick."""
    entry = box.registry.entry("run_command")
    assert entry is not None
    args = {"command": "true"}
    start = time.perf_counter()
    for _ in range(n):
        box.approvals.decide(entry, args)
    decide = (time.perf_counter() - start) / n * 1e6
    table = {"run_command": entry}
    start = time.perf_counter()
    for _ in range(n):
        table.get("run_command")
    return decide, (time.perf_counter() - start) / n * 1e6


def record_costs(tmp: Path, n: int = 2_000) -> None:
    """Microseconds per call of what this tree adds to a call in-process: the call's start and
    end records, and a 2 KB file's checkpoint; each against its yardstick (one ``os.write`` of
    a line to an open file, and the file's own write by the file tool)."""
    try:
        from golem_cli.store.sidecars.calls import CallLog
        from golem_cli.store.sidecars.checkpoints import Checkpoints
    except ImportError:
        return  # a tree from before them
    from golem_cli.tools.confine import Root
    from golem_cli.tools.files import FileTools

    log = CallLog(tmp / "c.runs.jsonl")
    start = time.perf_counter()
    for i in range(n):
        log.started(f"call{i}", "run", "run_command")
        log.ended(f"call{i}", "run")
    records = (time.perf_counter() - start) / n * 1e6
    fd = os.open(tmp / "plain.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    start = time.perf_counter()
    for i in range(n):
        os.write(fd, b'{"event":"call-start","v":1,"key":"call%d","run":"run"}\n' % i)
    line = (time.perf_counter() - start) / n * 1e6
    os.close(fd)
    files, cps = FileTools(Root(tmp)), Checkpoints(tmp / "checkpoints")
    texts = [f"line {i}\n" * 256 for i in range(n // 10)]  # 2 KB each, every one new
    start = time.perf_counter()
    for text in texts:
        files.write_file("plain.txt", text)
    write = (time.perf_counter() - start) / len(texts) * 1e6
    start = time.perf_counter()
    for i, text in enumerate(texts):
        files.write_file("kept.txt", text, lambda path, before, after, i=i: cps.keep(
            "c", run="r", call=f"c{i}", path=path, before=before, after=after))  # fmt: skip
    kept = (time.perf_counter() - start) / len(texts) * 1e6
    print(f"a call's start and end records: {records:.1f} µs; yardstick: one os.write of a line {line:.1f} µs")
    print(f"write_file of 2 KB with its checkpoint: {kept:.0f} µs; yardstick: the same write without {write:.0f} µs")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    server = ProviderServer().start_in_thread()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        (root / "small.txt").write_text("a small file\n" * 20)
        store = Store(Path(tmp) / "data")
        by_yes = toolbox(enabled=["all"], yes=True, root=root)
        command = ("run_command", {"command": "true"})
        ways = {
            "run_command true, --yes": (by_yes, command),
            "read_file": (by_yes, ("read_file", {"path": "small.txt"})),
            "write_file, --yes": (by_yes, ("write_file", {"path": "out.txt", "content": "a line of text\n" * 128})),
        }
        rules = "deny" in inspect.signature(toolbox).parameters  # a tree from before the rules has none
        by_rule = toolbox(enabled=["all"], allow=RULES, deny=DENY, root=root) if rules else by_yes
        if rules:
            ways["run_command true, by a rule"] = (by_rule, command)
            ways["read_file"] = (by_rule, ("read_file", {"path": "small.txt"}))
        asyncio.run(golem(server, store, by_yes, command, 2, []))  # warm: imports, the adapter's first client
        for size in (20, 8_000):
            past = history(size)
            times: dict[str, list[float]] = {k: [] for k in ["yardstick: bare client", *ways]}
            for _ in range(args.repeats):
                for name, (box, call) in ways.items():
                    seconds, bodies = asyncio.run(golem(server, store, box, call, args.rounds, past))
                    times[name].append(seconds)
                    if name == "run_command true, --yes":
                        times["yardstick: bare client"].append(asyncio.run(bare(server, bodies, call, args.rounds)))
            _report(size, times, args)
        if rules:
            decide, lookup = rule_cost(by_rule, root)
            print(f"one rule decision (20 allow rules, 2 deny): {decide:.1f} µs; yardstick dict lookup {lookup:.2f} µs")
        record_costs(Path(tmp))
    server.stop()


def _report(size: int, times: dict[str, list[float]], args: argparse.Namespace) -> None:
    load = os.getloadavg()[0]
    print(f"history {size:,} messages: per round trip, median of {args.repeats} x {args.rounds} (load {load:.1f})")
    medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
    yard = medians["yardstick: bare client"]
    for name, ms in medians.items():
        extra = "" if name.startswith("yardstick") else f"   golem's own: {ms - yard:7.2f} ms"
        print(f"  {name:<30} {ms:8.2f} ms{extra}")


if __name__ == "__main__":
    main()
