"""Tokens sent per turn and the prefix each request repeats, without and with compaction.

    python benchmarks/compaction.py [--turns 100] [--protocol openai|anthropic|both]

A ``--turns`` conversation with a tool round every fifth turn (the loopback server calls
``read_file``, golem runs it and sends the result), through golem's own chat session, store
and provider adapter over HTTP to the loopback server (in one process: a hundred ``golem ask
-c`` processes take minutes on a shared machine and send the same bytes), three ways:

- ``TrimHistory(20)``: no compaction, the default window (the yardstick);
- ``/compact once``: the same, with ``/compact`` (keep 6) at the middle turn;
- ``rolling K=10``: ``--summarize-trimmed --trim-stride 10``, what leaves the window folded.

For each: the input tokens of each turn's request as the server's prompt cache counts them
(tests/providerserver/cache.py: canonical bytes over four), their mean once the window is full
and their maximum; the share of each turn's prompt bytes that is a prefix of the turn before it
(cache_prefix.py's measure); the compaction requests made and their tokens; and the cost at
cache_prefix.py's prices, compaction requests included. The summaries the server writes are
sized like a real model's (about 40 characters per message covered, at most 4,000).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cache_prefix import MODELS, REPLY, SYSTEM, figures, home_for, prompt_bytes, shared, turns_and_protocols
from tests.providerserver import PromptCache, ProviderServer, Received, Reply, Scenario, ToolCallSpec

COMPACT_MARK = "[golem: compaction request]"


@dataclass
class Run:
    label: str
    turns: list[Received]
    compactions: list[Received]
    everything: list[Received]


def is_compaction(request: Received) -> bool:
    return COMPACT_MARK in request.body.decode("utf-8", "replace")[-3000:]


def summary_reply(covered: int) -> Scenario:
    return Scenario(reply=Reply(text="Summary. " + "The user asked about line n of notes.txt. " * min(100, covered)))


async def converse(server: ProviderServer, home: Path, protocol: str, turns: int, how: str) -> None:
    import os

    os.environ["GOLEM_HOME"] = str(home)
    from golem_cli.cli.common import open_store, set_window
    from golem_cli.cli.model_choice import choose_model
    from golem_cli.cli.tools.choice import choose_tools
    from golem_cli.session import ChatSession

    choice = choose_model(MODELS[protocol])
    box = choose_tools(choice.settings, ["fs"], None, True).toolbox()
    session = ChatSession.start(open_store(), choice.model, system=SYSTEM, tools=box)
    set_window(session, choice, None, None, 10 if how == "rolling" else 1, summarize_trimmed=how == "rolling")
    try:
        for turn in range(turns):
            if turn % 5 == 4:
                call = ToolCallSpec(f"{'toolu' if protocol == 'anthropic' else 'call'}_{turn}", "read_file",
                                    '{"path":"notes.txt"}')  # fmt: skip
                server.enqueue(Scenario(reply=Reply(text="Let me read it.", tool_calls=[call])))
            server.enqueue(Scenario(reply=Reply(text=REPLY)))
            outcome = await session.turn(f"Turn {turn}: what does the function in notes.txt do with line {turn}?")
            if not outcome.finished:
                raise SystemExit(f"turn {turn}: {outcome.error}")
            if how == "compact" and turn == turns // 2:
                server.enqueue(summary_reply(len(session.history)))
                await session.compactor.compact()
            point = session.compactor.fold_due()
            if point is not None:
                server.enqueue(summary_reply(point))
                if await session.compactor.fold() is None:
                    raise SystemExit(f"turn {turn}: the fold failed: {session.take_notices()}")
    finally:
        await box.close()
        session.close()


def run(server: ProviderServer, protocol: str, turns: int, how: str, label: str) -> Run:
    server.reset()
    server.prompt_cache = PromptCache()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(converse(server, home_for(server, Path(tmp)), protocol, turns, how))
    everything = list(server.requests)
    compactions = [r for r in everything if is_compaction(r)]
    return Run(label, [r for r in everything if not is_compaction(r)], compactions, everything)


def tokens(protocol: str, request: Received) -> int:
    cache = PromptCache(min_tokens=10**9)  # nothing cached: the whole prompt counted as input
    return (cache.openai if protocol == "openai" else cache.anthropic)(request.json).input_tokens


def report(protocol: str, found: Run) -> str:
    sent = [tokens(protocol, r) for r in found.turns]
    later = sent[21:] or sent
    shares, previous = [], b""
    for request in found.turns:
        now = prompt_bytes(protocol, request.json)
        shares.append(shared(previous, now) / len(now))
        previous = now
    share_later = shares[21:] or shares
    cost = figures(protocol, found.everything)
    compacted = sum(tokens(protocol, r) for r in found.compactions)
    return (f"{protocol:<10} {found.label:<16} {len(found.turns):>5} {statistics.mean(later):>9,.0f} {max(sent):>8,} "
            f"{sum(sent):>10,} {statistics.mean(share_later):>7.1%} {statistics.median(share_later):>7.1%} "
            f"{len(found.compactions):>5} {compacted:>9,} ${cost.cost:>7.4f} ${cost.uncached_cost:>7.4f}")  # fmt: skip


def main() -> None:
    turns, protocols = turns_and_protocols(__doc__, ("openai", "anthropic"))
    server = ProviderServer().start_in_thread()
    print(f"{turns} turns (a tool round every 5th) through golem's session and adapters, the loopback server")
    print(f"{'protocol':<10} {'window':<16} {'reqs':>5} {'tok/turn':>9} {'max':>8} {'tokens':>10} {'share':>7} "
          f"{'median':>7} {'comp.':>5} {'comp.tok':>9} {'cost':>8} {'no cache':>8}")  # fmt: skip
    try:
        for protocol in protocols:
            for how, label in (("none", "TrimHistory(20)"), ("compact", "/compact once"), ("rolling", "rolling K=10")):
                print(report(protocol, run(server, protocol, turns, how, label)), flush=True)
    finally:
        server.stop()
    print("tok/turn: mean input tokens of a turn's requests after the 21st (max: the largest; tokens: all turns); "
          "share: of each turn request's prompt bytes, the prefix of the one before (mean, median, after the 21st); "
          "comp.: compaction requests and their input tokens; cost with the server's cache, compactions included, "
          "and with none")  # fmt: skip


if __name__ == "__main__":
    main()
