"""OpenAI chat completions on the wire: the request body (spec §9.1) and the reply.

The body is built as dicts in the key order of the Go reference and encoded the way Go
encodes, so the same history always gives the same bytes (prompt caches hit) and the bytes
match those of the Go library.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from golem_cli.core.codec.gojson import go_quote, go_quote_q
from golem_cli.core.codec.history import saved_args
from golem_cli.core.codec.toolargs import wire_args
from golem_cli.core.errors import ModelError
from golem_cli.core.messages import ASSISTANT, SYSTEM, TOOL, Message, Part, ThinkingBlock, ToolCall
from golem_cli.core.model import ModelRequest, ModelResponse, ToolDefinition
from golem_cli.core.usage import Usage
from golem_cli.providers._wire import count, encode_json, finish_reason, paired
from golem_cli.providers.openai import check_settings

_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
#: ``finish_reason`` in golem's vocabulary (``_wire.finish_reason``).
FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "content_filter": "content_filter",
}


def request_body(model: str, request: ModelRequest, *, stream: bool, cache_key: str = "") -> bytes:
    """The exact request bytes; raises ``ModelError`` for content or options this API cannot carry.
    ``cache_key``: sent as ``prompt_cache_key`` when not empty."""
    body: dict[str, Any] = {"model": model, "messages": wire_messages(request.messages)}
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
    settings = request.settings
    check_settings(settings)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.max_tokens:
        # OpenAI's reasoning models refuse max_tokens; everything else knows only max_tokens.
        body["max_completion_tokens" if is_reasoning_model(model) else "max_tokens"] = settings.max_tokens
    if settings.seed is not None:
        body["seed"] = settings.seed
    if settings.stop:
        body["stop"] = list(settings.stop)
    if settings.reasoning_effort:
        body["reasoning_effort"] = settings.reasoning_effort
    if cache_key:
        body["prompt_cache_key"] = cache_key
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return encode_json(body)


_REASONING_MODEL = re.compile(r"(o[1-9]|gpt-5)([-.:]|$)", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    """OpenAI's o-series and gpt-5 family, which take ``max_completion_tokens``."""
    return bool(_REASONING_MODEL.match(model))


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in chat-completions form. Each run of tool messages keeps its place; media the
    tools produced follow the run in one synthetic user message, framed per call."""
    wire: list[dict[str, Any]] = []
    messages = paired(messages)  # results right after their calls, every call with an ID
    i = 0
    while i < len(messages):
        if messages[i].role != TOOL:
            wire.append(_message(messages[i]))
            i += 1
            continue
        framed: list[dict[str, Any]] = []
        while i < len(messages) and messages[i].role == TOOL:
            result = messages[i]
            # A failed result goes as the text {"error":"..."}. Spec §9.1 (Go) embeds it as a JSON
            # object, which the real API rejects with 400 invalid_type (docs/adr/0003).
            content = '{"error":' + go_quote(result.content) + "}" if result.failed else result.content
            entry: dict[str, Any] = {"role": "tool", "content": content}
            if result.tool_call_id:
                entry["tool_call_id"] = result.tool_call_id
            wire.append(entry)
            if result.parts:
                name, call_id = go_quote_q(result.tool_name), go_quote_q(result.tool_call_id)
                framed.append(_text(f"<tool_result tool_name={name} tool_call_id={call_id}>\n"))
                framed.extend(_media(result.parts))
                framed.append(_text("\n</tool_result>"))
            i += 1
        if framed:
            wire.append({"role": "user", "content": framed})
    return wire


def _message(message: Message) -> dict[str, Any]:
    role = message.role if message.role in (SYSTEM, ASSISTANT) else "user"
    content: Any = message.content
    if message.parts:
        content = ([_text(message.content)] if message.content else []) + _media(message.parts)
    entry: dict[str, Any] = {"role": role, "content": content}
    if message.tool_calls:
        entry["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments(call.args)}}
            for call in message.tool_calls
        ]
    if message.tool_call_id:
        entry["tool_call_id"] = message.tool_call_id
    return entry


def _arguments(args: str) -> str:
    """A call's arguments as sent. An object goes as it reads back once saved (compacted,
    HTML-safe), so the call sends the same bytes in the run that received it as in every
    later run, after the history was saved and read back (Go sends the in-memory spelling:
    docs/adr/0024); anything else goes in the spec's wrapper, as received."""
    wired = wire_args(args)
    return saved_args(wired) if wired.startswith("{") and not wired.startswith('{"truncated_args":') else wired


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text} if text else {"type": "text"}


