"""Anthropic Messages on the wire: the request body (spec §9.2) and the reply.

Turns alternate user/assistant: system messages become the top-level ``system`` string, tool
results become ``tool_result`` blocks of a user turn, and consecutive turns with the same wire
role merge. Thinking blocks are replayed with their signatures, which the API verifies;
unsigned reasoning (from OpenAI-compatible models) is not sent (docs/adr/0007).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from golem_cli.core.codec.gojson import compact_json
from golem_cli.core.codec.toolargs import wire_args
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import ASSISTANT, SYSTEM, TOOL, Message, Part, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelRequest, ModelResponse, ModelSettings
from golem_cli.core.usage import Usage
from golem_cli.providers._wire import REFUSED_WITHOUT_TEXT, count, encode_json, finish_reason, paired, raw_json
from golem_cli.providers.anthropic import check_settings
from golem_cli.providers.anthropic.cache import mark
from golem_cli.providers.caching import Ttl

#: ``stop_reason`` in golem's vocabulary (``_wire.finish_reason``).
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_call",
    "refusal": "content_filter",
}


def request_body(
    model: str, max_tokens: int, request: ModelRequest, *, stream: bool, cache: Ttl | None = None
) -> bytes:
    """The exact request bytes; raises ``ModelError`` for content or options this API cannot
    carry. ``max_tokens`` is sent when the request sets none (the API requires it). ``cache``:
    the lifetime of the cache breakpoints to mark (``cache.py``), None for none."""
    settings = request.settings
    check_settings(settings)
    system, turns = wire_turns(request.messages)
    body: dict[str, Any] = {"model": model, "max_tokens": output_limit(settings, max_tokens)}
    if system:
        body["system"] = system
    body["messages"] = turns
    if request.tools:
        body["tools"] = [
            {"name": t.name, **({"description": t.description} if t.description else {}), "input_schema": t.parameters}
            for t in request.tools
        ]
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.stop:
        body["stop_sequences"] = list(settings.stop)
    if settings.thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
    if settings.reasoning_effort:
        body["output_config"] = {"effort": settings.reasoning_effort}
    if cache is not None:
        mark(body, cache)
    if stream:
        body["stream"] = True
    return encode_json(body)


def output_limit(settings: ModelSettings, default: int) -> int:
    """``max_tokens``: the one set, else ``default``, raised above a thinking budget that would
    not fit in it (thinking counts against the limit, and the API requires room for it)."""
    if settings.max_tokens:
        return settings.max_tokens
    if settings.thinking_budget and settings.thinking_budget >= default:
        return settings.thinking_budget + default
    return default


def wire_turns(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, turns) for a history.

    Where spec §9.2 (Go's encoder) writes what the API rejects, what the API accepts wins
    (docs/adr/0007): a message with nothing to send is left out instead of ``null`` or an
    empty text block, unsigned thinking is left out, an empty tool result has no ``content``,
    and results sit right after their calls (``_wire.paired``).
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    role = ""
    for message in paired(messages):
        if message.role == SYSTEM:
            system.append(message.content)
            continue
        if message.role == ASSISTANT:
            role, blocks = "assistant", _assistant(message)
        elif message.role == TOOL:
            role, blocks = "user", [_tool_result(message)]
        else:
            role, blocks = "user", _user(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] = turns[-1]["content"] + blocks
        else:
            turns.append({"role": role, "content": blocks})
    if turns and turns[0]["role"] != "user":  # the API requires a user turn first
        turns.insert(0, {"role": "user", "content": [_text(EMPTY_TURN)]})
    if role == "user" and (not turns or turns[-1]["role"] != "user"):
        turns.append({"role": "user", "content": [_text(EMPTY_TURN)]})  # an empty prompt, not a prefill
    return "\n\n".join(system), turns


#: Stands in for a user turn the API requires where the history has none with content.
EMPTY_TURN = "(empty message)"


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _assistant(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.thinking:
        if block.redacted:
            blocks.append({"type": "redacted_thinking", "data": block.redacted})
        elif block.signature:  # unsigned reasoning (another provider's) would be rejected
            blocks.append({"type": "thinking", "thinking": block.text, "signature": block.signature})
    if message.content:
        blocks.append(_text(message.content))
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": tool_id(call.id), "name": call.name, "input": _input(call.args)})
    return blocks


def tool_id(call_id: str) -> str:
    """A call ID as this API accepts it (``^[a-zA-Z0-9_-]+$``): other characters, which
    other providers' IDs may hold, become ``_``; the same ID always maps the same way."""
    return _NOT_ID.sub("_", call_id)


_NOT_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _input(args: str) -> Any:
    """``input`` as the argument object itself, compact (``wire_args`` always gives an object)."""
    text = wire_args(args)
    return raw_json(compact_json(text) or text)


def _user(message: Message) -> list[dict[str, Any]]:
    return ([_text(message.content)] if message.content else []) + _media(message.parts, "")


