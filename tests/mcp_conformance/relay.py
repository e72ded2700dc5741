"""The command the conformance suite runs for a scenario when the tests drive it: it hands the
server's URL and the scenario's variables to the client host in the test process (``host.py``,
where golem's MCP layer and the SDK are imported already), prints what the client said and
exits with its status. It imports neither golem nor the SDK: a scenario costs no second import
of them. ``GOLEM_CONFORMANCE_HOST`` is the host's socket."""

from __future__ import annotations

import json
import os
import socket
import sys


def main() -> int:
    request = {"url": sys.argv[-1], "scenario": os.environ.get("MCP_CONFORMANCE_SCENARIO", ""),
               "context": json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")}  # fmt: skip
    with socket.socket(socket.AF_UNIX) as host:
        host.connect(os.environ["GOLEM_CONFORMANCE_HOST"])
        host.sendall(json.dumps(request).encode() + b"\n")
        for line in host.makefile("r", encoding="utf-8"):
            said = json.loads(line)
            if "status" in said:
                return int(said["status"])
            print(said["out"], flush=True)
    print("the client host closed the connection before the client's end", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
