"""Replies in both wire protocols, as whole JSON bodies or as SSE frames.

Streams look like the real ones: OpenAI sends a role chunk, content deltas split mid-word, a
call's ``id`` and name only on its first piece and its arguments split mid-JSON, a finishing
chunk, then usage in a last chunk with empty ``choices`` and ``data: [DONE]``. Anthropic sends
``message_start``, blocks with their deltas (and a ``ping``), ``message_delta`` with the stop
reason and output usage, then ``message_stop``. Each frame is tagged so a fault can be placed
precisely (for example in the middle of a call's arguments).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

Frame = tuple[str, bytes]  # (tag, bytes): tag is "text", "args", "thinking", "usage", "other"


@dataclass
class ToolCallSpec:
    id: str
    name: str
    args: str


@dataclass
class Reply:
    """What the fake model answers. ``finish`` defaults to a tool call when there are calls."""

    text: str = ""
    refusal: str = ""  # OpenAI: the refusal field/deltas; Anthropic: stop_reason "refusal" (after ``text``)
    thinking: str = ""
    reasoning_key: str = "reasoning_content"  # DeepSeek, vLLM; OpenRouter, Ollama and Groq say "reasoning"
    signature: str = ""
    redacted: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    finish: str = ""
    input_tokens: int = 11
    output_tokens: int = 7
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0  # Anthropic: the part of ``cache_write_tokens`` written for an hour


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def pieces(text: str, rng: random.Random, most: int = 6) -> list[str]:
    """``text`` in pieces of 1..most characters (so words and JSON split anywhere)."""
    out, i = [], 0
    while i < len(text):
        size = rng.randint(1, most)
        out.append(text[i : i + size])
        i += size
    return out


# --- OpenAI --------------------------------------------------------------------------------

_OPENAI_FINISH = {"tool_call": "tool_calls"}


def openai_body(reply: Reply, model: str) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or (None if reply.tool_calls or reply.refusal else "")}
    if reply.refusal:
        message["refusal"] = reply.refusal
    if reply.thinking:
        message[reply.reasoning_key] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}} for c in reply.tool_calls
        ]
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": _openai_finish(reply)}
    return dumps({"id": "chatcmpl-golemtest", "object": "chat.completion", "created": 1700000000, "model": model,
                  "choices": [choice], "usage": _openai_usage(reply)})  # fmt: skip


def _openai_finish(reply: Reply) -> str:
    return reply.finish or ("tool_calls" if reply.tool_calls else "stop")


def _openai_usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": len(reply.thinking) // 4, "audio_tokens": 0},
    }


def openai_frames(reply: Reply, model: str, include_usage: bool, rng: random.Random) -> list[Frame]:
    def chunk(tag: str, delta: dict[str, Any], finish: str | None = None) -> Frame:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {"id": "chatcmpl-golemtest", "object": "chat.completion.chunk", "created": 1700000000,
                "model": model, "choices": [choice], "usage": None}  # fmt: skip
        return tag, b"data: " + dumps(body) + b"\n\n"

    frames = [chunk("other", {"role": "assistant", "content": ""})]
    frames += [chunk("thinking", {"content": None, reply.reasoning_key: p}) for p in pieces(reply.thinking, rng)]
    frames += [chunk("text", {"content": p}) for p in pieces(reply.text, rng)]
    frames += [chunk("text", {"content": None, "refusal": p}) for p in pieces(reply.refusal, rng)]
    for index, call in enumerate(reply.tool_calls):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        frames.append(chunk("call", {"tool_calls": [head]}))
        for piece in pieces(call.args, rng, most=4):
            frames.append(chunk("args", {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    frames.append(chunk("other", {}, _openai_finish(reply)))
    if include_usage:
        usage = {"id": "chatcmpl-golemtest", "object": "chat.completion.chunk", "created": 1700000000,
                 "model": model, "choices": [], "usage": _openai_usage(reply)}  # fmt: skip
        frames.append(("usage", b"data: " + dumps(usage) + b"\n\n"))
    frames.append(("other", b"data: [DONE]\n\n"))
    return frames


# --- Anthropic -----------------------------------------------------------------------------


def _anthropic_stop(reply: Reply) -> str:
    return reply.finish or ("refusal" if reply.refusal else "tool_use" if reply.tool_calls else "end_turn")


def _anthropic_usage(reply: Reply) -> dict[str, Any]:
    by_ttl = {"ephemeral_5m_input_tokens": reply.cache_write_tokens - reply.cache_write_1h_tokens,
              "ephemeral_1h_input_tokens": reply.cache_write_1h_tokens}  # fmt: skip
    return {"input_tokens": reply.input_tokens, "cache_creation_input_tokens": reply.cache_write_tokens,
            "cache_read_input_tokens": reply.cache_read_tokens, "cache_creation": by_ttl,
            "output_tokens": reply.output_tokens}  # fmt: skip


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.thinking:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": reply.signature})
    if reply.redacted:
        blocks.append({"type": "redacted_thinking", "data": reply.redacted})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": "__ARGS__" + call.args})
    return blocks


def anthropic_body(reply: Reply, model: str) -> bytes:
    """A message; tool inputs are spliced in as the raw argument text, spelling kept."""
    message = {"model": model, "id": "msg_golemtest", "type": "message", "role": "assistant",
               "content": _anthropic_blocks(reply), "stop_reason": _anthropic_stop(reply), "stop_sequence": None,
               "usage": _anthropic_usage(reply)}  # fmt: skip
    encoded = dumps(message)
    for call in reply.tool_calls:
        encoded = encoded.replace(dumps("__ARGS__" + call.args), call.args.encode(), 1)
    return encoded


def anthropic_frames(reply: Reply, model: str, rng: random.Random) -> list[Frame]:
    def event(tag: str, body: dict[str, Any]) -> Frame:
        return tag, b"event: " + body["type"].encode() + b"\ndata: " + dumps(body) + b"\n\n"

    start_usage = {**_anthropic_usage(reply), "output_tokens": 1}
    message = {"model": model, "id": "msg_golemtest", "type": "message", "role": "assistant", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": start_usage}  # fmt: skip
    frames = [event("other", {"type": "message_start", "message": message})]
    for index, block in enumerate(_anthropic_blocks(reply)):
        frames += _anthropic_block_frames(index, block, rng, event)
    delta = {"stop_reason": _anthropic_stop(reply), "stop_sequence": None}
    frames.append(event("usage", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": reply.output_tokens}}))
    frames.append(event("other", {"type": "message_stop"}))
    return frames


def _anthropic_block_frames(index: int, block: dict[str, Any], rng: random.Random, event: Any) -> list[Frame]:
    kind = block["type"]
    if kind == "redacted_thinking":
        start = block
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
    else:
        start = {**block, kind: ""} if kind != "thinking" else {"type": "thinking", "thinking": "", "signature": ""}
    frames = [event("other", {"type": "content_block_start", "index": index, "content_block": start})]

    def delta(tag: str, body: dict[str, Any]) -> Frame:
        return event(tag, {"type": "content_block_delta", "index": index, "delta": body})

    if kind == "text":
        for n, piece in enumerate(pieces(block["text"], rng)):
            frames.append(delta("text", {"type": "text_delta", "text": piece}))
            if n == 1:
                frames.append(("other", b'event: ping\ndata: {"type": "ping"}\n\n'))
    elif kind == "thinking":
        frames += [delta("thinking", {"type": "thinking_delta", "thinking": p}) for p in pieces(block["thinking"], rng)]
        frames.append(delta("thinking", {"type": "signature_delta", "signature": block["signature"]}))
    elif kind == "tool_use":
        frames.append(delta("args", {"type": "input_json_delta", "partial_json": ""}))
        args = block["input"][len("__ARGS__") :]
        frames += [delta("args", {"type": "input_json_delta", "partial_json": p}) for p in pieces(args, rng, most=4)]
    frames.append(event("other", {"type": "content_block_stop", "index": index}))
    return frames
