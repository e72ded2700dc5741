"""Reading and writing histories: the JSON contract shared with Go golem (spec §1).

``dump_history`` writes exactly the bytes of Go's ``json.Marshal([]model.Message)``, and
``load_history`` reads what Go's ``json.Unmarshal`` reads. Two paths keep that fast: files
golem or Go wrote decode in one msgspec pass straight into the message structs; anything the
strict fast path declines (foreign spellings, ``null`` fields, invalid UTF-8, broken JSON) is
read by ``_goparse``, which mirrors Go's decoder and explains errors by position.

Tool-call arguments that are not valid JSON (a stream cut mid-arguments) cannot be written by
Go at all. golem persists them as ``{"truncated_args":"<verbatim>"}``, the exact object every
adapter sends on the wire for them, and restores the verbatim text on load (see
docs/adr/0002-persisting-truncated-args.md).
"""

from __future__ import annotations

import base64
import binascii
import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from golem_cli.core import _goparse
from golem_cli.core._goparse import JSONSyntaxError, Node, Obj
from golem_cli.core.args import truncated_wrapper, unwrap_truncated
from golem_cli.core.errors import HistoryFormatError
from golem_cli.core.gojson import compact_json, html_escape_json
from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall

# --- fast path -------------------------------------------------------------------------------


class _DecToolCall(msgspec.Struct, gc=False, rename="camel", forbid_unknown_fields=True):
    id: str = ""
    name: str = ""
    args: msgspec.Raw = msgspec.Raw(b"")
    signature: str = ""


class _DecMessage(msgspec.Struct, gc=False, rename="camel", forbid_unknown_fields=True):
    role: str = ""
    content: str = ""
    parts: list[Part] = []  # the public types decode directly: they forbid unknown keys
    tool_calls: list[_DecToolCall] = []
    tool_call_id: str = ""
    tool_name: str = ""
    failed: bool = False
    thinking: list[ThinkingBlock] = []
    run_id: str = ""
    conversation_id: str = ""


class _EncToolCall(msgspec.Struct, gc=False, rename="camel", omit_defaults=True):
    id: str
    name: str
    args: msgspec.Raw
    signature: str = ""


class _EncMessage(msgspec.Struct, gc=False, rename="camel", omit_defaults=True):
    role: str
    content: str = ""
    parts: list[Part] = []
    tool_calls: list[_EncToolCall] = []
    tool_call_id: str = ""
    tool_name: str = ""
    failed: bool = False
    thinking: list[ThinkingBlock] = []
    run_id: str = ""
    conversation_id: str = ""


_decoder = msgspec.json.Decoder(list[_DecMessage] | None)
_encoder = msgspec.json.Encoder()


def _args_from_raw(raw: msgspec.Raw) -> str:
    text = bytes(raw).decode("utf-8", "surrogateescape")
    if text.startswith('{"truncated_args":'):
        restored = unwrap_truncated(text)
        if restored is not None:
            return restored
    return text


def _tool_calls(calls: list[_DecToolCall]) -> list[ToolCall]:
    return [ToolCall(c.id, c.name, _args_from_raw(c.args), c.signature) for c in calls]


def load_history(data: bytes | bytearray | memoryview | str) -> list[Message]:
    """Read a JSON array of golem messages (``null`` reads as empty, as Go does).

    Unknown keys are ignored and keys match case-insensitively, as in Go. Raises
    ``HistoryFormatError`` naming the position and the problem for anything else, and never
    raises any other exception on bad input.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    elif not isinstance(data, bytes):
        data = bytes(data)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a byte-order mark from a Windows editor; Go would refuse it
    with _no_gc():
        try:
            decoded = _decoder.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return _load_slow(data)
        if not decoded:
            return []
        new = Message  # positional construction in one comprehension: this is the hot loop
        return [
            new(m.role, m.content, m.parts, _tool_calls(m.tool_calls) if m.tool_calls else [],
                m.tool_call_id, m.tool_name, m.failed, m.thinking, m.run_id, m.conversation_id)
            for m in decoded
        ]  # fmt: skip


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: a history is millions of acyclic objects, and
    collections triggered by allocating them would only cost time (a third of a 50 MB load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- slow path: Go semantics -------------------------------------------------------------------

_MESSAGE_FIELDS = {
    "role": "str", "content": "str", "parts": "parts", "toolCalls": "calls",
    "toolCallId": "str", "toolName": "str", "failed": "bool", "thinking": "thinking",
    "runId": "str", "conversationId": "str",
}  # fmt: skip
_CALL_FIELDS = {"id": "str", "name": "str", "args": "raw", "signature": "str"}
_PART_FIELDS = {"kind": "str", "url": "str", "data": "bytes", "mediaType": "str"}
_THINKING_FIELDS = {"text": "str", "signature": "str", "redacted": "str"}


_ITEM_NAMES = {"parts": "part", "calls": "tool call", "thinking": "thinking block"}


class _BindError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _field_index(fields: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    return {k: k for k in fields}, {_goparse.fold_key(k): k for k in fields}


_INDEXES = {id(f): _field_index(f) for f in (_MESSAGE_FIELDS, _CALL_FIELDS, _PART_FIELDS, _THINKING_FIELDS)}


def _bind_object(node: Node, fields: dict[str, str], what: str, text: str) -> dict[str, Any]:
    """Go's struct decoding: exact key first, then case-insensitive; last occurrence wins."""
    if node.value is None:
        return {}
    if not isinstance(node.value, Obj):
        raise _BindError(f"{what} must be an object, found {_goparse.describe(node.value)}", node.start)
    exact, folded = _INDEXES[id(fields)]
    out: dict[str, Any] = {}
    for key, val in node.value.pairs:
        name = exact.get(key) or folded.get(_goparse.fold_key(key))
        if name is None:
            continue
        kind = fields[name]
        where = f'{what}: field "{name}"'
        if kind == "raw":
            out[name] = text[val.start : val.end]
        elif val.value is None:
            out.pop(name, None)  # null leaves the zero value
        elif kind == "str":
            if not isinstance(val.value, str):
                raise _BindError(f"{where} must be a string, found {_goparse.describe(val.value)}", val.start)
            out[name] = val.value
        elif kind == "bool":
            if not isinstance(val.value, bool):
                raise _BindError(f"{where} must be true or false, found {_goparse.describe(val.value)}", val.start)
            out[name] = val.value
        elif kind == "bytes":
            out[name] = _base64(val, where)
        else:
            if not isinstance(val.value, list):
                raise _BindError(f"{where} must be an array, found {_goparse.describe(val.value)}", val.start)
            item_name = _ITEM_NAMES[kind]
            out[name] = [_bind_item(kind, item, f"{what}, {item_name} {i}", text) for i, item in enumerate(val.value)]
    return out


