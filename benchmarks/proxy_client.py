"""What proxy variables cost an adapter's HTTP client: httpx mounts a transport per proxy
variable, and each loaded the certificate bundle again unless the client is given one TLS
context (golem's ``_http.ssl_context``).

    python benchmarks/proxy_client.py [--repeat 20]

Each row is the median time to build an ``httpx.AsyncClient`` in a fresh process (so nothing
is cached from one build to the next), with ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``ALL_PROXY``
set and ``NO_PROXY`` excluding the endpoint, as httpx builds it by default and as golem builds
it; the yardstick is the default build with no proxy variable, in the same run. ``--before
PYTHON`` (``/work/wt/before/.venv/bin/python``) adds the adapter's own client
(``HttpClient._get``, the first request's build) as that tree builds it, beside this tree's,
interleaved with the rest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

BUILD = """
import sys, time
import httpx
from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._http import HttpClient
from golem_cli.providers._http_settings import HttpSettings
client = HttpClient(Endpoint("openai", "m", "https://api.openai.com/v1/chat/completions"), HttpSettings(), {})
if sys.argv[1] == "golem":  # not in a tree before the one TLS context
    from golem_cli.providers._http import ssl_context
start = time.perf_counter()
if sys.argv[1] == "golem":
    httpx.AsyncClient(verify=ssl_context())
elif sys.argv[1] == "adapter":
    client._get()
else:
    httpx.AsyncClient()
print(time.perf_counter() - start)
"""
PROXIES = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9",
           "NO_PROXY": "127.0.0.1,localhost"}  # fmt: skip


def once(how: str, proxies: bool, python: str = sys.executable) -> float:
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    env.update(PROXIES if proxies else {})
    # From "/": ``-c`` puts the working directory first on sys.path, which would import this
    # checkout's golem_cli in the other tree's interpreter.
    out = subprocess.run([python, "-c", BUILD, how], capture_output=True, text=True, env=env, check=True, cwd="/")
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--before", help="the interpreter of another tree, for its adapter client")
    args = parser.parse_args()
    rows: dict[tuple[str, bool], list[float]] = {
        ("httpx default", False): [], ("httpx default", True): [], ("golem", True): [], ("golem", False): [],
        ("adapter", True): [],
    }  # fmt: skip
    if args.before:
        rows[("adapter before", True)] = []
    for _ in range(args.repeat):  # alternately, so the machine's noise falls on every row alike
        for (how, proxies), times in rows.items():
            python = args.before if how == "adapter before" else sys.executable
            kind = {"golem": "golem", "httpx default": "default"}.get(how, "adapter")
            times.append(once(kind, proxies, python))
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.repeat}")
    for (how, proxies), times in rows.items():
        print(f"{how:<14} {'proxy variables' if proxies else 'no proxy (yardstick)' if how != 'golem' else 'no proxy':<22}"
              f" {statistics.median(times) * 1000:7.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
