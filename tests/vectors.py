"""Loading the spec vectors (``tests/data/spec/vectors``, copied from the shared spec) as golem messages.

A vector's tool call gives ``args`` as a JSON value or ``argsRaw`` as the exact in-memory text
(``""`` meaning nil args); both become ``ToolCall.args`` text here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall

REPO = Path(__file__).resolve().parents[1]
#: The spec, its vectors and the provider recordings, kept in the repository so that the
#: tests run from any clone.
DATA = REPO / "tests" / "data"
VECTOR_DIR = DATA / "spec" / "vectors"


def vector_files() -> list[Path]:
    files = sorted(VECTOR_DIR.glob("*.json"))
    assert files, f"no spec vectors under {VECTOR_DIR}"
    return files


def load_vector(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def call_from_json(obj: dict[str, Any]) -> ToolCall:
    if "argsRaw" in obj:
        args = obj["argsRaw"]
    elif "args" in obj:
        args = json.dumps(obj["args"], separators=(",", ":"), ensure_ascii=False)
    else:
        args = ""
    return ToolCall(obj.get("id", ""), obj.get("name", ""), args, obj.get("signature", ""))


def message_from_json(obj: dict[str, Any]) -> Message:
    import base64

    return Message(
        role=obj.get("role", ""),
        content=obj.get("content", ""),
        parts=[
            Part(p.get("kind", ""), p.get("url", ""), base64.b64decode(p.get("data", "")), p.get("mediaType", ""))
            for p in obj.get("parts", [])
        ],
        tool_calls=[call_from_json(c) for c in obj.get("toolCalls", [])],
        tool_call_id=obj.get("toolCallId", ""),
        tool_name=obj.get("toolName", ""),
        failed=obj.get("failed", False),
        thinking=[ThinkingBlock(**t) for t in obj.get("thinking", [])],
        run_id=obj.get("runId", ""),
        conversation_id=obj.get("conversationId", ""),
    )


def messages_from_json(items: list[dict[str, Any]] | None) -> list[Message] | None:
    return None if items is None else [message_from_json(m) for m in items]
