"""Request validation as strict as the real APIs, with their error texts and shapes.

The texts are the ones the services send (OpenAI's ``Invalid parameter: messages with role
'tool' must be a response to a preceeding message with 'tool_calls'.`` keeps its typo). Each
validator returns ``None`` for an acceptable body, else ``(status, error body)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

Problem = tuple[int, dict[str, Any]]

_OPENAI_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
_OPENAI_PART_TYPES = ("text", "image_url", "input_audio", "refusal", "audio", "file")
_ANTHROPIC_BLOCKS = ("text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking")
_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def openai_error(message: str, param: str | None = None, code: str | None = None, kind: str = "invalid_request_error") -> dict[str, Any]:
    """OpenAI's error envelope."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def anthropic_error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """Anthropic's error envelope."""
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_golemtest"}


def _type_name(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else "a string"


def validate_openai(body: Any) -> Problem | None:
    """Check a chat-completions request body."""
    problem = _openai(body)
    return None if problem is None else (400, openai_error(*problem))


def _openai(body: Any) -> tuple[str, str | None, str | None] | None:
    if not isinstance(body, dict):
        return ("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
                "HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
                None, None)  # fmt: skip
    if not body.get("model"):
        return "you must provide a model parameter", None, None
    messages = body.get("messages")
    if messages is None:
        return "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
    if not isinstance(messages, list):
        return f"Invalid type for 'messages': expected an array, but got {_type_name(messages)} instead.", "messages", "invalid_type"
    if not messages:
        return ("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                "messages", "empty_array")  # fmt: skip
    pending: set[str] = set()
    caller = -1
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"Invalid type for 'messages[{i}]': expected an object, but got {_type_name(message)} instead.", f"messages[{i}]", "invalid_type"
        role = message.get("role")
        if role is None:
            return f"Missing required parameter: 'messages[{i}].role'.", f"messages[{i}].role", "missing_required_parameter"
        if role not in _OPENAI_ROLES:
            return (f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
                    f"messages[{i}].role", "invalid_value")  # fmt: skip
        if pending and role != "tool":
            return _unanswered(caller, pending)
        problem = _openai_content(i, message)
        if problem:
            return problem
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not call_id:
                return f"Missing required parameter: 'messages[{i}].tool_call_id'.", f"messages[{i}].tool_call_id", "missing_required_parameter"
            if call_id not in pending:
                return ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                        f"messages.[{i}].role", None)  # fmt: skip
            pending.discard(call_id)
        if role == "assistant" and message.get("tool_calls"):
            problem = _openai_calls(i, message["tool_calls"])
            if problem:
                return problem
            pending, caller = {call["id"] for call in message["tool_calls"]}, i
    if pending:
        return _unanswered(caller, pending)
    return _openai_options(body)


def _unanswered(index: int, pending: set[str]) -> tuple[str, str, None]:
    return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
            f"The following tool_call_ids did not have response messages: {', '.join(sorted(pending))}",
            f"messages.[{index}].role", None)  # fmt: skip


def _openai_content(i: int, message: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    where = f"messages[{i}].content"
    if "content" not in message:
        if message["role"] == "assistant" and message.get("tool_calls"):
            return None
        return f"Missing required parameter: '{where}'.", where, "missing_required_parameter"
    content = message["content"]
    if content is None and message["role"] == "assistant":
        return None
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"Invalid type for '{where}': expected one of a string or array of objects, but got {_type_name(content)} instead.", where, "invalid_type"
    for j, part in enumerate(content):
        if not isinstance(part, dict) or "type" not in part:
            return f"Missing required parameter: '{where}[{j}].type'.", f"{where}[{j}].type", "missing_required_parameter"
        kind = part["type"]
        if kind not in _OPENAI_PART_TYPES:
            return (f"Invalid value: '{kind}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.",
                    f"{where}[{j}].type", "invalid_value")  # fmt: skip
        if kind != "text" and message["role"] != "user":
            return f"Invalid value: '{kind}'. Supported values are: 'text'.", f"{where}[{j}].type", "invalid_value"
        if kind == "text" and not isinstance(part.get("text"), str):
            return f"Missing required parameter: '{where}[{j}].text'.", f"{where}[{j}].text", "missing_required_parameter"
        if kind == "image_url" and not isinstance((part.get("image_url") or {}).get("url"), str):
            return f"Missing required parameter: '{where}[{j}].image_url.url'.", f"{where}[{j}].image_url.url", "missing_required_parameter"
    return None


def _openai_calls(i: int, calls: Any) -> tuple[str, str | None, str | None] | None:
    for j, call in enumerate(calls):
        where = f"messages[{i}].tool_calls[{j}]"
        for key in ("id", "type", "function"):
            if not isinstance(call, dict) or key not in call:
                return f"Missing required parameter: '{where}.{key}'.", f"{where}.{key}", "missing_required_parameter"
        if call["type"] != "function":
            return f"Invalid value: '{call['type']}'. Supported values are: 'function'.", f"{where}.type", "invalid_value"
        function = call["function"]
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return f"Missing required parameter: '{where}.function.name'.", f"{where}.function.name", "missing_required_parameter"
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            return (f"Invalid type for '{where}.function.arguments': expected a string, but got {_type_name(arguments)} instead.",
                    f"{where}.function.arguments", "invalid_type")  # fmt: skip
    return None


def _openai_options(body: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    for j, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or not isinstance((tool.get("function") or {}).get("name"), str):
            return f"Missing required parameter: 'tools[{j}].function.name'.", f"tools[{j}].function.name", "missing_required_parameter"
    if "stream_options" in body and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", None
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        return f"Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got {max_tokens} instead.", "max_tokens", "integer_below_min_value"
    return None


# --- Anthropic -----------------------------------------------------------------------------


def validate_anthropic(headers: Mapping[str, str], body: Any) -> Problem | None:
    """Check a Messages API request (headers and body)."""
    if not headers.get("anthropic-version"):
        return 400, anthropic_error("anthropic-version: header is required")
    message = _anthropic(body)
    return None if message is None else (400, anthropic_error(message))


def _anthropic(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "There was an issue with your request body: the body must be a JSON object"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    if not isinstance(body["max_tokens"], int) or isinstance(body["max_tokens"], bool):
        return "max_tokens: Input should be a valid integer"
    if body["max_tokens"] < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    if "system" in body and not isinstance(body["system"], str | list):
        return "system: Input should be a valid string"
    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "assistant":
        return 'messages: first message must use the "user" role'
    for i, message in enumerate(messages):
        problem = _anthropic_message(i, message, i == len(messages) - 1)
        if problem:
            return problem
    problem = _anthropic_pairing(messages)
    if problem:
        return problem
    for j, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or "name" not in tool:
            return f"tools.{j}.custom.name: Field required"
        if "input_schema" not in tool and "type" not in tool:
            return f"tools.{j}.custom.input_schema: Field required"
    return _anthropic_breakpoints(body)


def _anthropic_breakpoints(body: dict[str, Any]) -> str | None:
    """At most 4 ``cache_control`` breakpoints (the top-level automatic one counts), none on a
    thinking block, and no 1-hour entry after a 5-minute one (in tools, system, messages order)."""
    found: list[tuple[str, str]] = []  # (where, ttl)

    def visit(where: str, block: Any) -> str | None:
        marker = block.get("cache_control") if isinstance(block, dict) else None
        if marker is None:
            return None
        if block.get("type") in ("thinking", "redacted_thinking"):
            return f"{where}.{block['type']}.cache_control: Extra inputs are not permitted"
        found.append((where, str(marker.get("ttl") or "5m") if isinstance(marker, dict) else "5m"))
        return None

    system = body.get("system")
    places = [(f"tools.{j}", t) for j, t in enumerate(body.get("tools") or [])]
    places += [(f"system.{j}", b) for j, b in enumerate(system)] if isinstance(system, list) else []
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            places.append((f"messages.{i}.content.{j}", block))
            inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
            places += [(f"messages.{i}.content.{j}.content.{k}", b) for k, b in enumerate(inner if isinstance(inner, list) else [])]
    for where, block in places:
        problem = visit(where, block)
        if problem:
            return problem
    if body.get("cache_control") is not None:
        found.append(("cache_control", str((body["cache_control"] or {}).get("ttl") or "5m")))
    if len(found) > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {len(found)}."
    ttls = [ttl for _, ttl in found]
    if "1h" in ttls and "5m" in ttls and ttls.index("5m") < len(ttls) - 1 - ttls[::-1].index("1h"):
        return ("a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. "
                "Note that blocks are processed in the following order: `tools`, `system`, `messages`.")  # fmt: skip
    return None


def _anthropic_message(i: int, message: Any, last: bool) -> str | None:
    if not isinstance(message, dict):
        return f"messages.{i}: Input should be a valid dictionary"
    if message.get("role") not in ("user", "assistant"):
        return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    content = message.get("content")
    if isinstance(content, str):
        if not content and not (last and message["role"] == "assistant"):
            return f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
        return None
    if not isinstance(content, list):
        return f"messages.{i}.content: Input should be a valid list"
    if not content and not (last and message["role"] == "assistant"):
        return f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
    for j, block in enumerate(content):
        problem = _anthropic_block(f"messages.{i}.content.{j}", block, message["role"])
        if problem:
            return problem
    return None


def _anthropic_block(where: str, block: Any, role: str) -> str | None:
    if not isinstance(block, dict) or "type" not in block:
        return f"{where}: Unable to extract tag using discriminator 'type'"
    kind = block["type"]
    if kind not in _ANTHROPIC_BLOCKS:
        return f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {', '.join(repr(k) for k in _ANTHROPIC_BLOCKS)}"
    if kind == "text":
        if "text" not in block:
            return f"{where}.text.text: Field required"
        if not block["text"]:
            return "messages: text content blocks must be non-empty"
    elif kind in ("image", "document"):
        source = block.get("source")
        if not isinstance(source, dict) or source.get("type") not in ("base64", "url"):
            return f"{where}.{kind}.source: Field required"
        for key in ("media_type", "data") if source["type"] == "base64" else ("url",):
            if not source.get(key):
                return f"{where}.{kind}.source.{source['type']}.{key}: Field required"
    elif kind == "thinking":
        for key in ("thinking", "signature"):
            if key not in block:
                return f"{where}.thinking.{key}: Field required"
    elif kind == "redacted_thinking" and "data" not in block:
        return f"{where}.redacted_thinking.data: Field required"
    elif kind == "tool_use":
        if role != "assistant":
            return f"{where}: tool_use blocks are only allowed in assistant messages"
        if not _TOOL_ID.match(str(block.get("id", ""))):
            return f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        if not isinstance(block.get("input"), dict):
            return f"{where}.tool_use.input: Input should be a valid dictionary"
    elif kind == "tool_result":
        if "tool_use_id" not in block:
            return f"{where}.tool_result.tool_use_id: Field required"
        inner = block.get("content", "")
        if isinstance(inner, list):
            for k, item in enumerate(inner):
                problem = _anthropic_block(f"{where}.tool_result.content.{k}", item, "user")
                if problem:
                    return problem
        elif not isinstance(inner, str):
            return f"{where}.tool_result.content: Input should be a valid list"
    return None


def _anthropic_pairing(messages: list[dict[str, Any]]) -> str | None:
    """tool_use blocks must be answered in the very next message, and only those."""
    previous_uses: list[str] = []
    for i, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        results = [(j, b.get("tool_use_id")) for j, b in enumerate(blocks) if b.get("type") == "tool_result"]
        for j, use_id in results:
            if use_id not in previous_uses:
                return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {use_id}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")  # fmt: skip
        missing = [u for u in previous_uses if u not in {r for _, r in results}]
        if missing:
            return (f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.")  # fmt: skip
        previous_uses = [b["id"] for b in blocks if b.get("type") == "tool_use"] if message["role"] == "assistant" else []
    return None