def _tool_result(message: Message) -> dict[str, Any]:
    inner = ([_text(message.content)] if message.content else []) + _media(message.parts, "tool result ")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id(message.tool_call_id)}
    if inner:
        block["content"] = inner
    if message.failed:
        block["is_error"] = True
    return block


def _media(parts: Sequence[Part], where: str) -> list[dict[str, Any]]:
    return [_media_block(part, where, index) for index, part in enumerate(parts)]


def _media_block(part: Part, where: str, index: int) -> dict[str, Any]:
    """An image or a document with its source (inline or by URL); ``ModelError`` for what the
    API cannot carry."""
    if part.kind not in ("image", "document") or (
        part.kind == "document" and part.data and part.media_type != "application/pdf"
    ):
        kind = part.kind + (f" ({part.media_type})" if part.media_type else "")
        raise _cannot_carry(f"{where}{kind} part {index}", "only images and documents (inline PDF or URL)")
    if not part.data:
        if not part.url:
            raise _cannot_carry(f"{where}{part.kind} part {index}", "it is empty")
        return {"type": part.kind, "source": {"type": "url", "url": part.url}}
    media_type = _image_type(part) if part.kind == "image" else part.media_type
    if not media_type:
        stated = part.media_type or "no media type"
        raise _cannot_carry(f"{where}{part.kind} part {index}", f"it is not a JPEG, PNG, GIF or WebP image ({stated})")
    data = base64.b64encode(part.data).decode("ascii")
    return {"type": part.kind, "source": {"type": "base64", "media_type": media_type, "data": data}}


def _cannot_carry(subject: str, why: str) -> ModelError:
    return ModelError(
        f"the Messages API cannot carry the {subject}: {why}", hint="remove the part, or use a provider that accepts it"
    )


_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def _image_type(part: Part) -> str:
    """The media type to send for an inline image: the stored one when the API takes it,
    else what the bytes say (a history from elsewhere may lack or misstate it), else ""."""
    if part.media_type in _IMAGE_TYPES:
        return part.media_type
    for magic, media_type in _IMAGE_MAGIC:
        if part.data.startswith(magic):
            return media_type
    return "image/webp" if part.data[:4] == b"RIFF" and part.data[8:12] == b"WEBP" else ""


# --- replies -------------------------------------------------------------------------------


def usage(raw: object) -> Usage:
    """Usage from an Anthropic ``usage`` object in golem's one meaning (``core/usage.py``):
    Anthropic's ``input_tokens`` leaves out what was read from or written to the cache, so the
    input is the sum of the three; the one-hour part of the writes is
    ``cache_creation.ephemeral_1h_input_tokens``; thinking tokens are
    ``output_tokens_details.thinking_tokens``."""
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, dict) else 0
    creation = raw.get("cache_creation")
    hour = creation.get("ephemeral_1h_input_tokens") if isinstance(creation, dict) else 0
    read, written = count(raw.get("cache_read_input_tokens")), count(raw.get("cache_creation_input_tokens"))
    return Usage(
        input_tokens=count(raw.get("input_tokens")) + read + written,
        output_tokens=count(raw.get("output_tokens")),
        cache_read_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=count(thinking),
        cache_write_1h_tokens=min(count(hour), written),
    )


class _Block(msgspec.Struct):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None
    id: str | None = None
    name: str | None = None
    input: msgspec.Raw = msgspec.Raw(b"")  # raw bytes: the spelling of the arguments is kept


class _Reply(msgspec.Struct):
    content: list[_Block] = []
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None


_decoder = msgspec.json.Decoder(_Reply)


def parse_response(payload: bytes, model: str) -> ModelResponse:
    """A non-streaming reply. Raises ``ValueError`` for a body that is not a message."""
    try:
        reply = _decoder.decode(payload)
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
        raise ValueError(f"the reply is not a Messages API message ({exc})") from None
    refusal = reply.stop_reason == "refusal"
    return ModelResponse(
        message=_message(reply.content, refusal),
        usage=usage(reply.usage),
        finish_reason=finish_reason(reply.stop_reason, FINISH_REASONS),
        model_name=reply.model or model,
        stop_reason=reply.stop_reason or "",
        refusal=refusal,
    )


def _message(content: list[_Block], refusal: bool) -> Message:
    """The assistant message a reply's content blocks make (texts joined by newlines; a
    refusal without text says so)."""
    texts: list[str] = []
    thinking: list[ThinkingBlock] = []
    calls: list[ToolCall] = []
    for block in content:
        if block.type == "text":
            texts.append(block.text or "")
        elif block.type == "thinking":
            thinking.append(ThinkingBlock(text=block.thinking or "", signature=block.signature or ""))
        elif block.type == "redacted_thinking":
            thinking.append(ThinkingBlock(redacted=block.data or ""))
        elif block.type == "tool_use":
            args = wire_args(bytes(block.input).decode("utf-8", "replace"))
            calls.append(ToolCall(id=block.id or "", name=block.name or "", args=args))
    text = "\n".join(texts) or (REFUSED_WITHOUT_TEXT if refusal else "")
    return Message(role=ASSISTANT, content=text, tool_calls=calls, thinking=thinking)
