"""Time to first text delta: golem's adapters vs a bare httpx stream, same local server.

    python benchmarks/stream_latency.py [--iterations 300] [--history 40]

Both sides reuse one connection pool, send the same conversation and stop the clock at the
first non-empty text delta (the bare side parses SSE lines with ``json.loads``, the least a
client can do). Runs alternate between the two so that machine noise hits both alike. The
issue's target: golem's median within 5 ms of the bare stream.
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

import httpx
from golem_cli.core.messages import Message
from golem_cli.core.model import ModelRequest, TextDelta
from golem_cli.core.retry import RetryPolicy
from golem_cli.providers._http_settings import HttpSettings
from golem_cli.providers.anthropic.model import AnthropicModel
from golem_cli.providers.openai.model import OpenAIModel
from tests.providerserver import ProviderServer, Reply, Scenario

KEY = "sk-bench"
REPLY = Reply(text="Streaming latency benchmark reply, long enough to arrive in a good number of pieces.")


def conversation(turns: int) -> list[Message]:
    messages = []
    for i in range(turns):
        messages.append(Message(role="user", content=f"Question {i}: what is {i} squared? Explain briefly."))
        messages.append(Message(role="assistant", content=f"{i} squared is {i * i}, because {i} times {i} is {i * i}."))
    return [*messages, Message(role="user", content="Thanks. One more?")]


def wire(history: list[Message], protocol: str) -> tuple[str, dict[str, str], bytes]:
    """What the bare client sends: a plain json.dumps body with the same content."""
    messages = [{"role": m.role, "content": m.content} for m in history]
    if protocol == "openai":
        body = {"model": "bench", "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        return "/v1/chat/completions", {"authorization": f"Bearer {KEY}"}, json.dumps(body).encode()
    body = {"model": "bench", "max_tokens": 1024, "messages": messages, "stream": True}
    return "/v1/messages", {"x-api-key": KEY, "anthropic-version": "2023-06-01"}, json.dumps(body).encode()


async def golem_first_delta(model: OpenAIModel | AnthropicModel, request: ModelRequest) -> float:
    start = time.perf_counter()
    first = 0.0
    async for event in model.stream(request):
        if not first and isinstance(event, TextDelta) and event.text:
            first = time.perf_counter() - start
    return first


async def bare_first_delta(client: httpx.AsyncClient, url: str, headers: dict[str, str], body_of: object) -> float:
    start = time.perf_counter()
    first = 0.0
    content = body_of()  # type: ignore[operator]
    async with client.stream("POST", url, content=content, headers=headers) as response:
        async for line in response.aiter_lines():
            if first or not line.startswith("data: ") or line == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            choices = data.get("choices")
            text = (choices[0]["delta"].get("content") if choices else None) or (data.get("delta") or {}).get("text")
            if text:
                first = time.perf_counter() - start
    return first


async def measure(
    server: ProviderServer, protocol: str, iterations: int, turns: int
) -> tuple[list[float], list[float]]:
    history = conversation(turns)
    request = ModelRequest(messages=history)
    settings = HttpSettings(retry=RetryPolicy(max_attempts=1))
    if protocol == "openai":
        model: OpenAIModel | AnthropicModel = OpenAIModel(
            "bench", api_key=KEY, base_url=server.openai_base_url, settings=settings
        )
    else:
        model = AnthropicModel("bench", api_key=KEY, base_url=server.url, settings=settings)
    path, headers, _ = wire(history, protocol)
    golem, bare = [], []
    async with httpx.AsyncClient(headers={"content-type": "application/json"}) as client:
        for i in range(iterations + 20):  # the first 20 of each warm up connections and caches
            server.enqueue(Scenario(reply=REPLY), Scenario(reply=REPLY))
            g = await golem_first_delta(model, request)
            b = await bare_first_delta(client, server.url + path, headers, lambda: wire(history, protocol)[2])
            if i >= 20:
                golem.append(g)
                bare.append(b)
    await model.aclose()
    return golem, bare


def report(protocol: str, golem: list[float], bare: list[float]) -> None:
    def ms(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if q < 100 else max(values) * 1000

    g50, b50 = statistics.median(golem) * 1000, statistics.median(bare) * 1000
    g95, b95 = ms(golem, 95), ms(bare, 95)
    print(f"{protocol:9}  golem  median {g50:6.2f} ms  p95 {g95:6.2f} ms")
    print(f"{'':9}  bare   median {b50:6.2f} ms  p95 {b95:6.2f} ms")
    verdict = "within" if g50 - b50 <= 5 else "OVER"
    print(f"{'':9}  difference median {g50 - b50:+6.2f} ms  p95 {g95 - b95:+6.2f} ms  ({verdict} the 5 ms target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--history", type=int, default=40, help="earlier user/assistant turn pairs in the request")
    args = parser.parse_args()
    server = ProviderServer(api_key=KEY).start_in_thread()
    try:
        print(f"time to first text delta, {args.iterations} runs each, {2 * args.history + 1} messages per request")
        for protocol in ("openai", "anthropic"):
            report(protocol, *asyncio.run(measure(server, protocol, args.iterations, args.history)))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
