"""What both wire mappings share: request bytes spelled as Go spells them, and reply fields read
the same way whatever the protocol."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec

from golem_cli.core.codec.gojson import html_escape_json
from golem_cli.core.messages import ASSISTANT, INTERRUPTED, TOOL, Message
from golem_cli.core.model import ModelResponse, StreamDone, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta

_encoder = msgspec.json.Encoder()
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_json(body: Any) -> bytes:
    """Request bytes as Go's encoder writes them: compact, HTML-safe, keys in build order.

    The same history always gives the same bytes, so provider prompt caches hit.
    """
    try:
        encoded = _encoder.encode(body)
    except UnicodeEncodeError:
        encoded = _encoder.encode(_without_surrogates(body))
    return html_escape_json(encoded)


def raw_json(text: str) -> msgspec.Raw:
    """Embed already-valid JSON text as a value (tool arguments), spelling untouched."""
    return msgspec.Raw(_SURROGATE.sub("\ufffd", text).encode())


def _without_surrogates(value: Any) -> Any:
    # Go replaces invalid UTF-8 with U+FFFD; a lone surrogate is Python's form of it.
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


#: The reply kept when a model refuses without saying anything (Anthropic's ``refusal`` stop
#: reason can arrive with no text): an empty turn would tell neither the user nor the model why.
REFUSED_WITHOUT_TEXT = "[refused]"


def finish_reason(reason: object, vocabulary: Mapping[str, str]) -> str:
    """A provider's finish or stop reason in golem's vocabulary (``stop``, ``length``,
    ``tool_call``, ``content_filter``); anything undocumented is ``other``, nothing is ``""``."""
    if not reason:
        return ""
    return vocabulary.get(str(reason), "other")


def count(value: object) -> int:
    """A token count from a usage object; anything but a whole number counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def paired(messages: Sequence[Message]) -> list[Message]:
    """``messages`` in the order both APIs demand: every call has an ID, and the results of a
    turn's calls follow it, in call order, before anything else.

    Repair (spec §2) pairs a call with a result that comes after an intervening message, and
    leaves a call without an ID unanswered; both APIs reject either. On the wire, such a result
    moves up next to its call, and an ID-less call gets a deterministic ID and the result repair
    gives an interrupted call. The stored history is unchanged (docs/adr/0007).
    """
    messages = _with_ids(messages)
    out: list[Message] = []
    moved: set[int] = set()
    for index, message in enumerate(messages):
        if index in moved:
            continue
        out.append(message)
        if message.role != ASSISTANT or not message.tool_calls:
            continue
        order = {call.id: n for n, call in reversed(list(enumerate(message.tool_calls)))}
        answers: list[tuple[int, Message]] = []
        for later in range(index + 1, len(messages)):
            other = messages[later]
            if other.role == ASSISTANT:
                break
            if other.role == TOOL and other.tool_call_id in order:
                answers.append((order[other.tool_call_id], other))
                moved.add(later)
        out.extend(answer for _, answer in sorted(answers, key=lambda pair: pair[0]))
    return out


def _with_ids(messages: Sequence[Message]) -> Sequence[Message]:
    """ID-less calls with a wire ID and the result repair gives an interrupted call."""
    if not any(not call.id for m in messages if m.role == ASSISTANT for call in m.tool_calls):
        return messages
    out: list[Message] = []
    owed: list[Message] = []
    for index, message in enumerate(messages):
        if owed and message.role != TOOL:
            out.extend(owed)
            owed = []
        if message.role == ASSISTANT and any(not call.id for call in message.tool_calls):
            calls = []
            for n, call in enumerate(message.tool_calls):
                if not call.id:
                    call = msgspec.structs.replace(call, id=f"golem_no_id_{index}_{n}")
                    owed.append(Message(role=TOOL, content=INTERRUPTED, tool_call_id=call.id, tool_name=call.name))
                calls.append(call)
            message = msgspec.structs.replace(message, tool_calls=calls)
        out.append(message)
    out.extend(owed)
    return out


def events_of(response: ModelResponse) -> Iterator[StreamEvent]:
    """A whole reply as the stream events it would have arrived as, ending in ``StreamDone``."""
    message = response.message
    for index, block in enumerate(message.thinking):
        if block.redacted:
            yield ThinkingDelta(index=index, redacted=block.redacted)
        else:
            yield ThinkingDelta(index=index, text=block.text, signature=block.signature)
    if message.content:
        yield TextDelta(text=message.content)
    for index, call in enumerate(message.tool_calls):
        yield ToolCallDelta(index=index, id=call.id, name=call.name, args=call.args)
    yield StreamDone(response=response)
