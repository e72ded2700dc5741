"""How much of each request repeats the request before it, and what that costs with a cache.

    python benchmarks/cache_prefix.py [--turns 100] [--protocol anthropic|openai|both]

A conversation of ``--turns`` turns through the real ``golem ask -c`` (every fifth turn a tool
round: the loopback server calls ``read_file``, golem runs it and sends the result), against
the loopback server, once with the default window (``TrimHistory(20)``) and once with
``--trim-stride 10``. For each request: the share of its prompt (the bytes in the order the
provider reads them: tools, system prompt, messages) that is a prefix of the request before
it. The server's prompt cache (tests/providerserver/cache.py) counts the cache reads and writes
each API would report, and the cost follows at the prices below. The yardstick, in the same
run, is the cost of the same requests with no cache at all (every input token at the input
price).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.providerserver import PromptCache, ProviderServer, Received, Reply, Scenario, ToolCallSpec
from tests.providerserver.cache import canonical

#: USD per million tokens, as the providers list them (December 2026, their pricing pages):
#: Claude Sonnet 4.5 (input, output, 5-minute cache write 1.25x, cache read 0.1x) and
#: GPT-4.1 (input, output, cached input; writing costs nothing extra).
PRICES = {
    "anthropic": {"input": 3.00, "output": 15.00, "cache_write": 3.75, "cache_read": 0.30},
    "openai": {"input": 2.00, "output": 8.00, "cache_write": 2.00, "cache_read": 0.50},
}
MODELS = {"anthropic": "claude:claude-sonnet-4-5", "openai": "local:gpt-4.1"}
SYSTEM = " ".join(
    f"Rule {n}: answer the question asked, cite the file you read, keep code blocks short, and say when unsure."
    for n in range(60)
)  # about 1,600 tokens: a system prompt of the size coding assistants send
REPLY = "Here is what I found. " + "The function reads the file, checks each line and returns the total. " * 8


@dataclass
class Figures:
    shares: list[float]
    cost: float
    uncached_cost: float
    read: int
    written: int
    uncached_input: int


def prompt_bytes(protocol: str, body: dict[str, Any]) -> bytes:
    """The prompt in the order the provider reads it, breakpoints aside (cache.py's blocks)."""
    pieces: list[Any] = list(body.get("tools") or [])
    if protocol == "anthropic":
        system = body.get("system")
        pieces += [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    pieces += list(body.get("messages") or [])
    return b"".join(canonical(piece) for piece in pieces)


def shared(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    low, high = 0, n
    while low < high:  # the longest common prefix, by halving
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def figures(protocol: str, requests: list[Received]) -> Figures:
    prices = PRICES[protocol]
    cache = PromptCache()  # the same counting the server did, replayed without its clock
    shares, cost, uncached, read, written, total_input = [], 0.0, 0.0, 0, 0, 0
    previous = b""
    for request in requests:
        body = request.json
        now = prompt_bytes(protocol, body)
        shares.append(shared(previous, now) / len(now))
        previous = now
        counted = cache.openai(body) if protocol == "openai" else cache.anthropic(body)
        output = len(REPLY) // 4
        if protocol == "openai":
            fresh, whole = counted.input_tokens - counted.cache_read_tokens, counted.input_tokens
            cost += fresh * prices["input"] + counted.cache_read_tokens * prices["cache_read"]
        else:
            fresh = counted.input_tokens
            whole = fresh + counted.cache_read_tokens + counted.cache_write_tokens
            cost += fresh * prices["input"] + counted.cache_write_tokens * prices["cache_write"]
            cost += counted.cache_read_tokens * prices["cache_read"]
        cost += output * prices["output"]
        uncached += whole * prices["input"] + output * prices["output"]
        read, written, total_input = read + counted.cache_read_tokens, written + counted.cache_write_tokens, total_input + whole
    return Figures(shares, cost / 1e6, uncached / 1e6, read, written, total_input)


def conversation(server: ProviderServer, home: Path, protocol: str, turns: int, stride: int) -> list[Received]:
    server.reset()
    server.prompt_cache = PromptCache()
    golem = shutil.which("golem", path=os.path.dirname(sys.executable)) or "golem"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOLEM_")}
    env["GOLEM_HOME"] = str(home)
    for turn in range(turns):
        if turn % 5 == 4:
            call = ToolCallSpec(f"{'toolu' if protocol == 'anthropic' else 'call'}_{turn}", "read_file", '{"path":"notes.txt"}')
            server.enqueue(Scenario(reply=Reply(text="Let me read it.", tool_calls=[call])), Scenario(reply=Reply(text=REPLY)))
        else:
            server.enqueue(Scenario(reply=Reply(text=REPLY)))
        args = [golem, "ask", *(["-c"] if turn else ["-s", SYSTEM]), "-m", MODELS[protocol], "-T", "fs", "--yes"]
        args += ["--trim-stride", str(stride), f"Turn {turn}: what does the function in notes.txt do with line {turn}?"]
        done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"turn {turn}: {done.stderr.strip()}")
    return list(server.requests)


def home_for(server: ProviderServer, root: Path) -> Path:
    home = root / "home"
    (root / "project").mkdir(parents=True)
    (root / "project" / "notes.txt").write_text("def total(lines):\n    return sum(len(l) for l in lines)\n" * 20)
    home.mkdir()
    (home / "config.toml").write_text(
        f'tool_root = "{root / "project"}"\n\n[providers.local]\nbase_url = "{server.openai_base_url}"\n'
        f'api_key = "sk-test"\n\n[providers.claude]\ntype = "anthropic"\nbase_url = "{server.url}"\napi_key = "sk-test"\n'
    )
    return home


def turns_and_protocols(doc: str, protocols: tuple[str, str]) -> tuple[int, list[str]]:
    """``--turns`` and ``--protocol``, as this script and compaction.py take them: the number of
    turns, and the protocols to run (``both``: in the order given)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--protocol", choices=[*protocols, "both"], default="both")
    options = parser.parse_args()
    return options.turns, list(protocols) if options.protocol == "both" else [options.protocol]


def main() -> None:
    turns, protocols = turns_and_protocols(__doc__, ("anthropic", "openai"))
    server = ProviderServer().start_in_thread()
    print(f"{turns} turns through golem ask -c (a tool round every 5th), the loopback server's cache; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'protocol':<10} {'window':<22} {'requests':>8} {'share mean':>10} {'median':>7} {'>=90%':>6} "
          f"{'cost':>9} {'no cache':>9} {'input':>9} {'read':>9} {'written':>9}")  # fmt: skip
    try:
        for protocol in protocols:
            for stride, label in ((1, "TrimHistory(20)"), (10, "TrimHistory(20) K=10")):
                with tempfile.TemporaryDirectory() as tmp:
                    requests = conversation(server, home_for(server, Path(tmp)), protocol, turns, stride)
                found = figures(protocol, requests)
                later = found.shares[21:] or found.shares  # once the window is full
                print(f"{protocol:<10} {label:<22} {len(requests):>8} {statistics.mean(later):>10.1%} "
                      f"{statistics.median(later):>7.1%} {sum(s >= 0.9 for s in later) / len(later):>6.0%} "
                      f"${found.cost:>8.4f} ${found.uncached_cost:>8.4f} {found.uncached_input:>9} {found.read:>9} "
                      f"{found.written:>9}")  # fmt: skip
    finally:
        server.stop()
    print("share: of each request's prompt bytes, the part that is a prefix of the request before it "
          "(requests after the 21st); input: every request's prompt tokens, read and written: the cache's "
          "part of them; cost at", ", ".join(f"{p}: {v}" for p, v in PRICES.items()))  # fmt: skip


if __name__ == "__main__":
    main()