def _base64(val: Node, where: str) -> bytes:
    if not isinstance(val.value, str):
        raise _BindError(f"{where} must be a base64 string, found {_goparse.describe(val.value)}", val.start)
    cleaned = val.value.replace("\r", "").replace("\n", "")  # Go's decoder skips line breaks
    try:
        return base64.b64decode(cleaned.encode("ascii"), validate=True) if cleaned else b""
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise _BindError(f"{where} is not valid padded standard base64", val.start) from None


def _bind_item(kind: str, node: Node, what: str, text: str) -> Any:
    if kind == "parts":
        f = _bind_object(node, _PART_FIELDS, what, text)
        return Part(f.get("kind", ""), f.get("url", ""), f.get("data", b""), f.get("mediaType", ""))
    if kind == "thinking":
        f = _bind_object(node, _THINKING_FIELDS, what, text)
        return ThinkingBlock(f.get("text", ""), f.get("signature", ""), f.get("redacted", ""))
    f = _bind_object(node, _CALL_FIELDS, what, text)
    args = f.get("args", "")
    if args.startswith('{"truncated_args":'):
        args = unwrap_truncated(args) or args
    return ToolCall(f.get("id", ""), f.get("name", ""), args, f.get("signature", ""))


def _load_slow(data: bytes) -> list[Message]:
    text = _goparse.decode_text(data)
    try:
        root = _goparse.parse(text)
        if root.value is None:
            return []
        if not isinstance(root.value, list):
            raise _BindError(
                f"a history must be a JSON array of messages, found {_goparse.describe(root.value)}",
                root.start,
            )
        out = []
        for i, node in enumerate(root.value):
            f = _bind_object(node, _MESSAGE_FIELDS, f"message {i}", text)
            out.append(
                Message(
                    f.get("role", ""),
                    f.get("content", ""),
                    f.get("parts", []),
                    f.get("toolCalls", []),
                    f.get("toolCallId", ""),
                    f.get("toolName", ""),
                    f.get("failed", False),
                    f.get("thinking", []),
                    f.get("runId", ""),
                    f.get("conversationId", ""),
                )  # fmt: skip
            )
        return out
    except (JSONSyntaxError, _BindError) as e:
        line, col = _goparse.line_col(text, e.pos)
        kind = "invalid JSON" if isinstance(e, JSONSyntaxError) else "not a golem history"
        raise HistoryFormatError(f"{kind} at line {line}, column {col}: {e}") from None


# --- dump ------------------------------------------------------------------------------------


def persisted_args(args: str) -> bytes:
    """The bytes a call's args take in a file: Go's compacted raw value, ``null`` for nil,
    and the ``truncated_args`` wrapper for text that is not valid JSON."""
    if args == "":
        return b"null"
    try:
        compacted = compact_json(args.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        compacted = None
    return compacted if compacted is not None else truncated_wrapper(args).encode()


def _to_enc(m: Message) -> _EncMessage:
    return _EncMessage(
        m.role,
        m.content,
        m.parts,
        [_EncToolCall(c.id, c.name, msgspec.Raw(persisted_args(c.args)), c.signature) for c in m.tool_calls],
        m.tool_call_id,
        m.tool_name,
        m.failed,
        m.thinking,
        m.run_id,
        m.conversation_id,
    )


def dump_history(messages: Iterable[Message]) -> bytes:
    """The exact bytes Go's ``json.Marshal([]model.Message)`` writes for ``messages``
    (keys in struct order, omitempty, HTML-safe escapes, base64, compacted raw args)."""
    with _no_gc():
        wire = [_to_enc(m) if m.tool_calls else m for m in messages]
        try:
            encoded = _encoder.encode(wire)
        except UnicodeEncodeError:
            encoded = _encoder.encode([_without_surrogates(m) for m in wire])
        del wire
        return html_escape_json(encoded)


def _without_surrogates(m: Any) -> Any:
    """Go writes invalid UTF-8 as U+FFFD; a Python string can only carry it as lone
    surrogates, which the encoder refuses, so they are replaced first (rare path)."""
    if isinstance(m, str):
        return _goparse._SURROGATE.sub("\ufffd", m)
    if isinstance(m, list):
        return [_without_surrogates(x) for x in m]
    if isinstance(m, msgspec.Struct):
        changes = {f: _without_surrogates(getattr(m, f)) for f in m.__struct_fields__}
        return msgspec.structs.replace(m, **changes)
    return m
