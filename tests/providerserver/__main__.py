"""``python -m tests.providerserver --port N``: the test server, for pointing golem at by hand.

    [providers.local]                       # OpenAI-compatible side
    base_url = "http://127.0.0.1:N/v1"
    [providers.localclaude]                 # Anthropic side
    type = "anthropic"
    base_url = "http://127.0.0.1:N"
    api_key = "anything"

Then ``golem chat -m local:echo`` (echoes), ``-m local:fault:429``, ``-m local:fault:cut-args``,
``-m localclaude:replay:anthropic-stream-thinking`` and so on (see ``PRESETS``).
"""

from __future__ import annotations

import argparse
import asyncio

from tests.providerserver.server import PRESETS, ProviderServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.providerserver", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--api-key", default=None, help="require this key (default: accept any)")
    parser.add_argument("--context-window", type=int, default=0,
                        help="refuse prompts over this many tokens as each API does (default: none)")  # fmt: skip
    args = parser.parse_args(argv)
    server = ProviderServer(args.host, args.port, api_key=args.api_key)
    server.context_window = args.context_window

    async def run() -> None:
        await server.start()
        print(f"golem provider test server on {server.url}", flush=True)
        print(f"  OpenAI-compatible base_url: {server.openai_base_url}", flush=True)
        print(f"  Anthropic base_url:         {server.url}", flush=True)
        print(f"  model names: any (echo), replay:<recording>, {', '.join(PRESETS)}", flush=True)
        await server.serve()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
