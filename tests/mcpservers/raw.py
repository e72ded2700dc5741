"""A hand-written stdio tool server that misbehaves as it is told (JSON-RPC lines written by
hand, no SDK): ``--answer surrogate`` answers a call with a lone ``\\ud800`` escape,
``--answer deep`` with JSON nested 300 deep; ``--tools N`` offers N tools (``t0``...);
``--setsid-child FILE`` starts, at the first call, a child in a session of its own and writes
its pid to FILE. It speaks 2025-11-25 (``server/discover`` is an unknown method)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--answer", default="ok")
parser.add_argument("--tools", type=int, default=1)
parser.add_argument("--setsid-child", default="")
options = parser.parse_args()


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(call_id: object) -> None:
    if options.setsid_child:
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        with open(options.setsid_child, "w") as f:
            f.write(str(child.pid))
    if options.answer == "surrogate":
        text = '"result":{"content":[{"type":"text","text":"bad \\ud800 text"}]}'
        sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(call_id)},{text}}}\n')
    elif options.answer == "deep":
        deep = "[" * 300 + "]" * 300
        sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(call_id)},"result":{{"content":[],"x":{deep}}}}}\n')
    else:
        send({"jsonrpc": "2.0", "id": call_id, "result": {"content": [{"type": "text", "text": "fine"}]}})
    sys.stdout.flush()


TOOLS = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(options.tools)]
for line in sys.stdin:
    message = json.loads(line)
    method, call_id = message.get("method"), message.get("id")
    if call_id is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": call_id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"}}})  # fmt: skip
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": call_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        answer(call_id)
    else:
        send({"jsonrpc": "2.0", "id": call_id, "error": {"code": -32601, "message": "Method not found"}})