def _media(parts: Sequence[Part]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, part in enumerate(parts):
        data = base64.b64encode(part.data).decode("ascii")
        if part.kind == "image":
            url = f"data:{part.media_type};base64,{data}" if part.data else part.url
            out.append({"type": "image_url", "image_url": {"url": url}})
        elif part.kind == "document" and not part.url and part.media_type == "application/pdf":
            # The documented form is a data URL; spec §9.1 (Go) sends bare base64 (docs/adr/0007).
            file = {"file_data": f"data:application/pdf;base64,{data}", "filename": "document.pdf"}
            out.append({"type": "file", "file": file})
        elif part.kind == "audio" and not part.url and part.media_type in _AUDIO_FORMATS:
            out.append(
                {"type": "input_audio", "input_audio": {"data": data, "format": _AUDIO_FORMATS[part.media_type]}}
            )
        else:
            raise _unsupported(index, part)
    return out


def _unsupported(index: int, part: Part) -> ModelError:
    what = (
        f"{part.kind} part {index}"
        + (f" ({part.media_type})" if part.media_type else "")
        + (" by URL" if part.url else "")
    )
    return ModelError(
        f"chat completions cannot carry the {what}: only images, inline PDF documents and inline wav/mp3 audio",
        hint="attach the file inline, or use a provider that accepts it (anthropic: takes document URLs)",
    )


# --- replies -------------------------------------------------------------------------------


def usage(raw: object) -> Usage:
    """Usage from a chat-completions ``usage`` object: ``prompt_tokens`` already counts the
    cached part (``prompt_tokens_details.cached_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens``); OpenRouter reports cache writes as
    ``prompt_tokens_details.cache_write_tokens``; reasoning is
    ``completion_tokens_details.reasoning_tokens``."""
    if not isinstance(raw, dict):
        return Usage()
    prompt = raw.get("prompt_tokens_details")
    prompt = prompt if isinstance(prompt, dict) else {}
    completion = raw.get("completion_tokens_details")
    completion = completion if isinstance(completion, dict) else {}
    cached = prompt.get("cached_tokens")
    return Usage(
        input_tokens=count(raw.get("prompt_tokens")),
        output_tokens=count(raw.get("completion_tokens")),
        cache_read_tokens=count(cached if cached is not None else raw.get("prompt_cache_hit_tokens")),
        cache_write_tokens=count(prompt.get("cache_write_tokens")),
        reasoning_tokens=count(completion.get("reasoning_tokens")),
    )


# The shapes golem reads, typed: a field of the wrong type (a call ID that is a number, a
# ``choices`` that is an object) fails the decode with msgspec's path to it, instead of reaching
# a Message that could then not be saved and loaded back. Unknown fields are ignored.


class Function(msgspec.Struct):
    name: str | None = None
    arguments: str | dict[str, Any] | None = None  # an object from some servers


class CallPiece(msgspec.Struct):
    index: int | None = None
    id: str | None = None
    function: Function | None = None


class WireMessage(msgspec.Struct):
    """A reply's ``message``, or a chunk's ``delta``."""

    content: str | list[Any] | None = None
    refusal: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[CallPiece] | None = None


class Choice(msgspec.Struct):
    message: WireMessage | None = None
    delta: WireMessage | None = None
    finish_reason: str | None = None


class Completion(msgspec.Struct):
    """A whole reply, or one streamed chunk (``choices[].delta``); ``error`` as some servers put it."""

    choices: list[Choice] | None = None
    usage: Any = None
    model: Any = None
    error: Any = None


completion_decoder = msgspec.json.Decoder(Completion)


def text_of(content: str | list[Any] | None) -> str:
    """Content as text; a list of parts (some servers answer so) gives its text parts joined."""
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content or ""


def reasoning_of(message: WireMessage) -> str:
    """Reasoning text: ``reasoning_content`` (DeepSeek, vLLM) or ``reasoning`` (Ollama, Groq,
    OpenRouter). Capture only: it is never sent back."""
    return message.reasoning_content or message.reasoning or ""


def arguments_text(value: str | dict[str, Any] | None) -> str:
    """Call arguments as received; a server that sends an object gets it compact-encoded."""
    if value is None:
        return ""
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def parse_response(payload: bytes, model: str) -> ModelResponse:
    """A non-streaming reply. Raises ``ValueError`` for a body that is not a completion, or
    whose fields have the wrong types (saying which)."""
    try:
        data = completion_decoder.decode(payload)
    except msgspec.ValidationError as exc:
        raise ValueError(f"the reply has the wrong shape: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ValueError(f"the reply is not JSON ({exc})") from None
    if not data.choices:
        raise ValueError("the reply has no choices")
    choice = data.choices[0]
    message = choice.message or WireMessage()
    return ModelResponse(
        message=_assistant(message),
        usage=usage(data.usage),
        finish_reason=finish_reason(choice.finish_reason, FINISH_REASONS),
        model_name=str(data.model or model),
        stop_reason=choice.finish_reason or "",
        refusal=bool(message.refusal),
    )


def _assistant(message: WireMessage) -> Message:
    """The reply's message as golem's: a refusal's text is its content (content is null then)."""
    content = text_of(message.content) or message.refusal or ""
    reasoning = reasoning_of(message)
    calls = []
    for call in message.tool_calls or []:
        function = call.function or Function()
        calls.append(ToolCall(id=call.id or "", name=function.name or "", args=arguments_text(function.arguments)))
    thinking = [ThinkingBlock(text=reasoning)] if reasoning else []
    return Message(role=ASSISTANT, content=content, tool_calls=calls, thinking=thinking)
